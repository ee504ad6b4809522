import { randomHex } from "../domain/random.ts";
import {
  accessSync,
  closeSync,
  constants,
  fstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { open } from "node:fs/promises";
import { delimiter, dirname, isAbsolute, join, resolve } from "node:path";
import { type FlameoxError, executionRefused } from "../domain/errors.ts";
import { userCacheFolder } from "./user-cache.ts";

const isWindows = process.platform === "win32";

function hasPathSeparator(name: string): boolean {
  return name.includes("/") || (isWindows && name.includes("\\"));
}

/** Why a candidate file cannot be executed, or null when it is a regular executable file. */
export function executableProblem(path: string): string | null {
  let stats;
  try {
    stats = statSync(path);
  } catch {
    return "does not exist";
  }
  if (!stats.isFile()) return stats.isDirectory() ? "is a directory" : "is not a regular file";
  if (isWindows) return null;
  try {
    accessSync(path, constants.X_OK);
  } catch {
    return "is not executable";
  }
  // root passes X_OK when any execute bit is set; with none set the kernel still refuses.
  if ((stats.mode & 0o111) === 0) return "is not executable";
  return null;
}

function windowsCandidates(base: string): string[] {
  if (!isWindows) return [base];
  const extensions = (process.env.PATHEXT ?? ".COM;.EXE;.BAT;.CMD").split(";").filter(Boolean);
  return [base, ...extensions.map((extension) => `${base}${extension.toLowerCase()}`)];
}

function refused(name: string, reason: string, remediation: string): FlameoxError {
  return executionRefused(`Refusing to run ${JSON.stringify(name)}: ${reason}.`, {
    remediation: [remediation],
    details: { executable: name, reason },
  });
}

/**
 * Resolves an executable the way the child would see it: a name with a path separator is taken
 * relative to `cwd`; a bare name is looked up on `pathValue` (the *child's* PATH). Relative and
 * empty PATH entries are skipped, because they would make the answer depend on the working
 * directory. The result is an absolute path to a regular executable file, or EXECUTION_REFUSED.
 */
export function resolveExecutable(name: string, pathValue: string | undefined, cwd: string = process.cwd()): string {
  if (name.length === 0 || name.includes("\u0000")) {
    throw refused(name, "the executable name is empty or holds a NUL byte", "Name the executable as a non-empty argv[0].");
  }
  if (hasPathSeparator(name) || isAbsolute(name)) {
    const absolute = resolve(cwd, name);
    for (const candidate of windowsCandidates(absolute)) {
      if (executableProblem(candidate) === null) return candidate;
    }
    const problem = executableProblem(absolute) ?? "is not executable";
    throw refused(name, `${absolute} ${problem}`, "Point argv[0] at a regular file with execute permission.");
  }
  const directories = (pathValue ?? "").split(delimiter).filter((entry) => entry.length > 0 && isAbsolute(entry));
  if (directories.length === 0) {
    throw refused(
      name,
      "the child environment has no usable PATH to look it up on",
      "Give an absolute executable path or pass PATH to the child.",
    );
  }
  for (const directory of directories) {
    for (const candidate of windowsCandidates(join(directory, name))) {
      if (executableProblem(candidate) === null) return candidate;
    }
  }
  throw refused(name, "no regular executable file of that name on the child's PATH", "Install the tool, or give its absolute path.");
}

/**
 * Digests already computed, by path, with the file's identity when it was read: in this process, and
 * in a small cache in the user's cache folder shared by flameox processes. A capture digests its
 * interpreter and collector when it plans, again when it rechecks the plan, and the interpreter once
 * more for the environment identity; each CLI capture is a new process, so without the shared cache
 * it would hash megabytes before every collector starts.
 */
const digestMemo = new Map<string, { identity: string; digest: string }>();
/**
 * Only a file whose inode last changed this long before hashing began is remembered by its identity
 * alone (git's "racy" rule): a rewrite within the same timestamp tick as the hash could otherwise keep
 * the same size, mtime and ctime. ctime cannot be set by a process, so any later write changes the identity.
 */
const settledBeforeHashMs = 2_000;
const digestPattern = /^sha256:[0-9a-f]{64}$/;

/** The shared cache's entry for a path: named by the path's digest, holding identity and digest on two lines. */
function cacheEntry(path: string): string {
  return join(userCacheFolder("executable-digests"), new Bun.CryptoHasher("sha256").update(path).digest("hex"));
}

/**
 * A cached digest stands in for hashing, so an entry counts only if nobody else could have written it:
 * the entry and its folder belong to this user and neither is writable by group or others.
 */
function writableOnlyByUs(stat: { uid: number; mode: number }): boolean {
  const uid = process.getuid?.();
  return uid === undefined || (stat.uid === uid && (stat.mode & 0o022) === 0);
}

function cachedDigest(path: string, identity: string): string | null {
  const entry = cacheEntry(path);
  let handle: number | undefined;
  try {
    if (!writableOnlyByUs(statSync(dirname(entry)))) return null;
    handle = openSync(entry, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0));
    if (!writableOnlyByUs(fstatSync(handle))) return null;
    const [recordedIdentity, digest] = readFileSync(handle, "utf8").split("\n");
    return recordedIdentity === identity && digest !== undefined && digestPattern.test(digest) ? digest : null;
  } catch {
    return null;
  } finally {
    if (handle !== undefined) closeSync(handle);
  }
}

