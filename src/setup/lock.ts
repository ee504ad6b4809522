/**
 * The user-local setup lock: a file created with O_EXCL that names its owner. A lock whose owner
 * process on this host is gone is stale and taken over.
 */
import { closeSync, openSync, readFileSync, rmSync, writeSync } from "node:fs";
import { hostname } from "node:os";
import { dirname } from "node:path";
import { writeLockTimeout } from "../domain/errors.ts";
import { ensureDirectory, fileError } from "./files.ts";

export type SetupLock = { path: string; release(): void };

function ownerAlive(path: string): boolean {
  try {
    const owner = JSON.parse(readFileSync(path, "utf8")) as { pid?: number; host?: string };
    if (owner.host !== hostname() || typeof owner.pid !== "number") return true;
    process.kill(owner.pid, 0);
    return true;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ESRCH") return false;
    if (code === "EPERM") return true;
    // Unreadable or half-written lock: treat as held; its writer finishes within milliseconds.
    return code !== "ENOENT";
  }
}

export async function acquireSetupLock(path: string, timeoutMs = 10_000): Promise<SetupLock> {
  ensureDirectory(dirname(path), "setup");
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const descriptor = openSync(path, "wx", 0o600);
      try {
        writeSync(descriptor, JSON.stringify({ pid: process.pid, host: hostname(), since: new Date().toISOString() }));
      } finally {
        closeSync(descriptor);
      }
      let released = false;
      return {
        path,
        release() {
          if (released) return;
          released = true;
          rmSync(path, { force: true });
        },
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw fileError(error, "create", path, "setup");
    }
    if (!ownerAlive(path)) {
      rmSync(path, { force: true });
      continue;
    }
    if (Date.now() >= deadline) {
      throw writeLockTimeout(path, "Another flameox setup operation holds the setup lock.", {
        remediation: ["Wait for the other flameox setup to finish, then retry.", `If none is running, delete ${path}.`],
        details: { path },
      });
    }
    await Bun.sleep(100);
  }
}
