/**
 * The setup engine: inspect, plan (a complete preview, nothing written), apply (lock → recover →
 * byte- and mode-exact preflight → runtime install/verify → journal → compare-and-swap atomic writes →
 * active pointer last), and a read-only verify. The CLI and the wizard only call this.
 *
 * Test hook: FLAMEOX_SETUP_CRASH_AFTER_WRITES=N (in the setup environment) kills the process with
 * SIGKILL right after the N-th file write of an apply, leaving the journal behind exactly as a real
 * crash would; the next run must roll everything back.
 */
import { existsSync } from "node:fs";
import { FlameoxError } from "../domain/errors.ts";
import {
  allowedConfigPaths,
  canonicalClients,
  clientDefinition,
  clientIds,
  type ClientDefinition,
  type ClientId,
  type ConfigFormat,
} from "./clients.ts";
import { diffSummary } from "./diff.ts";
import type { SetupEnvironment } from "./environment.ts";
import { decodeConfig, deepEqual, encodeConfig, type ConfigDocument } from "./formats/document.ts";
import { openJsonDocument } from "./formats/json.ts";
import { openTomlDocument } from "./formats/toml.ts";
import { atomicWrite, newFileMode, readSnapshot, removeFile, sha256Hex, unchangedSince, type FileSnapshot } from "./files.ts";
import { deleteJournal, recoverJournal, rollBack, writeJournal, type JournalMutation } from "./journal.ts";
import { acquireSetupLock } from "./lock.ts";
import {
  compareVersions,
  RuntimeStore,
  type ActivePointer,
  type IntegrityExpectation,
  type RuntimeRecord,
  type RuntimeSource,
} from "./runtime-store.ts";
import { checkMcpHandshake, checkRuntimeVersion, verifyRuntime, type RuntimeCheck } from "./runtime-verify.ts";

export type SetupOperation = "configure" | "remove" | "rollback";
export type ClientAction = "create" | "update" | "already_current" | "remove" | "not_configured";
export type ClientState = "absent" | "current" | "drift" | "malformed";

export type ClientStatus = {
  client: ClientId;
  display_name: string;
  path: string;
  detected: boolean;
  state: ClientState;
  problem: string | null;
};

export type SetupState = {
  schema_version: 1;
  data_root: string;
  active: ActivePointer | null;
  installed_versions: string[];
  source: { version: string; kind: "self" | "file"; path: string } | null;
  journal_pending: boolean;
  clients: ClientStatus[];
};

export type ClientPlan = {
  client: ClientId;
  display_name: string;
  path: string;
  resolved_path: string;
  format: ConfigFormat;
  action: ClientAction;
  detected: boolean;
  before_sha256: string | null;
  after_sha256: string | null;
  diff: string[];
};

export type SetupPlan = {
  schema_version: 1;
  operation: SetupOperation;
  version: string | null;
  runtime: {
    action: "install" | "reuse" | "not_required";
    executable: string | null;
    sha256: string | null;
    source: string | null;
  };
  active: { from: string | null; to: string | null };
  clients: ClientPlan[];
  warnings: string[];
};

export type SetupRequest = { operation: SetupOperation; clients: ClientId[]; version?: string | undefined };

type PlannedFile = { client: ClientId; snapshot: FileSnapshot; after: Uint8Array | null };

export type PreparedSetup = {
  plan: SetupPlan;
  files: PlannedFile[];
  activeSnapshot: FileSnapshot;
  activeAfter: Uint8Array | null;
  install: RuntimeSource | null;
  reuse: RuntimeRecord | null;
};

export type SetupReport = {
  schema_version: 1;
  operation: SetupOperation;
  version: string | null;
  executable: string | null;
  runtime_installed: boolean;
  runtime_verified: boolean;
  changed_clients: ClientId[];
  unchanged_clients: ClientId[];
  recovered_files: string[];
};

