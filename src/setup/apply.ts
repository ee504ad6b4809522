/**
 * Applying a setup plan, under the setup lock:
 *   recover a crashed run → check the active pointer is as previewed → install, reuse or repair the
 *   runtime → for each config file: (client's own lock) read → render → journal → compare → write,
 *   retried when the file changed under us → connection records → active pointer last.
 * Any failure rolls back what this run wrote and clears the journal; a config that changed between
 * our read and our write is read again (a bounded number of times) instead of failing the run.
 *
 * Test hook: FLAMEOX_SETUP_CRASH_AFTER_WRITES=N (in the setup environment) kills the process with
 * SIGKILL right after the N-th file write, leaving the journal behind exactly as a real crash would.
 */
import { type FlameoxError, staleInput } from "../domain/errors.ts";
import { acquireClientLock } from "./client-lock.ts";
import { parseSnapshot, renderChange } from "./client-config.ts";
import { clientDefinition, type ClientId } from "./clients.ts";
import { connectionsText, readConnections, type Connections } from "./connections.ts";
import type { SectionOrigin } from "./formats/document.ts";
import { assertReplaceable, readSnapshot, removeFile, unchangedSince, writeReplacing, type FileSnapshot } from "./files.ts";
import { JournalWriter, keepJournal, mutationFor, rollBack, type RecoveryOutcome } from "./journal.ts";
import { acquireSetupLock } from "./lock.ts";
import type { PlannedFile, PreparedSetup, SetupReport, SetupServiceOptions } from "./plan-types.ts";
import type { RuntimeStore } from "./runtime-store.ts";
import { verifyRuntime } from "./runtime-verify.ts";

/** How often a config that keeps changing under us is read again before giving up. */
export const maxWriteAttempts = 12;

/**
 * The pause before attempt `attempt + 1`: growing, capped, and jittered so that a client rewriting its
 * config on a fixed period (Claude Code does, several times a second) cannot stay in phase with our
 * read-compare-write window for every attempt. About 1.5 s in all before the typed conflict.
 */
export function writeRetryDelayMs(attempt: number, random: () => number = Math.random): number {
  const ceiling = Math.min(250, 5 * 2 ** (attempt - 1));
  return Math.round(ceiling * (0.5 + random() / 2));
}

export type ApplyContext = {
  store: RuntimeStore;
  options: SetupServiceOptions;
  recover(): RecoveryOutcome;
};

export function conflict(message: string, details: Record<string, unknown> = {}, remediation?: string[]): FlameoxError {
  return staleInput(message, { remediation: remediation ?? ["Run the same flameox setup command again."], details, retryable: true });
}

class WriteCounter {
  private written = 0;
  constructor(private readonly options: SetupServiceOptions) {}

  wrote(): void {
    this.written += 1;
    const crashAfter = Number(this.options.environment.env.FLAMEOX_SETUP_CRASH_AFTER_WRITES ?? Number.NaN);
    if (this.written === crashAfter) process.kill(process.pid, "SIGKILL");
    if (this.written === this.options.failAfterWrites) throw new Error(`injected failure after ${this.written} writes`);
  }
}

type Written = { written: boolean; origin: SectionOrigin | null };

async function writeConfig(
  file: PlannedFile,
  connections: Connections,
  journal: JournalWriter,
  counter: WriteCounter,
  options: SetupServiceOptions,
): Promise<Written> {
  const definition = clientDefinition(file.client);
  const subject = definition.displayName;
  const lock = definition.lockPath ? await acquireClientLock(definition.lockPath(file.path), subject) : null;
  const held = lock?.held ? { path: lock.path, mtime_ms: lock.mtimeMs } : null;
  if (held) journal.holdLock(held);
  try {
    for (let attempt = 1; attempt <= maxWriteAttempts; attempt += 1) {
      const snapshot = readSnapshot(file.path, subject);
      const change = renderChange(definition, parseSnapshot(definition, snapshot), file.intent, connections.clients[file.client] ?? null);
      if (change.kind === "none") return { written: false, origin: null };
      assertReplaceable(snapshot, subject);
      const after = change.kind === "write" ? change.bytes : null;
      const mutation = mutationFor(snapshot, after);
      journal.arm(mutation);
      options.beforeConfigWrite?.(file.client, file.path, attempt);
      // Compare-and-swap: someone rewrote it since our read; read it again and render again.
      if (!unchangedSince(snapshot, subject)) {
        journal.disarm(mutation);
        if (attempt < maxWriteAttempts) await Bun.sleep(writeRetryDelayMs(attempt));
        continue;
      }
      if (after === null) removeFile(file.path, subject);
      else writeReplacing(snapshot, after, subject);
      counter.wrote();
      return { written: true, origin: change.kind === "write" ? change.origin : null };
    }
  } finally {
    lock?.release();
    if (held) journal.releaseLock(held);
  }
  throw conflict(
    `${subject}'s config ${file.path} kept changing while setup wrote it (${maxWriteAttempts} attempts); what this run wrote was rolled back.`,
    { client: file.client, path: file.path, attempts: maxWriteAttempts },
    [`Run the same flameox setup command again; if it keeps happening, quit ${subject} first.`],
  );
}

