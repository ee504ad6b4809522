/**
 * The setup engine: inspect, plan (a complete preview, nothing written), apply (apply.ts) and a
 * read-only verify. The CLI and the wizard only call this.
 *
 * The active runtime is global, so configure and rollback move every connected client with it, not
 * only the ones named; a client whose config became unreadable is named, never skipped silently.
 */
import { existsSync, readFileSync } from "node:fs";
import { FlameoxError, artifactIntegrityFailed, invalidRequest } from "../domain/errors.ts";
import { applyPrepared } from "./apply.ts";
import { clientState, loadClientFiles, renderChange, type ClientFiles, type FileIntent } from "./client-config.ts";
import { canonicalClients, clientDefinition, clientIds, configFileNames, type ClientId } from "./clients.ts";
import { readConnections } from "./connections.ts";
import { diffSummary } from "./diff.ts";
import type { SetupEnvironment } from "./environment.ts";
import { assertReplaceable, readSnapshot, sha256Hex } from "./files.ts";
import { recoverJournal, type RecoveryOutcome } from "./journal.ts";
import { acquireSetupLock } from "./lock.ts";
import type {
  ClientAction,
  ClientPlan,
  ClientStatus,
  PlannedFile,
  PreparedSetup,
  SetupPlan,
  SetupReport,
  SetupRequest,
  SetupServiceOptions,
  SetupState,
  VerifyReport,
} from "./plan-types.ts";
import { compareVersions, RuntimeStore, type ActivePointer, type RuntimeSource } from "./runtime-store.ts";
import { checkExpected } from "./runtime-source.ts";
import { verifySetup } from "./verify.ts";

export type * from "./plan-types.ts";

function noOtherRuntime(message: string, remediation: string[], details: Record<string, unknown> = {}): FlameoxError {
  return new FlameoxError({ code: "CAPABILITY_UNAVAILABLE", message, remediation, details });
}

type RuntimeChoice = Pick<PreparedSetup, "install" | "reuse"> & {
  version: string | null;
  sha256: string | null;
  action: SetupPlan["runtime"]["action"];
  problem: string | null;
};

export class SetupService {
  readonly store: RuntimeStore;
  private readonly environment: SetupEnvironment;
  private readonly options: SetupServiceOptions;

  constructor(options: SetupServiceOptions) {
    this.options = options;
    this.environment = options.environment;
    this.store = new RuntimeStore(options.environment);
  }

  private ownFileNames(): Set<string> {
    return new Set(["active", "connections.json"]);
  }

  private recoverLocked(): RecoveryOutcome {
    return recoverJournal(this.store.journalPath, configFileNames, this.ownFileNames());
  }

  /** Rolls back a journal left by a crashed run (never throws for its content; see journal.ts). */
  async recover(): Promise<RecoveryOutcome> {
    if (!existsSync(this.store.journalPath)) return { restored: [], left_alone: [], kept_journal: null, warnings: [] };
    const lock = await acquireSetupLock(this.store.lockPath, this.options.lockTimeoutMs);
    try {
      return this.recoverLocked();
    } finally {
      lock.release();
    }
  }

  /** The active pointer, or null with a warning when it is damaged (configure replaces it). */
  private activeOrNull(warnings: string[]): ActivePointer | null {
    try {
      return this.store.readActive();
    } catch (error) {
      warnings.push(`${(error as Error).message} It will be replaced.`);
      return null;
    }
  }