export type VerifyReport = {
  schema_version: 1;
  operation: "verify";
  ok: boolean;
  version: string | null;
  executable: string | null;
  runtime: { version_ok: boolean; handshake_ok: boolean; tools: number | null; sha256_ok: boolean };
  clients: Array<{ client: ClientId; display_name: string; path: string; state: ClientState }>;
  drifted_clients: ClientId[];
  problems: string[];
};

export type SetupServiceOptions = {
  environment: SetupEnvironment;
  /** What configure installs; null when running from sources without FLAMEOX_SETUP_RUNTIME_SOURCE. */
  source: RuntimeSource | null;
  integrity?: IntegrityExpectation;
  lockTimeoutMs?: number;
  /** Test hook: throw after this many writes (a partial failure, rolled back in-process). */
  failAfterWrites?: number;
  checkRuntime?: (executable: string, version: string) => Promise<RuntimeCheck>;
};

type LoadedConfig = { snapshot: FileSnapshot; text: string; bom: boolean; document: ConfigDocument };

function openDocument(definition: ClientDefinition, path: string, text: string): ConfigDocument {
  const format = definition.format(path);
  return format === "toml" ? openTomlDocument(text, path, definition.section) : openJsonDocument(text, format, path, definition.section);
}

function loadConfig(definition: ClientDefinition, path: string): LoadedConfig {
  const snapshot = readSnapshot(path);
  const decoded = snapshot.bytes === null ? { text: "", bom: false } : decodeConfig(snapshot.bytes, path);
  return { snapshot, text: decoded.text, bom: decoded.bom, document: openDocument(definition, path, decoded.text) };
}

function conflict(message: string, details: Record<string, unknown> = {}): FlameoxError {
  return new FlameoxError({
    code: "REVISION_CONFLICT",
    message,
    remediation: ["Rerun flameox setup to preview the current files again."],
    details,
    retryable: true,
  });
}

export class SetupService {
  readonly store: RuntimeStore;
  private readonly environment: SetupEnvironment;
  private readonly options: SetupServiceOptions;

  constructor(options: SetupServiceOptions) {
    this.options = options;
    this.environment = options.environment;
    this.store = new RuntimeStore(options.environment);
  }

  private allowedPaths(): Set<string> {
    return new Set([...allowedConfigPaths(this.environment), this.store.activePath]);
  }

  private wantedEntry(definition: ClientDefinition, launcher: string): Record<string, unknown> {
    return definition.entry(launcher);
  }

  /** Rolls back a journal left by a crashed run. Returns the restored paths. */
  async recover(): Promise<string[]> {
    if (!existsSync(this.store.journalPath)) return [];
    const lock = await acquireSetupLock(this.store.lockPath, this.options.lockTimeoutMs);
    try {
      return recoverJournal(this.store.journalPath, this.allowedPaths());
    } finally {
      lock.release();
    }
  }

  /** Read-only overview: active runtime, installed versions and each client's state. */
  inspect(): SetupState {
    const active = this.store.readActive();
    const source = this.options.source;
    return {
      schema_version: 1,
      data_root: this.store.root,
      active,
      installed_versions: this.store.installedVersions().map((record) => record.version),
      source: source ? { version: source.version, kind: source.kind, path: source.path } : null,
      journal_pending: existsSync(this.store.journalPath),
      clients: clientIds.map((id) => this.clientStatus(id, active)),
    };
  }

  private clientStatus(id: ClientId, active: ActivePointer | null): ClientStatus {
    const definition = clientDefinition(id);
    const path = definition.configPath(this.environment);
    const base = { client: id, display_name: definition.displayName, path, detected: definition.detect(this.environment) };
    try {
      const { document } = loadConfig(definition, path);
      if (document.entry === undefined) return { ...base, state: "absent", problem: null };
      const current = active !== null && deepEqual(document.entry, this.wantedEntry(definition, active.executable));
      return { ...base, state: current ? "current" : "drift", problem: null };
    } catch (error) {
      return { ...base, state: "malformed", problem: error instanceof Error ? error.message : String(error) };
    }
  }