function writeOwn(snapshot: FileSnapshot, bytes: Uint8Array, journal: JournalWriter, counter: WriteCounter): void {
  journal.arm(mutationFor(snapshot, bytes));
  if (!unchangedSince(snapshot)) throw conflict(`${snapshot.path} changed during setup.`, { path: snapshot.path });
  writeReplacing(snapshot, bytes, "setup");
  counter.wrote();
}

async function prepareRuntime(context: ApplyContext, prepared: PreparedSetup) {
  const { store, options } = context;
  const check = options.checkRuntime ?? verifyRuntime;
  const { plan } = prepared;
  if (prepared.install) {
    const outcome = await store.install(prepared.install, options.integrity ?? {}, check);
    if (outcome.record.sha256 !== plan.runtime.sha256) throw conflict("The runtime changed after the setup preview.");
    return { installed: outcome.installed, repaired: outcome.repaired, quarantined: outcome.quarantined, verified: true };
  }
  if (prepared.reuse) {
    const record = store.readRecord(prepared.reuse.version);
    if (!record || record.sha256 !== prepared.reuse.sha256)
      throw conflict(`Runtime ${prepared.reuse.version} changed or disappeared after the setup preview.`);
    await store.reverify(record, check);
    return { installed: false, repaired: false, quarantined: null, verified: true };
  }
  return { installed: false, repaired: false, quarantined: null, verified: false };
}

function updatedConnections(
  connections: Connections,
  prepared: PreparedSetup,
  results: Map<PlannedFile, Written>,
  now: string,
): Connections | null {
  const next: Connections = { schema_version: 1, clients: { ...connections.clients } };
  let changed = false;
  for (const file of prepared.files) {
    const result = results.get(file);
    if (!result?.written) continue;
    if (file.intent.kind === "disconnect") {
      if (next.clients[file.client]?.path === file.path) {
        delete next.clients[file.client];
        changed = true;
      }
    } else if (result.origin) {
      next.clients[file.client] = { path: file.path, origin: result.origin, connected_at: now };
      changed = true;
    }
  }
  return changed ? next : null;
}

export async function applyPrepared(context: ApplyContext, prepared: PreparedSetup): Promise<SetupReport> {
  const { store, options } = context;
  const lock = await acquireSetupLock(store.lockPath, options.lockTimeoutMs);
  try {
    const recovery = context.recover();
    if (!unchangedSince(prepared.activeSnapshot)) {
      throw conflict("Another flameox setup changed the active runtime after this preview; nothing was written.", {
        paths: [prepared.activeSnapshot.path],
      });
    }
    const runtime = await prepareRuntime(context, prepared);
    const { plan } = prepared;
    const connections = readConnections(store.connectionsPath);
    const journal = new JournalWriter(store.journalPath);
    const counter = new WriteCounter(options);
    const results = new Map<PlannedFile, Written>();
    try {
      for (const file of prepared.files) results.set(file, await writeConfig(file, connections, journal, counter, options));
      const records = updatedConnections(connections, prepared, results, new Date().toISOString());
      if (records) writeOwn(readSnapshot(store.connectionsPath), new TextEncoder().encode(connectionsText(records)), journal, counter);
      if (prepared.activeAfter) writeOwn(prepared.activeSnapshot, prepared.activeAfter, journal, counter);
    } catch (error) {
      const outcome = rollBack(journal.armed);
      if (outcome.leftAlone.length > 0) {
        const kept = keepJournal(store.journalPath);
        throw staleInput(
          `Setup failed and could not undo its change to ${outcome.leftAlone.join(", ")}: someone else changed it meanwhile.`,
          {
            remediation: [`The originals are in ${kept}; compare them with ${outcome.leftAlone.join(", ")} by hand.`],
            details: { paths: outcome.leftAlone, journal: kept },
            cause: error,
          },
        );
      }
      journal.finish();
      throw error;
    }
    journal.finish();
    const changedClients = new Set<ClientId>();
    for (const [file, result] of results) if (result.written) changedClients.add(file.client);
    const clients = plan.clients.map((client) => client.client);
    return {
      schema_version: 1,
      operation: plan.operation,
      version: plan.version,
      executable: plan.runtime.executable,
      runtime_installed: runtime.installed,
      runtime_repaired: runtime.repaired,
      quarantined: runtime.quarantined,
      runtime_verified: runtime.verified,
      changed_clients: clients.filter((client) => changedClients.has(client)),
      unchanged_clients: clients.filter((client) => !changedClients.has(client)),
      recovered_files: recovery.restored,
      warnings: [...plan.warnings, ...recovery.warnings],
    };
  } finally {
    lock.release();
  }
}
