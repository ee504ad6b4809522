/**
 * File primitives for setup: snapshots that remember the exact bytes, mode, owner and link count a
 * read saw; writes through the store's atomic writer that keep all of them; and the typed refusals
 * (read-only file, hard link, permission denied) that name the client and the path.
 *
 * Symlinked configs are read and written at their target so the link itself survives. Run as root
 * against a user's HOME, every file keeps its owner and group, and a file or folder setup creates gets
 * the owner of the folder it is created in.
 */
import { createHash } from "node:crypto";
import { chownSync, lstatSync, mkdirSync, readFileSync, readlinkSync, rmSync, statSync } from "node:fs";
import { dirname, isAbsolute, resolve } from "node:path";
import { executionRefused } from "../domain/errors.ts";
import { removeStaleTemporaries, syncDirectory, writeFileAtomically, type FileOwner } from "../store/atomic-file.ts";

export type FileSnapshot = {
  /** The path the client knows (may be a symlink). */
  path: string;
  /** Where the bytes actually live: the symlink's final target, or `path`. */
  resolvedPath: string;
  /** null when the file does not exist. */
  bytes: Uint8Array | null;
  /** Permission bits; null when the file does not exist. */
  mode: number | null;
  /** Owner and group; null when the file does not exist. */
  owner: FileOwner | null;
  /** Hard links to the file (1 for an ordinary file); 0 when it does not exist. */
  links: number;
};

export const newFileMode = 0o600;

export function sha256Hex(bytes: Uint8Array | string): string {
  return createHash("sha256").update(bytes).digest("hex");
}

/** Who the file is written for, in errors: "Claude Code" or "setup". */
export type Subject = string;

function describe(subject: Subject, path: string): string {
  return subject === "" ? path : `${path} (${subject})`;
}

/** Typed refusal for an operating-system error on `path`; anything else passes through. */
export function fileError(error: unknown, action: "read" | "write" | "create", path: string, subject: Subject): unknown {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  if (code === "EACCES" || code === "EPERM" || code === "EROFS") {
    return executionRefused(`Cannot ${action} ${describe(subject, path)}: permission denied (${code}).`, {
      remediation: [
        `Give your user write access to ${path} and its folder (or run setup as the user who owns them), then rerun flameox setup.`,
      ],
      details: { path, client: subject, errno: code },
      cause: error,
    });
  }
  if (code === "ENOTDIR" || code === "EISDIR" || code === "ELOOP" || code === "ENAMETOOLONG") {
    return executionRefused(`Cannot ${action} ${describe(subject, path)}: ${code}.`, {
      remediation: [`Repair whatever is at ${path} (or one of its folders), then rerun flameox setup.`],
      details: { path, client: subject, errno: code },
      cause: error,
    });
  }
  return error;
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
  throw executionRefused(`Too many levels of symbolic links at ${path}.`, {
    remediation: [`Repair the symlink at ${path}, then rerun flameox setup.`],
    details: { path },
  });
}

export function readSnapshot(path: string, subject: Subject = ""): FileSnapshot {
  const resolvedPath = resolveLinks(path);
  let stats;
  try {
    stats = statSync(resolvedPath);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return { path, resolvedPath, bytes: null, mode: null, owner: null, links: 0 };
    throw fileError(error, "read", path, subject);
  }
  if (!stats.isFile()) {
    throw executionRefused(`MCP client configuration path is not a regular file: ${describe(subject, path)}`, {
      remediation: [`Move whatever is at ${path} aside, then rerun flameox setup.`],
      details: { path, client: subject },
    });
  }
  let bytes: Uint8Array;
  try {
    bytes = new Uint8Array(readFileSync(resolvedPath));
  } catch (error) {
    throw fileError(error, "read", path, subject);
  }
  return { path, resolvedPath, bytes, mode: stats.mode & 0o7777, owner: { uid: stats.uid, gid: stats.gid }, links: stats.nlink };
}

/**
 * Refuses to replace a file whose owner made it read-only, or one hard-linked elsewhere (a rename
 * would split it from its twin). Both are checked before anything is written.
 */