/**
 * Best effort: a cache that cannot be written only means hashing again next time. Entries are one small
 * file per distinct executable path and are never pruned: they are bounded by the executables run.
 */
function rememberDigest(path: string, identity: string, digest: string): void {
  digestMemo.set(path, { identity, digest });
  let temporary: string | null = null;
  try {
    const entry = cacheEntry(path);
    mkdirSync(dirname(entry), { recursive: true, mode: 0o700 });
    // A private name, then a rename: a reader sees a whole entry or none.
    temporary = `${entry}.${process.pid}.${randomHex(6)}`;
    writeFileSync(temporary, `${identity}\n${digest}\n`, { mode: 0o600 });
    renameSync(temporary, entry);
  } catch {
    // Read-only or full cache folder; a temporary file written before the failure is not left behind.
    try {
      if (temporary !== null) rmSync(temporary, { force: true });
    } catch {
      // The folder refuses even that; the entry is still unwritten, which is all a reader sees.
    }
  }
}

async function hashFile(path: string): Promise<string> {
  const hasher = new Bun.CryptoHasher("sha256");
  // One reused 1 MiB buffer through a file handle: a read stream's small chunks made hashing an 8 MB
  // collector about four times slower (~35 ms cold), all of it before the collector starts.
  const file = await open(path, "r");
  try {
    const buffer = Buffer.allocUnsafe(1 << 20);
    for (;;) {
      const { bytesRead } = await file.read(buffer, 0, buffer.length, null);
      if (bytesRead === 0) break;
      hasher.update(buffer.subarray(0, bytesRead));
    }
  } finally {
    await file.close();
  }
  return `sha256:${hasher.digest("hex")}`;
}

/** `sha256:<hex>` of an executable file's bytes, streamed; binds a plan to the exact binary. */
export async function executableDigest(path: string): Promise<string> {
  const before = statSync(path, { bigint: true });
  const identity = `${before.dev}:${before.ino}:${before.size}:${before.mtimeNs}:${before.ctimeNs}`;
  const remembered = digestMemo.get(path);
  if (remembered?.identity === identity) return remembered.digest;
  const cached = cachedDigest(path, identity);
  if (cached !== null) {
    digestMemo.set(path, { identity, digest: cached });
    return cached;
  }
  const startedMs = Date.now();
  const digest = await hashFile(path);
  if (Number(before.ctimeNs / 1_000_000n) < startedMs - settledBeforeHashMs) rememberDigest(path, identity, digest);
  return digest;
}