  configuredClients(state: SetupState = this.inspect()): ClientId[] {
    return state.clients.filter((client) => client.state === "current" || client.state === "drift").map((client) => client.client);
  }

  async plan(request: SetupRequest): Promise<PreparedSetup> {
    const active = this.store.readActive();
    const activeSnapshot = readSnapshot(this.store.activePath);
    const warnings: string[] = [];
    let clients = canonicalClients(request.clients);
    let version: string | null = null;
    let install: RuntimeSource | null = null;
    let reuse: RuntimeRecord | null = null;
    let sha256: string | null = null;

    if (request.operation === "configure") {
      const source = this.options.source;
      if (!source) {
        throw new FlameoxError({
          code: "CAPABILITY_UNAVAILABLE",
          message: "This flameox is running from sources and cannot install itself as a runtime.",
          remediation: ["Run `flameox setup` from the compiled flameox binary (or `npx flameox@latest setup`)."],
        });
      }
      version = source.version;
      if (active && compareVersions(active.version, source.version) > 0 && this.store.readRecord(active.version)) {
        warnings.push(
          `The active runtime ${active.version} is newer than this flameox ${source.version}; keeping ${active.version}. Run \`npx flameox@latest setup\` for the newest launcher.`,
        );
        version = active.version;
      }
      reuse = this.store.readRecord(version);
      if (reuse) sha256 = reuse.sha256;
      else {
        install = source;
        sha256 = sha256Hex(await Bun.file(source.path).bytes());
      }
    } else if (request.operation === "rollback") {
      const installed = this.store.installedVersions();
      version = request.version ?? installed.find((record) => record.version !== active?.version)?.version ?? null;
      if (version === null) {
        throw new FlameoxError({
          code: "CAPABILITY_UNAVAILABLE",
          message: "No other installed flameox runtime to roll back to.",
          remediation: ["Run `flameox setup` from the flameox version you want, which installs it."],
        });
      }
      this.store.executablePath(version);
      reuse = this.store.readRecord(version);
      if (!reuse) {
        throw new FlameoxError({
          code: "CAPABILITY_UNAVAILABLE",
          message: `flameox ${version} is not installed.`,
          remediation: [`Installed versions: ${installed.map((record) => record.version).join(", ") || "none"}.`],
          details: { version, installed: installed.map((record) => record.version) },
        });
      }
      sha256 = reuse.sha256;
      if (clients.length === 0) clients = this.configuredClients();
    }
    if (clients.length === 0 && request.operation !== "rollback") {
      throw new FlameoxError({
        code: "INVALID_ARGUMENTS",
        message: "Select at least one MCP client.",
        remediation: ["Pass a client flag (--claude, --codex, …), --all or --refresh."],
        details: { fields: [{ field: "clients", message: "empty", type: "selection" }] },
      });
    }

    const launcher = version === null ? null : this.store.executablePath(version);
    const files: PlannedFile[] = [];
    const clientPlans: ClientPlan[] = [];
    for (const id of clients) {
      const definition = clientDefinition(id);
      const path = definition.configPath(this.environment);
      const detected = definition.detect(this.environment);
      const loaded = loadConfig(definition, path);
      let action: ClientAction;
      let afterText: string | null = null;
      if (request.operation === "remove") {
        action = loaded.document.entry === undefined ? "not_configured" : "remove";
        if (action === "remove") afterText = loaded.document.withoutEntry();
      } else {
        const wanted = this.wantedEntry(definition, launcher!);
        if (loaded.document.entry !== undefined && deepEqual(loaded.document.entry, wanted)) action = "already_current";
        else {
          action = loaded.snapshot.bytes === null ? "create" : "update";
          afterText = loaded.document.withEntry(wanted);
        }
      }
      const after = afterText === null ? null : encodeConfig(afterText, loaded.bom);
      files.push({ client: id, snapshot: loaded.snapshot, after });
      clientPlans.push({
        client: id,
        display_name: definition.displayName,
        path,
        resolved_path: loaded.snapshot.resolvedPath,
        format: definition.format(path),
        action,
        detected,
        before_sha256: loaded.snapshot.bytes === null ? null : sha256Hex(loaded.snapshot.bytes),
        after_sha256: after === null ? null : sha256Hex(after),
        diff: afterText === null ? [] : diffSummary(loaded.text, afterText),
      });
      if (!detected && request.operation === "configure") {
        warnings.push(`${definition.displayName} was not detected; its config will be created at ${path}.`);
      }
    }

    let activeAfter: Uint8Array | null = null;
    if (request.operation !== "remove" && version !== null && sha256 !== null) {
      const text = this.store.activePointerText({
        schema_version: 1,
        version,
        target: "",
        sha256,
        size: 0,
        source: "self",
        executable: launcher!,
      });
      const bytes = new TextEncoder().encode(text);
      if (activeSnapshot.bytes === null || sha256Hex(activeSnapshot.bytes) !== sha256Hex(bytes)) activeAfter = bytes;
    }

    const plan: SetupPlan = {
      schema_version: 1,
      operation: request.operation,
      version,
      runtime: {
        action: request.operation === "remove" ? "not_required" : install ? "install" : "reuse",
        executable: launcher,
        sha256,
        source: install ? install.path : null,
      },
      active: { from: active?.version ?? null, to: request.operation === "remove" ? (active?.version ?? null) : version },
      clients: clientPlans,
      warnings,
    };
    return { plan, files, activeSnapshot, activeAfter, install, reuse };
  }

