/**
 * The recovery journal. A file enters it right before setup writes that file (never earlier), so the
 * journal only ever names files setup wrote or was about to write; it is deleted after the last write.
 * If it is still there on the next run the previous run died mid-way: every file that holds exactly
 * the bytes we wrote goes back to its original, one that still holds its original is left alone.
 *
 * Recovery never blocks setup. A file that holds neither (someone edited it after the crash) is left
 * as it is, and a journal that cannot be read is set aside: either way the journal is kept under
 * `setup-journal.<time>.kept.json`, original bytes included, and setup goes on with a warning.
 */
import { existsSync, readFileSync, renameSync } from "node:fs";
import { basename, dirname, isAbsolute, join } from "node:path";
import type { FileOwner } from "../store/atomic-file.ts";
import { releaseAbandonedLock } from "./client-lock.ts";
import { type FileSnapshot, readSnapshot, removeFile, resolveLinks, sha256Hex, writeOwnFile, writeReplacing } from "./files.ts";

export type JournalMutation = {
  path: string;
  resolved_path: string;
  /** base64 of the original bytes; null when the file did not exist. */
  original: string | null;
  original_sha256: string | null;
  /** sha256 of what we write; null when the mutation deletes the file. */
  updated_sha256: string | null;
  mode: number | null;
  owner: FileOwner | null;
};

/** A client's own lock this run holds (see client-lock.ts), so recovery can release it after a crash. */
export type HeldLock = { path: string; mtime_ms: number };

export type Journal = { schema_version: 2; created_at: string; mutations: JournalMutation[]; client_locks?: HeldLock[] };

export type RecoveryOutcome = {
  restored: string[];
  /** Files left as they are: changed by someone else since the interrupted run. */
  left_alone: string[];
  /** Where the journal was kept when it could not be applied completely; null otherwise. */
  kept_journal: string | null;
  warnings: string[];
};

export function mutationFor(snapshot: FileSnapshot, after: Uint8Array | null): JournalMutation {
  return {
    path: snapshot.path,
    resolved_path: snapshot.resolvedPath,
    original: snapshot.bytes === null ? null : Buffer.from(snapshot.bytes).toString("base64"),
    original_sha256: snapshot.bytes === null ? null : sha256Hex(snapshot.bytes),
    updated_sha256: after === null ? null : sha256Hex(after),
    mode: snapshot.mode,
    owner: snapshot.owner,
  };
}

/** The journal of one apply: `arm` right before each write, `disarm` if that write did not happen. */
export class JournalWriter {
  private readonly mutations: JournalMutation[] = [];
  private readonly locks: HeldLock[] = [];
  private readonly createdAt = new Date().toISOString();

  constructor(readonly path: string) {}

  get armed(): readonly JournalMutation[] {
    return this.mutations;
  }

  arm(mutation: JournalMutation): void {
    this.mutations.push(mutation);
    this.flush();
  }

  disarm(mutation: JournalMutation): void {
    const index = this.mutations.lastIndexOf(mutation);
    if (index >= 0) this.mutations.splice(index, 1);
    this.flush();
  }

  holdLock(lock: HeldLock): void {
    this.locks.push(lock);
    this.flush();
  }

  releaseLock(lock: HeldLock): void {
    const index = this.locks.indexOf(lock);
    if (index >= 0) this.locks.splice(index, 1);
    this.flush();
  }

  /** Success: nothing to recover. */
  finish(): void {
    this.mutations.length = 0;
    this.locks.length = 0;
    removeFile(this.path);
  }

  private flush(): void {
    if (this.mutations.length === 0 && this.locks.length === 0) {
      removeFile(this.path);
      return;
    }
    const journal: Journal = { schema_version: 2, created_at: this.createdAt, mutations: this.mutations, client_locks: this.locks };
    writeOwnFile(this.path, `${JSON.stringify(journal, null, 2)}\n`);
  }
}

/**
 * Restores every file named by `mutations` (last first) that holds exactly our update. Returns the
 * paths restored and those that hold neither the original nor our update (left alone).
 */