  /** Read-only overview: active runtime, installed versions and each client's state. */
  inspect(): SetupState {
    const active = this.activeOrNull([]);
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
      const files = loadClientFiles(id, this.environment);
      const entry = files.primary.document.entry;
      const tools = entry ? definition.toolsOf(entry) : null;
      return { ...base, state: clientState(id, files, active?.executable ?? null), problem: null, tools };
    } catch (error) {
      return { ...base, state: "malformed", problem: error instanceof Error ? error.message : String(error), tools: null };
    }
  }

  /** Clients with our entry (current or drifted): what --refresh, rollback and configure move. */
  configuredClients(state: SetupState = this.inspect()): ClientId[] {
    return state.clients.filter((client) => client.state === "current" || client.state === "drift").map((client) => client.client);
  }

  /**
   * Connected clients whose config can no longer be read: known from the connection records, or (for
   * clients connected before records existed) from our server key still standing in the raw text.
   */
  unreadableConnectedClients(state: SetupState = this.inspect()): ClientStatus[] {
    const records = readConnections(this.store.connectionsPath).clients;
    const mentionsUs = (path: string): boolean => {
      try {
        return /["'[.]flameox["'\].]/.test(readFileSync(path, "utf8"));
      } catch {
        return false;
      }
    };
    return state.clients.filter(
      (client) => client.state === "malformed" && (records[client.client] !== undefined || mentionsUs(client.path)),
    );
  }

  private chooseRuntime(request: SetupRequest, active: ActivePointer | null, warnings: string[]): RuntimeChoice {
    if (request.operation === "remove")
      return { version: null, sha256: null, action: "not_required", install: null, reuse: null, problem: null };
    if (request.operation === "rollback") return this.chooseRollback(request, active);
    const source = this.options.source;
    if (!source) {
      throw noOtherRuntime("This flameox is running from sources and cannot install itself as a runtime.", [
        "Run `flameox setup` from the compiled flameox binary (or `npx flameox@latest setup`).",
      ]);
    }
    const digest = sha256Hex(readSnapshot(source.path).bytes ?? new Uint8Array());
    // --expect-sha256 / --checksums check this binary whether or not its version is installed.
    checkExpected(source, digest, this.options.integrity ?? {});
    if (active && compareVersions(active.version, source.version) > 0) {
      const health = this.store.health(active.version);
      if (health.state === "intact") {
        warnings.push(
          `The active runtime ${active.version} is newer than this flameox ${source.version}; keeping ${active.version}. Run \`npx flameox@latest setup\` for the newest launcher.`,
        );
        return {
          version: active.version,
          sha256: health.record.sha256,
          action: "reuse",
          install: null,
          reuse: health.record,
          problem: null,
        };
      }
      warnings.push(
        `The active runtime ${active.version} ${health.state === "damaged" ? `is damaged (${health.reason})` : "is gone"}; installing this flameox ${source.version} instead.`,
      );
    }
    const health = this.store.health(source.version);
    if (health.state === "intact" && health.record.sha256 !== digest) {
      throw artifactIntegrityFailed(
        `Runtime ${source.version} is already installed with different bytes (sha256 ${health.record.sha256}, this binary ${digest}).`,
        {
          remediation: [`Move ${this.store.versionDirectory(source.version)} aside if you trust this binary, then rerun flameox setup.`],
          details: { installed: health.record.sha256, source: digest },
        },
      );
    }
    const action = health.state === "intact" ? "reuse" : health.state === "damaged" ? "repair" : "install";
    const problem = health.state === "damaged" ? health.reason : null;
    return { version: source.version, sha256: digest, action, install: source, reuse: null, problem };
  }

  private chooseRollback(request: SetupRequest, active: ActivePointer | null): RuntimeChoice {
    const installed = this.store.installedVersions();
    const version = request.version ?? installed.find((record) => record.version !== active?.version)?.version ?? null;
    if (version === null) {
      throw noOtherRuntime("No other installed flameox runtime to roll back to.", [
        "Run `flameox setup` from the flameox version you want, which installs it.",
      ]);
    }
    this.store.executablePath(version);
    const health = this.store.health(version);
    if (health.state !== "intact") {
      const names = installed.map((record) => record.version).join(", ") || "none";
      throw noOtherRuntime(
        health.state === "damaged"
          ? `flameox ${version} is installed but damaged: ${health.reason}.`
          : `flameox ${version} is not installed.`,
        [
          `Run setup with the flameox ${version} binary (\`npx flameox@${version} setup --refresh --yes\`), which installs or repairs it. Installed: ${names}.`,
        ],
        { version, installed: installed.map((record) => record.version) },
      );
    }
    return { version, sha256: health.record.sha256, action: "reuse", install: null, reuse: health.record, problem: null };
  }

  /** Which clients a request touches, and why each is in it. */
  private selectClients(request: SetupRequest, warnings: string[]): Map<ClientId, "selected" | "connected"> {
    const selection = new Map<ClientId, "selected" | "connected">(canonicalClients(request.clients).map((id) => [id, "selected"]));
    if (request.operation === "remove") return selection;
    const state = this.inspect();
    for (const id of this.configuredClients(state)) if (!selection.has(id)) selection.set(id, "connected");
    const following = [...selection].filter(([, reason]) => reason === "connected").map(([id]) => clientDefinition(id).displayName);
    if (following.length > 0 && request.clients.length > 0) {
      warnings.push(`The active runtime is shared, so these connected clients move with it: ${following.join(", ")}.`);
    }
    for (const client of this.unreadableConnectedClients(state)) {
      if (!selection.has(client.client))
        warnings.push(`${client.display_name} is connected but its config cannot be read; it was not updated: ${client.problem}`);
    }
    return new Map(canonicalClients(selection.keys()).map((id) => [id, selection.get(id)!]));
  }

  async plan(request: SetupRequest): Promise<PreparedSetup> {
    const warnings: string[] = [];
    if (existsSync(this.store.journalPath)) warnings.push("An interrupted setup left a journal; applying rolls it back first.");
    const active = this.activeOrNull(warnings);
    const activeSnapshot = readSnapshot(this.store.activePath);
    const runtime = this.chooseRuntime(request, active, warnings);
    const selection = this.selectClients(request, warnings);
    if (selection.size === 0 && request.operation !== "rollback") {
      throw invalidRequest("Select at least one MCP client.", {
        remediation: ["Pass a client flag (--claude, --codex, …), --all or --refresh."],
        details: { fields: [{ field: "clients", message: "empty", type: "selection" }] },
      });
    }
    const launcher = runtime.version === null ? null : this.store.executablePath(runtime.version);
    const records = readConnections(this.store.connectionsPath).clients;
    const files: PlannedFile[] = [];
    const clientPlans: ClientPlan[] = [];
    // --tools is for the clients that limit tools; when none of those is selected, for all selected.
    const selected = [...selection].filter(([, reason]) => reason === "selected").map(([id]) => id);
    const limited = selected.filter((id) => clientDefinition(id).toolLimit !== undefined);
    const toolTargets = new Set(limited.length > 0 ? limited : selected);
    for (const [id, reason] of selection) {
      const definition = clientDefinition(id);
      const loaded = loadClientFiles(id, this.environment);
      const tools = toolTargets.has(id) && request.tools !== undefined ? request.tools : "keep";
      const intent: FileIntent = launcher === null ? { kind: "disconnect" } : { kind: "connect", launcher, tools };
      const planned = this.planClientFiles(id, loaded, intent);
      files.push(...planned);
      const primary = loaded.primary;
      const change = renderChange(definition, primary, intent, records[id] ?? null);
      const otherChanges = planned.length > (change.kind === "none" ? 0 : 1);
      const after = change.kind === "write" ? change.bytes : null;
      clientPlans.push({
        client: id,
        display_name: definition.displayName,
        path: primary.snapshot.path,
        resolved_path: primary.snapshot.resolvedPath,
        format: definition.format(primary.snapshot.path),
        action: clientAction(intent, change.kind, primary.snapshot.bytes === null, primary.document.entry !== undefined, otherChanges),
        detected: definition.detect(this.environment),
        reason,
        before_sha256: primary.snapshot.bytes === null ? null : sha256Hex(primary.snapshot.bytes),
        after_sha256: after === null ? null : sha256Hex(after),
        diff: change.kind === "none" ? [] : diffSummary(change.before, change.kind === "write" ? change.text : ""),
      });
      if (!clientPlans.at(-1)!.detected && request.operation === "configure" && reason === "selected") {
        warnings.push(`${definition.displayName} was not detected; its config will be created at ${primary.snapshot.path}.`);
      }
      this.warnAboutToolLimit(id, intent, warnings);
    }
    let activeAfter: Uint8Array | null = null;
    if (request.operation !== "remove" && runtime.version !== null && runtime.sha256 !== null) {
      const bytes = new TextEncoder().encode(
        this.store.activePointerText({ version: runtime.version, executable: launcher!, sha256: runtime.sha256 }),
      );
      if (activeSnapshot.bytes === null || sha256Hex(activeSnapshot.bytes) !== sha256Hex(bytes)) activeAfter = bytes;
    }
    const plan: SetupPlan = {
      schema_version: 1,
      operation: request.operation,
      version: runtime.version,
      runtime: {
        action: runtime.action,
        executable: launcher,
        sha256: runtime.sha256,
        source: runtime.install && runtime.action !== "reuse" ? runtime.install.path : null,
        problem: runtime.problem,
      },
      active: { from: active?.version ?? null, to: request.operation === "remove" ? (active?.version ?? null) : runtime.version },
      clients: clientPlans,
      warnings,
    };
    return { plan, files, activeSnapshot, activeAfter, install: runtime.install, reuse: runtime.reuse };
  }

  /** The primary file, plus (for clients reading several names) removal of our entry elsewhere. */
  private planClientFiles(id: ClientId, loaded: ClientFiles, intent: FileIntent): PlannedFile[] {
    const definition = clientDefinition(id);
    const records = readConnections(this.store.connectionsPath).clients;
    const files: PlannedFile[] = [];
    const add = (config: ClientFiles["primary"], fileIntent: FileIntent) => {
      if (renderChange(definition, config, fileIntent, records[id] ?? null).kind === "none") return;
      // A read-only or hard-linked config is refused in the preview, before anything is installed.
      assertReplaceable(config.snapshot, definition.displayName);
      files.push({ client: id, path: config.snapshot.path, intent: fileIntent, snapshot: config.snapshot });
    };
    add(loaded.primary, intent);
    // A stale entry in a lower-precedence file would be merged into ours (OpenCode's legacy config.json).
    for (const other of loaded.others) add(other, { kind: "disconnect" });
    return files;
  }

  private warnAboutToolLimit(id: ClientId, intent: FileIntent, warnings: string[]): void {
    const definition = clientDefinition(id);
    if (definition.toolLimit === undefined || intent.kind !== "connect" || intent.tools !== null) return;
    warnings.push(
      `${definition.displayName} takes at most ${definition.toolLimit} tools; pass --tools FAMILY,… (see \`flameox mcp inspect\`) to expose fewer.`,
    );
  }

  apply(prepared: PreparedSetup): Promise<SetupReport> {
    return applyPrepared({ store: this.store, options: this.options, recover: () => this.recoverLocked() }, prepared);
  }

  /** Read-only: the active runtime works and every configured client launches exactly it. */
  verify(): Promise<VerifyReport> {
    return verifySetup(this.store, (id, active) => this.clientStatus(id, active));
  }
}

function clientAction(intent: FileIntent, change: string, fileAbsent: boolean, hadEntry: boolean, otherChanges: boolean): ClientAction {
  if (intent.kind === "disconnect") return hadEntry || otherChanges ? "remove" : "not_configured";
  if (change === "none") return otherChanges ? "update" : "already_current";
  return fileAbsent ? "create" : "update";
}

export type { RuntimeSource };