  async apply(prepared: PreparedSetup): Promise<SetupReport> {
    const lock = await acquireSetupLock(this.store.lockPath, this.options.lockTimeoutMs);
    try {
      const recovered = recoverJournal(this.store.journalPath, this.allowedPaths());
      const changed = [...prepared.files.map((file) => file.snapshot), prepared.activeSnapshot].filter(
        (snapshot) => !unchangedSince(snapshot),
      );
      if (recovered.length > 0 || changed.length > 0) {
        throw conflict("Client configuration changed after the setup preview; nothing was written.", {
          paths: [...new Set([...recovered, ...changed.map((snapshot) => snapshot.path)])],
        });
      }
      const { plan } = prepared;
      let runtimeInstalled = false;
      let runtimeVerified = false;
      const check = this.options.checkRuntime ?? verifyRuntime;
      if (prepared.install) {
        const outcome = await this.store.install(prepared.install, this.options.integrity ?? {}, check);
        runtimeInstalled = outcome.installed;
        runtimeVerified = true;
        if (outcome.record.sha256 !== plan.runtime.sha256) throw conflict("The runtime changed after the setup preview.");
      } else if (prepared.reuse) {
        const record = this.store.readRecord(prepared.reuse.version);
        if (!record || record.sha256 !== prepared.reuse.sha256)
          throw conflict(`Runtime ${prepared.reuse.version} changed or disappeared after the setup preview.`);
        await this.store.reverify(record, check);
        runtimeVerified = true;
      }

      const writes: Array<{ snapshot: FileSnapshot; after: Uint8Array | null }> = prepared.files
        .filter((file) => file.after !== null)
        .map((file) => ({ snapshot: file.snapshot, after: file.after }));
      if (prepared.activeAfter) writes.push({ snapshot: prepared.activeSnapshot, after: prepared.activeAfter });
      const changedClients = prepared.files.filter((file) => file.after !== null).map((file) => file.client);
      const report: SetupReport = {
        schema_version: 1,
        operation: plan.operation,
        version: plan.version,
        executable: plan.runtime.executable,
        runtime_installed: runtimeInstalled,
        runtime_verified: runtimeVerified,
        changed_clients: changedClients,
        unchanged_clients: prepared.files.filter((file) => file.after === null).map((file) => file.client),
        recovered_files: [],
      };
      if (writes.length === 0) return report;

      const mutations: JournalMutation[] = writes.map(({ snapshot, after }) => ({
        path: snapshot.path,
        resolved_path: snapshot.resolvedPath,
        original: snapshot.bytes === null ? null : Buffer.from(snapshot.bytes).toString("base64"),
        original_sha256: snapshot.bytes === null ? null : sha256Hex(snapshot.bytes),
        updated_sha256: after === null ? null : sha256Hex(after),
        mode: snapshot.mode,
      }));
      writeJournal(this.store.journalPath, mutations);
      const crashAfter = Number(this.environment.env.FLAMEOX_SETUP_CRASH_AFTER_WRITES ?? Number.NaN);
      let written = 0;
      try {
        for (const { snapshot, after } of writes) {
          if (!unchangedSince(snapshot)) throw conflict(`Configuration changed during setup: ${snapshot.path}`, { paths: [snapshot.path] });
          if (after === null) removeFile(snapshot.path);
          else atomicWrite(snapshot.path, after, snapshot.mode ?? newFileMode);
          written += 1;
          if (written === crashAfter) process.kill(process.pid, "SIGKILL");
          if (written === this.options.failAfterWrites) throw new Error(`injected failure after ${written} writes`);
        }
      } catch (error) {
        const outcome = rollBack(mutations);
        if (outcome.conflicts.length > 0) {
          throw new FlameoxError({
            code: "REVISION_CONFLICT",
            message: "One or more configs changed during setup rollback.",
            remediation: [`The journal was kept at ${this.store.journalPath}; repair ${outcome.conflicts.join(", ")} by hand.`],
            details: { paths: outcome.conflicts },
            cause: error,
          });
        }
        deleteJournal(this.store.journalPath);
        throw error;
      }
      deleteJournal(this.store.journalPath);
      return report;
    } finally {
      lock.release();
    }
  }

