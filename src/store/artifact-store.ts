import {
  closeSync,
  constants,
  existsSync,
  fstatSync,
  fsyncSync,
  lstatSync,
  openSync,
  readSync,
  rmSync,
  type Stats,
  writeSync,
} from "node:fs";
import { rm } from "node:fs/promises";
import { extname, join } from "node:path";
import { artifactIntegrityFailed, artifactTooLarge, executionRefused, type FlameoxError } from "../domain/errors.ts";
import { syncFile } from "./atomic-file.ts";
import { crashPoint } from "./crash-points.ts";
import { processStagingPath } from "./process-staging.ts";
import type { Workspace } from "./workspace.ts";

/** A registered (or being registered) artifact object. */
export type StoredArtifact = {
  artifact_id: string;
  sha256: string;
  byte_length: number;
  payload_name: string;
  /** Relative to the workspace root; never shown to agents. */
  stored_path: string;
  already_present: boolean;
};

/**
 * A complete, hashed copy in this process's staging, not yet an object of the store: extractors read
 * it there, and only the publishing transaction moves it into artifacts/ (artifact-placement.ts),
 * so artifacts/ never holds an object no committed row names except across a crash.
 */
export type StagedArtifact = Omit<StoredArtifact, "already_present"> & {
  /** Absolute path of the staged copy; never shown to agents. */
  staged_path: string;
};

export type StageOptions = {
  maxBytes: number;
  payloadExtension?: string;
  /** false: the caller makes the copy durable itself, with syncStagedArtifacts, before it publishes. */
  sync?: boolean;
};

/**
 * Bytes per read and per hasher call: a chunk that stays in the L2 cache between readSync writing it
 * and the hasher reading it (8 MiB chunks measured ~15% more CPU than 1-2 MiB for the same hash).
 */
const chunkSize = 1 << 20;

/**
 * Copies a regular file into this process's staging and hashes the copy: the kernel copies from the
 * descriptor that was opened and checked (copy_file_range where the OS has it: no write() of the bytes
 * from this process, whose dirty-page cost grew steeply past a few hundred MB, and a reflink on CoW
 * filesystems), at most one byte past the size cap, and the artifact id is then the sha256 of the
 * staged bytes themselves, read back while they are still in the page cache. A file that grew past the cap, or changed in any way while
 * it was copied, is refused and its copy removed. `stored_path` is where the object will live once
 * published: artifacts/sha256/ab/<hex>/payload<.ext>.
 */
export async function stageArtifactFile(workspace: Workspace, sourcePath: string, options: StageOptions): Promise<StagedArtifact> {
  // Awaited here so that a refusal before the copy (a link, a file over the cap) rejects, never throws.
  return await withStagingCopy(workspace, sourcePath, options, "wx+", async (source, output, staging) => {
    // One byte past the cap is enough to know a file grew past it; a copy never goes further.
    const limit = Math.min(options.maxBytes + 1, Number.MAX_SAFE_INTEGER);
    const copied = await Bun.write(Bun.file(output), Bun.file(source.input).slice(0, limit));
    checkUnchanged(source, copied, options.maxBytes);
    if (fstatSync(output).size !== copied) throw changedWhileReading();
    const hex = hashDescriptor(output, copied);
    if (options.sync !== false) fsyncSync(output);
    return staged(sourcePath, staging, hex, copied, options);
  });
}

/**
 * The same guarantees for callers that cannot wait (a quarantine restore, a reduction's small
 * candidate): the bytes pass through this process, hashed as they are written.
 */
export function stageArtifactFileSync(workspace: Workspace, sourcePath: string, options: StageOptions): StagedArtifact {
  return withStagingCopy(workspace, sourcePath, options, "wx", (source, output, staging) => {
    const hasher = new Bun.CryptoHasher("sha256");
    const buffer = Buffer.allocUnsafe(chunkSize);
    let total = 0;
    for (;;) {
      // Never reads more than one byte past the cap, however fast the file grows.
      const read = readSync(source.input, buffer, 0, Math.min(chunkSize, options.maxBytes + 1 - total), null);
      if (read === 0) break;
      total += read;
      const slice = buffer.subarray(0, read);
      hasher.update(slice);
      let written = 0;
      while (written < read) written += writeSync(output, slice, written, read - written);
      if (total > options.maxBytes) break;
    }
    checkUnchanged(source, total, options.maxBytes);
    if (options.sync !== false) fsyncSync(output);
    return staged(sourcePath, staging, hasher.digest("hex"), total, options);
  });
}

/**
 * Runs `copy` from the opened, checked source into a new private file in this process's staging.
 * Whatever `copy` throws (or its promise rejects with) removes that file; both descriptors are closed
 * either way. The staging path is taken before the source is opened, so a failure to make the
 * staging folder cannot leak the source's descriptor.
 */
function withStagingCopy<T>(
  workspace: Workspace,
  sourcePath: string,
  options: StageOptions,
  flags: "wx" | "wx+",
  copy: (source: OpenedSource, output: number, staging: string) => T,
): T {
  const staging = processStagingPath(workspace, `artifact-${crypto.randomUUID()}`);
  const source = openSource(sourcePath, options.maxBytes);
  let output: number | undefined;
  const close = (failed: boolean) => {
    closeSync(source.input);
    if (failed) discardCopy(staging, output);
    else if (output !== undefined) closeSync(output);
  };
  let result: T;
  try {
    output = openSync(staging, flags, 0o600);
    result = copy(source, output, staging);
  } catch (error) {
    close(true);
    throw error;
  }
  if (!(result instanceof Promise)) {
    close(false);
    return result;
  }
  return result.then(
    (value) => {
      close(false);
      return value;
    },
    (error: unknown) => {
      close(true);
      throw error;
    },
  ) as T;
}

