/**
 * A client's own lock on its config file, for clients that take one while they rewrite it. Claude Code
 * saves ~/.claude.json under `~/.claude.json.lock`, a folder created with mkdir (the proper-lockfile
 * convention: the holder refreshes its mtime; one untouched for 10 s is stale). Holding it while we
 * read, compare and write means a running Claude Code neither loses our entry nor has its own change
 * overwritten by us.
 */
import { mkdirSync, rmdirSync, statSync } from "node:fs";
import { writeLockTimeout } from "../domain/errors.ts";

/** `held` is false when there was nowhere to create the lock; `mtimeMs` tells our folder from a later holder's. */
export type ClientLock = { path: string; held: boolean; mtimeMs: number; release(): void };

/** proper-lockfile's default: a holder refreshes the folder's mtime every 5 s. */
const staleAfterMs = 10_000;

export async function acquireClientLock(lockPath: string, subject: string, timeoutMs = staleAfterMs + 5_000): Promise<ClientLock> {
  const deadline = Date.now() + timeoutMs;
  for (let attempt = 0; ; attempt += 1) {
    try {
      mkdirSync(lockPath);
      let released = false;
      return {
        path: lockPath,
        held: true,
        mtimeMs: statSync(lockPath).mtimeMs,
        release() {
          if (released) return;
          released = true;
          try {
            rmdirSync(lockPath);
          } catch {
            // Taken over as stale by someone else: nothing of ours is left to remove.
          }
        },
      };
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      // Nowhere to create the lock (no folder yet, or a read-only one): the CAS checks still hold.
      if (code === "ENOENT" || code === "EACCES" || code === "EPERM" || code === "EROFS") {
        return { path: lockPath, held: false, mtimeMs: 0, release() {} };
      }
      if (code !== "EEXIST") throw error;
    }
    try {
      if (Date.now() - statSync(lockPath).mtimeMs > staleAfterMs) {
        rmdirSync(lockPath);
        continue;
      }
    } catch {
      // Released (or removed as stale) between our mkdir and stat: try again at once.
      continue;
    }
    if (Date.now() >= deadline) {
      throw writeLockTimeout(lockPath, `${subject} holds ${lockPath} and has not released it.`, {
        remediation: [`Retry in a moment; if ${subject} is not running, delete the folder ${lockPath}.`],
        details: { path: lockPath, client: subject },
      });
    }
    await Bun.sleep(Math.min(200, 10 * 2 ** Math.min(attempt, 4)));
  }
}

/**
 * Removes a client lock a crashed setup left, but only while it is still our folder (same mtime): once
 * the client has taken the lock over, its folder is newer and stays.
 */
export function releaseAbandonedLock(lockPath: string, mtimeMs: number): boolean {
  try {
    const stats = statSync(lockPath);
    if (!stats.isDirectory() || stats.mtimeMs !== mtimeMs) return false;
    rmdirSync(lockPath);
    return true;
  } catch {
    return false;
  }
}
