import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, statSync, writeSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { userCacheFolderOn } from "../domain/user-cache.ts";

/**
 * Loads the DuckDB native binding embedded in the compiled binary.
 *
 * Bun cannot dlopen a library that lives inside its virtual file system, and duckdb.node needs
 * libduckdb beside it ($ORIGIN runpath). So both files are written once into a version-addressed
 * user cache, verified by sha256, and the addon is loaded from there with process.dlopen.
 * Concurrent first starts are safe: each writer uses its own temporary name and renames
 * atomically; a reader only trusts files whose digest matches the one fixed at build time.
 */
export type EmbeddedDuckdbAssets = {
  version: string;
  /** DuckDB's own version string (what `version()` returns), fixed at build time. */
  engineVersion?: string;
  addon: { embeddedPath: string; sha256: string };
  library: { embeddedPath: string; fileName: string; sha256: string };
};

export function duckdbCacheRoot(): string {
  return userCacheFolderOn(
    { platform: process.platform, environment: process.env, homeDirectory: homedir(), temporaryDirectory: tmpdir() },
    "duckdb",
  );
}

function sha256OfFile(path: string): string {
  const hasher = new Bun.CryptoHasher("sha256");
  hasher.update(readFileSync(path));
  return hasher.digest("hex");
}

/** A stamp beside a verified file lets later starts skip rehashing 70 MB while still noticing any change. */
function stampFor(path: string): string {
  const stat = statSync(path);
  return `${stat.size}:${stat.mtimeMs}:${stat.ino}`;
}

function ensureFile(directory: string, fileName: string, embeddedPath: string, expectedSha: string): string {
  const target = join(directory, fileName);
  const stampPath = `${target}.verified`;
  if (existsSync(target)) {
    if (existsSync(stampPath) && readFileSync(stampPath, "utf8") === `${expectedSha}:${stampFor(target)}`) return target;
    if (sha256OfFile(target) === expectedSha) {
      writeAtomically(stampPath, `${expectedSha}:${stampFor(target)}`);
      return target;
    }
  }
  const bytes = readEmbedded(embeddedPath);
  const hasher = new Bun.CryptoHasher("sha256");
  hasher.update(bytes);
  const actual = hasher.digest("hex");
  if (actual !== expectedSha) {
    throw new Error(`Embedded DuckDB file ${fileName} is corrupt (sha256 ${actual}, expected ${expectedSha}).`);
  }
  writeAtomically(target, bytes, 0o755);
  if (sha256OfFile(target) !== expectedSha) throw new Error(`DuckDB cache file ${target} failed verification after writing.`);
  writeAtomically(stampPath, `${expectedSha}:${stampFor(target)}`);
  return target;
}

function readEmbedded(path: string): Uint8Array {
  return readFileSync(path);
}

function writeAtomically(path: string, data: string | Uint8Array, mode = 0o644): void {
  const temporary = `${path}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
  const handle = openSync(temporary, "w", mode);
  try {
    writeSync(handle, typeof data === "string" ? Buffer.from(data) : data);
    fsyncSync(handle);
  } finally {
    closeSync(handle);
  }
  renameSync(temporary, path);
}

/**
 * Writes (first run) or re-verifies (by stamp) both files in the user cache and returns the addon's path,
 * without loading it: what `status` checks, since opening the library costs more than the rest of a command.
 */
export function prepareEmbeddedDuckdb(assets: EmbeddedDuckdbAssets): string {
  const directory = join(duckdbCacheRoot(), `${assets.version}-${assets.addon.sha256.slice(0, 16)}`);
  mkdirSync(directory, { recursive: true, mode: 0o755 });
  // The library first: the addon resolves it through its $ORIGIN runpath as soon as it is opened.
  ensureFile(directory, assets.library.fileName, assets.library.embeddedPath, assets.library.sha256);
  return ensureFile(directory, "duckdb.node", assets.addon.embeddedPath, assets.addon.sha256);
}

export function loadEmbeddedDuckdbBinding(assets: EmbeddedDuckdbAssets): unknown {
  const addonPath = prepareEmbeddedDuckdb(assets);
  const module = { exports: {} as unknown };
  process.dlopen(module, addonPath);
  return module.exports;
}
