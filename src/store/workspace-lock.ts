import { Database } from "bun:sqlite";
import { writeLockTimeout } from "../domain/errors.ts";
import type { Workspace } from "./workspace.ts";

const inProcess = new Map<string, Promise<void>>();

/**
 * The workspace lock for multi-step, async writes (flameox.toml edits). Across processes it is an
 * IMMEDIATE transaction on a dedicated SQLite file, which the OS releases if the holder dies; within
 * a process a promise chain serializes callers so they never share that transaction.
 */
export async function withWorkspaceLock<T>(workspace: Workspace, body: () => Promise<T>, options: { timeoutMs?: number } = {}): Promise<T> {
  const key = workspace.root;
  const previous = inProcess.get(key) ?? Promise.resolve();
  let release!: () => void;
  const mine = new Promise<void>((resolve) => {
    release = resolve;
  });
  const chained = previous.then(() => mine);
  inProcess.set(key, chained);
  await previous;
  const database = new Database(workspace.path("lock.sqlite"), { create: true });
  try {
    database.exec(`PRAGMA busy_timeout = ${options.timeoutMs ?? 10_000}`);
    try {
      database.exec("BEGIN IMMEDIATE");
    } catch (error) {
      throw writeLockTimeout("workspace", "Another flameox process holds the workspace lock.", {
        details: { timeout_seconds: (options.timeoutMs ?? 10_000) / 1000 },
        cause: error,
      });
    }
    try {
      return await body();
    } finally {
      database.exec("ROLLBACK");
    }
  } finally {
    database.close();
    release();
    if (inProcess.get(key) === chained) inProcess.delete(key);
  }
}
