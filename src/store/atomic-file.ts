import { closeSync, fsyncSync, openSync, renameSync, rmSync, writeSync } from "node:fs";
import { dirname, join } from "node:path";

/** temp file in the same folder → fsync → rename, so a reader sees the old bytes or the new, never half. */
export function writeFileAtomically(path: string, data: string | Uint8Array, mode = 0o644): void {
  const temporary = join(dirname(path), `.${process.pid}.${crypto.randomUUID()}.tmp`);
  try {
    const handle = openSync(temporary, "wx", mode);
    try {
      writeSync(handle, typeof data === "string" ? Buffer.from(data, "utf8") : data);
      fsyncSync(handle);
    } finally {
      closeSync(handle);
    }
    renameSync(temporary, path);
  } catch (error) {
    rmSync(temporary, { force: true });
    throw error;
  }
  syncDirectory(dirname(path));
}

export function syncDirectory(path: string): void {
  try {
    const handle = openSync(path, "r");
    try {
      fsyncSync(handle);
    } finally {
      closeSync(handle);
    }
  } catch {
    // Directory fsync is not possible on every platform (Windows); the rename is still atomic.
  }
}
