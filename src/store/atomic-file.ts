/**
 * The one atomic file writer: a temporary file in the same folder → write → fsync → mode (and owner)
 * → rename → folder fsync, so a reader sees the old bytes or the new, never half. Workspace storage
 * and `flameox setup` both write through it.
 *
 * Temporary names are `.<name>.<pid>.<hex>.tmp`; a process killed mid-write leaves one behind, and
 * `removeStaleTemporaries` deletes those whose writer is gone.
 */
import { randomHex } from "../domain/random.ts";
import { closeSync, fchmodSync, fchownSync, fsyncSync, openSync, readdirSync, renameSync, rmSync, writeSync } from "node:fs";
import { open } from "node:fs/promises";
import { basename, dirname, join } from "node:path";

export type FileOwner = { uid: number; gid: number };

export type AtomicWriteOptions = {
  /** Permission bits of the new file (default 0o644); applied after the umask. */
  mode?: number;
  /** Owner and group to give the new file; only a privileged process can give another user's. */
  owner?: FileOwner | null;
};

const temporaryPattern = /^\.(.+)\.(\d+)\.[0-9a-f]{12}\.tmp$/;

export function temporaryPathFor(path: string): string {
  return join(dirname(path), `.${basename(path)}.${process.pid}.${randomHex(6)}.tmp`);
}

/** Replaces `path` with `data` atomically. A number as third argument is the mode. */
export function writeFileAtomically(path: string, data: string | Uint8Array, options: number | AtomicWriteOptions = {}): void {
  const { mode = 0o644, owner = null } = typeof options === "number" ? { mode: options } : options;
  const temporary = temporaryPathFor(path);
  try {
    const handle = openSync(temporary, "wx", mode);
    try {
      const bytes = typeof data === "string" ? Buffer.from(data, "utf8") : data;
      let offset = 0;
      while (offset < bytes.byteLength) offset += writeSync(handle, bytes, offset, bytes.byteLength - offset);
      fsyncSync(handle);
      // open() applied the umask; the caller's mode is what the file must end with.
      fchmodSync(handle, mode);
      if (owner) fchownSync(handle, owner.uid, owner.gid);
    } finally {
      closeSync(handle);
    }
    renameWithRetry(temporary, path);
  } catch (error) {
    rmSync(temporary, { force: true });
    throw error;
  }
  syncDirectory(dirname(path));
}

function renameWithRetry(from: string, to: string): void {
  for (let attempt = 0; ; attempt += 1) {
    try {
      renameSync(from, to);
      return;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      // Windows: antivirus and indexers hold files briefly.
      if (process.platform !== "win32" || attempt >= 20 || !(code === "EPERM" || code === "EBUSY" || code === "EACCES")) throw error;
      Bun.sleepSync(50 * (attempt + 1));
    }
  }
}

export function syncDirectory(path: string): void {
  if (process.platform === "win32") return;
  try {
    const handle = openSync(path, "r");
    try {
      fsyncSync(handle);
    } finally {
      closeSync(handle);
    }
  } catch {
    // Directory fsync is not possible on every filesystem; the rename is still atomic.
  }
}

function processGone(pid: number): boolean {
  if (pid === process.pid) return false;
  try {
    process.kill(pid, 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ESRCH";
  }
}

/** Deletes temporaries of `path` left by writers that died; returns their names. */
export function removeStaleTemporaries(path: string): string[] {
  let names: string[];
  try {
    names = readdirSync(dirname(path));
  } catch {
    return [];
  }
  const removed: string[] = [];
  for (const name of names) {
    const match = temporaryPattern.exec(name);
    if (!match || match[1] !== basename(path) || !processGone(Number(match[2]))) continue;
    rmSync(join(dirname(path), name), { force: true });
    removed.push(name);
  }
  return removed;
}

/** Makes one written file's data durable without blocking the thread (its directory entry is syncDirectory's job). */
export async function syncFile(path: string): Promise<void> {
  const handle = await open(path, "r");
  try {
    await handle.datasync();
  } finally {
    await handle.close();
  }
}
