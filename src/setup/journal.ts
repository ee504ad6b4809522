/**
 * The recovery journal: written (and fsynced) before the first config change, deleted after the last.
 * If it is still there on the next run the previous run died mid-way, and every file it names is
 * rolled back to its original bytes. Recovery only ever rolls back, and refuses (keeping the journal)
 * when a file holds neither the original nor our update, or names a path outside the allow-list.
 */
import { existsSync, readFileSync } from "node:fs";
import { FlameoxError } from "../domain/errors.ts";
import { atomicWrite, readSnapshot, removeFile, resolveLinks, sha256Hex } from "./files.ts";

export type JournalMutation = {
  path: string;
  resolved_path: string;
  /** base64 of the original bytes; null when the file did not exist. */
  original: string | null;
  original_sha256: string | null;
  /** sha256 of what we write; null when the mutation deletes the file. */
  updated_sha256: string | null;
  mode: number | null;
};

export type Journal = { schema_version: 1; created_at: string; mutations: JournalMutation[] };

export function writeJournal(path: string, mutations: JournalMutation[]): void {
  const journal: Journal = { schema_version: 1, created_at: new Date().toISOString(), mutations };
  atomicWrite(path, `${JSON.stringify(journal, null, 2)}\n`, 0o600);
}

export function deleteJournal(path: string): void {
  removeFile(path);
}

function unrecoverable(path: string, reason: string, cause?: unknown): FlameoxError {
  return new FlameoxError({
    code: "ARTIFACT_INTEGRITY_FAILED",
    message: `The interrupted setup journal could not be recovered safely: ${reason}`,
    remediation: [
      `The journal was kept at ${path}; it holds the original bytes (base64) of every file setup was changing.`,
      "Repair the named files by hand, then delete the journal and rerun flameox setup.",
    ],
    details: { journal: path, reason },
    cause,
  });
}

function readJournal(path: string, allowed: ReadonlySet<string>): Journal {
  let journal: Journal;
  try {
    journal = JSON.parse(readFileSync(path, "utf8")) as Journal;
  } catch (cause) {
    throw unrecoverable(path, "the journal is not valid JSON", cause);
  }
  if (journal?.schema_version !== 1 || !Array.isArray(journal.mutations)) throw unrecoverable(path, "unknown journal schema");
  for (const mutation of journal.mutations) {
    if (typeof mutation?.path !== "string" || !allowed.has(mutation.path)) {
      throw unrecoverable(path, `the journal names a path setup never writes: ${String(mutation?.path)}`);
    }
    if (mutation.original !== null) {
      const bytes = Buffer.from(mutation.original, "base64");
      if (bytes.toString("base64") !== mutation.original || sha256Hex(bytes) !== mutation.original_sha256) {
        throw unrecoverable(path, `the saved original of ${mutation.path} is damaged`);
      }
    }
    if (resolveLinks(mutation.path) !== mutation.resolved_path) {
      throw unrecoverable(path, `${mutation.path} no longer points at ${mutation.resolved_path}`);
    }
  }
  return journal;
}

/**
 * Restores every file named by `mutations` (last first). Returns the paths restored and the paths that
 * hold neither the original nor our update (left alone).
 */
export function rollBack(mutations: JournalMutation[]): { restored: string[]; conflicts: string[] } {
  const restored: string[] = [];
  const conflicts: string[] = [];
  for (const mutation of [...mutations].reverse()) {
    const current = readSnapshot(mutation.path);
    const currentDigest = current.bytes === null ? null : sha256Hex(current.bytes);
    if (currentDigest === mutation.original_sha256) continue;
    if (currentDigest !== mutation.updated_sha256) {
      conflicts.push(mutation.path);
      continue;
    }
    if (mutation.original === null) removeFile(mutation.path);
    else atomicWrite(mutation.path, Buffer.from(mutation.original, "base64"), mutation.mode ?? 0o600);
    restored.push(mutation.path);
  }
  return { restored, conflicts };
}

/** Call with the setup lock held. Returns the restored paths (empty when there was no journal). */
export function recoverJournal(path: string, allowed: ReadonlySet<string>): string[] {
  if (!existsSync(path)) return [];
  const journal = readJournal(path, allowed);
  let outcome;
  try {
    outcome = rollBack(journal.mutations);
  } catch (cause) {
    throw unrecoverable(path, (cause as Error).message, cause);
  }
  if (outcome.conflicts.length > 0) {
    throw unrecoverable(path, `changed by someone else since the interrupted setup: ${outcome.conflicts.join(", ")}`);
  }
  deleteJournal(path);
  return outcome.restored;
}