  /** Read-only: the active runtime works and every configured client launches exactly it. */
  async verify(): Promise<VerifyReport> {
    const problems: string[] = [];
    if (existsSync(this.store.journalPath))
      problems.push(`An interrupted setup left ${this.store.journalPath}; run flameox setup to recover it.`);
    let active: ActivePointer | null = null;
    try {
      active = this.store.readActive();
    } catch (error) {
      problems.push((error as Error).message);
    }
    const runtime = { version_ok: false, handshake_ok: false, tools: null as number | null, sha256_ok: false };
    const clientsReport: VerifyReport["clients"] = [];
    const drifted: ClientId[] = [];
    for (const id of clientIds) {
      const status = this.clientStatus(id, active);
      if (status.state === "absent") continue;
      clientsReport.push({ client: id, display_name: status.display_name, path: status.path, state: status.state });
      if (status.state === "malformed") problems.push(`${status.display_name}: ${status.problem}`);
      if (status.state === "drift") drifted.push(id);
    }
    if (drifted.length > 0) {
      problems.push(`Not launching the active runtime exactly: ${drifted.map((id) => clientDefinition(id).displayName).join(", ")}.`);
    }
    if (!active) {
      problems.push("No active flameox runtime is configured; run flameox setup.");
    } else {
      const record = this.store.readRecord(active.version);
      if (!record) problems.push(`The active runtime ${active.version} is not installed at ${active.executable}.`);
      else {
        runtime.sha256_ok = sha256Hex(await Bun.file(record.executable).bytes()) === record.sha256 && record.sha256 === active.sha256;
        if (!runtime.sha256_ok) problems.push(`The active runtime ${active.executable} does not match its recorded sha256.`);
        try {
          await checkRuntimeVersion(record.executable, active.version);
          runtime.version_ok = true;
          runtime.tools = await checkMcpHandshake(record.executable);
          runtime.handshake_ok = true;
        } catch (error) {
          problems.push((error as Error).message);
        }
      }
    }
    return {
      schema_version: 1,
      operation: "verify",
      ok: problems.length === 0,
      version: active?.version ?? null,
      executable: active?.executable ?? null,
      runtime,
      clients: clientsReport,
      drifted_clients: drifted,
      problems,
    };
  }
}
