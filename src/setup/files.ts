/**
 * File primitives for setup: snapshots that remember the exact bytes and mode a preview read, and
 * atomic replacement (temp file in the same folder, fsync, rename, folder fsync) that keeps the mode.
 * Symlinked configs are read and written at their target so the link itself survives.
 */
import { createHash, randomBytes } from "node:crypto";
import {
  chmodSync,
  closeSync,
  fsyncSync,
  lstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  readlinkSync,
  renameSync,
  rmSync,
  statSync,
  writeSync,
} from "node:fs";
import { basename, dirname, isAbsolute, join, resolve } from "node:path";
import { FlameoxError } from "../domain/errors.ts";

export type FileSnapshot = {
  /** The path the client knows (may be a symlink). */
  path: string;
  /** Where the bytes actually live: the symlink's final target, or `path`. */
  resolvedPath: string;
  /** null when the file does not exist. */
  bytes: Uint8Array | null;
  /** Permission bits; null when the file does not exist. */
  mode: number | null;
};

export const newFileMode = 0o600;

export function sha256Hex(bytes: Uint8Array | string): string {
  return createHash("sha256").update(bytes).digest("hex");
}

/** Follows a chain of symlinks without requiring the final target to exist. */
export function resolveLinks(path: string): string {
  let current = path;
  for (let hops = 0; hops < 40; hops += 1) {
    let stats;
    try {
      stats = lstatSync(current);
    } catch {
      return current;
    }
    if (!stats.isSymbolicLink()) return current;
    const target = readlinkSync(current);
    current = isAbsolute(target) ? target : resolve(dirname(current), target);
  }
  throw new FlameoxError({
    code: "EXECUTION_REFUSED",
    message: `Too many levels of symbolic links at ${path}.`,
    remediation: [`Repair the symlink at ${path}, then rerun flameox setup.`],
  });
}

export function readSnapshot(path: string): FileSnapshot {
  const resolvedPath = resolveLinks(path);
  let stats;
  try {
    stats = statSync(resolvedPath);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return { path, resolvedPath, bytes: null, mode: null };
    throw unreadable(path, error);
  }
  if (!stats.isFile()) {
    throw new FlameoxError({
      code: "EXECUTION_REFUSED",
      message: `MCP client configuration path is not a regular file: ${path}`,
      remediation: [`Move whatever is at ${path} aside, then rerun flameox setup.`],
      details: { path },
    });
  }
  try {
    return { path, resolvedPath, bytes: new Uint8Array(readFileSync(resolvedPath)), mode: stats.mode & 0o7777 };
  } catch (error) {
    throw unreadable(path, error);
  }
}

function unreadable(path: string, cause: unknown): FlameoxError {
  return new FlameoxError({
    code: "EXECUTION_REFUSED",
    message: `Cannot read ${path}: ${(cause as Error).message}`,
    remediation: [`Make ${path} readable by you, then rerun flameox setup.`],
    details: { path },
    cause,
  });
}

export function sameBytes(left: Uint8Array | null, right: Uint8Array | null): boolean {
  if (left === null || right === null) return left === right;
  return Buffer.from(left.buffer, left.byteOffset, left.byteLength).equals(Buffer.from(right.buffer, right.byteOffset, right.byteLength));
}

/** True when the file still has exactly the bytes and mode of the snapshot. */
export function unchangedSince(snapshot: FileSnapshot): boolean {
  const now = readSnapshot(snapshot.path);
  return now.resolvedPath === snapshot.resolvedPath && sameBytes(now.bytes, snapshot.bytes) && now.mode === snapshot.mode;
}

function fsyncDirectory(directory: string): void {
  if (process.platform === "win32") return;
  try {
    const descriptor = openSync(directory, "r");
    try {
      fsyncSync(descriptor);
    } finally {
      closeSync(descriptor);
    }
  } catch {
    // Some filesystems refuse to fsync a folder; the rename is still atomic.
  }
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

/** Replaces `path` (at its symlink target) with `bytes` atomically, keeping `mode`. */
export function atomicWrite(path: string, bytes: Uint8Array | string, mode: number): void {
  const target = resolveLinks(path);
  const directory = dirname(target);
  mkdirSync(directory, { recursive: true });
  const temporary = join(directory, `.${basename(target)}.${randomBytes(6).toString("hex")}.tmp`);
  try {
    const descriptor = openSync(temporary, "wx", mode);
    try {
      const data = typeof bytes === "string" ? Buffer.from(bytes, "utf8") : bytes;
      let offset = 0;
      while (offset < data.byteLength) offset += writeSync(descriptor, data, offset, data.byteLength - offset);
      fsyncSync(descriptor);
    } finally {
      closeSync(descriptor);
    }
    chmodSync(temporary, mode);
    renameWithRetry(temporary, target);
  } catch (error) {
    rmSync(temporary, { force: true });
    throw error;
  }
  fsyncDirectory(directory);
}

export function removeFile(path: string): void {
  const target = resolveLinks(path);
  rmSync(target, { force: true });
  fsyncDirectory(dirname(target));
}