export function assertReplaceable(snapshot: FileSnapshot, subject: Subject): void {
  if (snapshot.bytes === null) return;
  if (snapshot.mode !== null && (snapshot.mode & 0o222) === 0) {
    throw executionRefused(
      `${describe(subject, snapshot.path)} is read-only (mode ${snapshot.mode.toString(8).padStart(4, "0")}); setup does not replace it.`,
      {
        remediation: [`Make it writable (chmod u+w ${snapshot.resolvedPath}) if flameox may edit it, then rerun flameox setup.`],
        details: { path: snapshot.path, client: subject, mode: snapshot.mode },
      },
    );
  }
  if (snapshot.links > 1) {
    throw executionRefused(
      `${describe(subject, snapshot.path)} has ${snapshot.links} hard links; replacing it would split it from the others.`,
      {
        remediation: [`Replace the hard link by a symlink (ln -sf TARGET ${snapshot.path}) or by a copy, then rerun flameox setup.`],
        details: { path: snapshot.path, client: subject, links: snapshot.links },
      },
    );
  }
}

export function sameBytes(left: Uint8Array | null, right: Uint8Array | null): boolean {
  if (left === null || right === null) return left === right;
  return Buffer.from(left.buffer, left.byteOffset, left.byteLength).equals(Buffer.from(right.buffer, right.byteOffset, right.byteLength));
}

/** True when the file still has exactly the bytes, mode and owner of the snapshot. */
export function unchangedSince(snapshot: FileSnapshot, subject: Subject = ""): boolean {
  const now = readSnapshot(snapshot.path, subject);
  return (
    now.resolvedPath === snapshot.resolvedPath &&
    sameBytes(now.bytes, snapshot.bytes) &&
    now.mode === snapshot.mode &&
    now.owner?.uid === snapshot.owner?.uid &&
    now.owner?.gid === snapshot.owner?.gid
  );
}

const privileged = (): boolean => typeof process.getuid === "function" && process.getuid() === 0;

function ownerOf(path: string): FileOwner {
  const stats = statSync(path);
  return { uid: stats.uid, gid: stats.gid };
}

/** The owner a new file in `directory` should get: the folder's, when we may give it. */
export function ownerForNewFile(directory: string): FileOwner | null {
  if (!privileged()) return null;
  return ownerOf(directory);
}

/** mkdir -p; each folder it creates gets the owner of the folder it was created in (when root). */
export function ensureDirectory(directory: string, subject: Subject = ""): void {
  const missing: string[] = [];
  let current = directory;
  for (;;) {
    try {
      statSync(current);
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw fileError(error, "create", directory, subject);
      missing.unshift(current);
      const parent = dirname(current);
      if (parent === current) break;
      current = parent;
    }
  }
  try {
    mkdirSync(directory, { recursive: true });
    if (privileged()) {
      for (const created of missing) {
        const owner = ownerOf(dirname(created));
        chownSync(created, owner.uid, owner.gid);
      }
    }
  } catch (error) {
    throw fileError(error, "create", directory, subject);
  }
}

/**
 * Replaces the file of `snapshot` (at its symlink target) with `bytes`, keeping its mode and owner;
 * a new file gets `newMode` and the owner of its folder. Temporaries of earlier crashed writers of the
 * same file are removed first.
 */
export function writeReplacing(snapshot: FileSnapshot, bytes: Uint8Array | string, subject: Subject, newMode = newFileMode): void {
  const target = snapshot.resolvedPath;
  const directory = dirname(target);
  ensureDirectory(directory, subject);
  removeStaleTemporaries(target);
  const mode = snapshot.mode ?? newMode;
  const owner = snapshot.owner && privileged() ? snapshot.owner : ownerForNewFile(directory);
  try {
    writeFileAtomically(target, bytes, { mode, owner });
  } catch (error) {
    throw fileError(error, "write", snapshot.path, subject);
  }
}

/** Writes a file setup owns (journal, active pointer, records): mode 0600 unless kept from before. */
export function writeOwnFile(path: string, bytes: Uint8Array | string, mode = newFileMode): void {
  writeReplacing(readSnapshot(path), bytes, "setup", mode);
}

export function removeFile(path: string, subject: Subject = ""): void {
  const target = resolveLinks(path);
  try {
    rmSync(target, { force: true });
  } catch (error) {
    throw fileError(error, "write", path, subject);
  }
  syncDirectory(dirname(target));
}