export function rollBack(mutations: readonly JournalMutation[]): { restored: string[]; leftAlone: string[] } {
  const restored: string[] = [];
  const leftAlone: string[] = [];
  for (const mutation of [...mutations].reverse()) {
    const current = readSnapshot(mutation.path);
    const currentDigest = current.bytes === null ? null : sha256Hex(current.bytes);
    if (currentDigest === mutation.original_sha256) continue;
    if (currentDigest !== mutation.updated_sha256) {
      leftAlone.push(mutation.path);
      continue;
    }
    if (mutation.original === null) removeFile(mutation.path);
    else {
      const restoring: FileSnapshot = { ...current, mode: mutation.mode ?? current.mode, owner: mutation.owner ?? current.owner };
      writeReplacing(restoring, Buffer.from(mutation.original, "base64"), "setup");
    }
    restored.push(mutation.path);
  }
  return { restored, leftAlone };
}

/** Sets the journal aside (never deletes it): its originals may still be needed by hand. */
export function keepJournal(path: string): string {
  const kept = join(dirname(path), `setup-journal.${new Date().toISOString().replace(/[:.]/g, "-")}.kept.json`);
  renameSync(path, kept);
  return kept;
}

/**
 * A journal path is acceptable by its name alone: one of the client config names, or one of setup's
 * own files beside the journal. Recovery also touches only files holding exactly the bytes we wrote.
 */
function acceptable(
  mutation: JournalMutation,
  journalPath: string,
  configNames: ReadonlySet<string>,
  ownNames: ReadonlySet<string>,
): boolean {
  if (typeof mutation?.path !== "string" || !isAbsolute(mutation.path)) return false;
  const name = basename(mutation.path);
  if (dirname(mutation.path) === dirname(journalPath) && ownNames.has(name)) return true;
  return configNames.has(name);
}

function problemOf(journal: unknown, path: string, configNames: ReadonlySet<string>, ownNames: ReadonlySet<string>): string | null {
  const candidate = journal as Journal | null;
  if (candidate?.schema_version !== 2 || !Array.isArray(candidate.mutations)) return "unknown journal schema";
  for (const mutation of candidate.mutations) {
    if (!acceptable(mutation, path, configNames, ownNames)) return `it names a file setup never writes: ${String(mutation?.path)}`;
    if (mutation.original !== null) {
      const bytes = Buffer.from(mutation.original, "base64");
      if (bytes.toString("base64") !== mutation.original || sha256Hex(bytes) !== mutation.original_sha256) {
        return `the saved original of ${mutation.path} is damaged`;
      }
    }
    if (resolveLinks(mutation.path) !== mutation.resolved_path) return `${mutation.path} no longer points at ${mutation.resolved_path}`;
  }
  return null;
}

/** Call with the setup lock held. Never throws for the journal's content: see the module comment. */
export function recoverJournal(path: string, configNames: ReadonlySet<string>, ownNames: ReadonlySet<string>): RecoveryOutcome {
  const outcome: RecoveryOutcome = { restored: [], left_alone: [], kept_journal: null, warnings: [] };
  if (!existsSync(path)) return outcome;
  let journal: unknown;
  try {
    journal = JSON.parse(readFileSync(path, "utf8"));
  } catch {
    journal = null;
  }
  const problem = journal === null ? "it is not valid JSON" : problemOf(journal, path, configNames, ownNames);
  if (problem !== null) {
    outcome.kept_journal = keepJournal(path);
    outcome.warnings.push(
      `An interrupted setup left a journal that cannot be applied (${problem}); it was kept at ${outcome.kept_journal}.`,
    );
    return outcome;
  }
  for (const lock of (journal as Journal).client_locks ?? []) {
    const name = basename(String(lock?.path ?? ""));
    if (name.endsWith(".lock") && configNames.has(name.slice(0, -".lock".length))) releaseAbandonedLock(lock.path, lock.mtime_ms);
  }
  const { restored, leftAlone } = rollBack((journal as Journal).mutations);
  outcome.restored = restored;
  outcome.left_alone = leftAlone;
  if (leftAlone.length > 0) {
    outcome.kept_journal = keepJournal(path);
    outcome.warnings.push(
      `Left as they are, since they changed after the interrupted setup: ${leftAlone.join(", ")}. Their originals are in ${outcome.kept_journal}.`,
    );
  } else {
    removeFile(path);
  }
  return outcome;
}