type OpenedSource = { input: number; before: Stats };

/**
 * Opens without following a link (O_NOFOLLOW) and without blocking on a FIFO swapped in after the
 * lstat (O_NONBLOCK), then checks that the descriptor is the regular file that was stat'ed.
 */
function openSource(sourcePath: string, maxBytes: number): OpenedSource {
  const before = lstatSync(sourcePath);
  if (!before.isFile()) throw notRegularFile();
  if (before.size > maxBytes) throw artifactTooLarge(before.size, maxBytes);
  let input: number;
  try {
    input = openSync(sourcePath, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0));
  } catch (error) {
    // ELOOP: the path became a symbolic link between the lstat and the open.
    if ((error as NodeJS.ErrnoException).code === "ELOOP") throw notRegularFile();
    throw error;
  }
  try {
    const opened = fstatSync(input);
    if (!opened.isFile() || opened.ino !== before.ino || opened.dev !== before.dev) throw changedWhileReading();
  } catch (error) {
    closeSync(input);
    throw error;
  }
  return { input, before };
}

/** After the copy: past the cap is refused as too large; any other change (size, mtime, identity) as changed. */
function checkUnchanged(source: OpenedSource, copied: number, maxBytes: number): void {
  const after = fstatSync(source.input);
  if (copied > maxBytes || after.size > maxBytes) throw artifactTooLarge(Math.max(copied, after.size), maxBytes);
  const { before } = source;
  if (after.size !== copied || after.mtimeMs !== before.mtimeMs || after.ino !== before.ino || after.dev !== before.dev)
    throw changedWhileReading();
}

/** sha256 of exactly the first `length` bytes of a descriptor; a shorter file is an integrity failure. */
function hashDescriptor(descriptor: number, length: number): string {
  const hasher = new Bun.CryptoHasher("sha256");
  const buffer = Buffer.allocUnsafe(Math.min(chunkSize, Math.max(length, 1)));
  let position = 0;
  while (position < length) {
    const read = readSync(descriptor, buffer, 0, Math.min(buffer.length, length - position), position);
    if (read === 0) throw changedWhileReading();
    hasher.update(buffer.subarray(0, read));
    position += read;
  }
  return hasher.digest("hex");
}

function discardCopy(staging: string, output: number | undefined): void {
  if (output !== undefined) closeSync(output);
  rmSync(staging, { force: true });
}

function staged(sourcePath: string, staging: string, hex: string, byteLength: number, options: StageOptions): StagedArtifact {
  const extension = options.payloadExtension ?? safeExtension(sourcePath);
  const payloadName = `payload${extension}`;
  crashPoint("artifact_staged");
  return {
    artifact_id: `sha256:${hex}`,
    sha256: hex,
    byte_length: byteLength,
    payload_name: payloadName,
    stored_path: join("artifacts", "sha256", hex.slice(0, 2), hex, payloadName),
    staged_path: staging,
  };
}

/**
 * Makes staged copies (staged with `sync: false`) durable, all at once: the kernel overlaps the
 * writebacks, and a capture runs this while it extracts, so no fsync of its outputs waits in line.
 */
export async function syncStagedArtifacts(staged: readonly StagedArtifact[]): Promise<void> {
  await Promise.all(staged.map((artifact) => syncFile(artifact.staged_path)));
}

/** Drops a staged copy that will not be published (already placed copies are gone already). */
export function discardStagedArtifact(staged: StagedArtifact): void {
  rmSync(staged.staged_path, { force: true });
}

/**
 * Drops a staged copy whose bytes are already an object of the store, on the thread pool: unlinking a
 * large file takes the filesystem a while (about 240 ms per GiB on ext4 here), which must not hold the
 * publishing transaction. The copy is this process's own, under a name nothing else uses; one that
 * could not be removed goes with the process's staging folder when it exits, or to recovery.
 */
export function discardStagedArtifactInBackground(staged: StagedArtifact): void {
  void rm(staged.staged_path, { force: true }).catch(() => undefined);
}

function safeExtension(path: string): string {
  const extension = extname(path).toLowerCase();
  return /^\.[a-z0-9]{1,12}$/.test(extension) ? extension : "";
}

function notRegularFile(): FlameoxError {
  return executionRefused("Only regular files can be stored as artifacts.", {
    remediation: ["Pass the path of a regular file (not a link, folder or device)."],
  });
}

function changedWhileReading(): FlameoxError {
  return artifactIntegrityFailed("The file changed while it was being copied into the workspace.", {
    remediation: ["Wait until the producer has finished writing the file, then import it again."],
  });
}

/** Rehashes a stored artifact; used by validate --full. */
export function verifyStoredArtifact(workspace: Workspace, storedPath: string, expectedHex: string): boolean {
  const path = workspace.path(storedPath);
  if (!existsSync(path)) return false;
  const hasher = new Bun.CryptoHasher("sha256");
  const handle = openSync(path, "r");
  try {
    const buffer = Buffer.allocUnsafe(chunkSize);
    for (;;) {
      const read = readSync(handle, buffer, 0, chunkSize, null);
      if (read === 0) break;
      hasher.update(buffer.subarray(0, read));
    }
  } finally {
    closeSync(handle);
  }
  return hasher.digest("hex") === expectedHex;
}
