import { closeSync, constants, existsSync, fstatSync, lstatSync, openSync, readSync, rmSync, writeSync, fsyncSync } from "node:fs";
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

const chunkSize = 1 << 20;

/**
 * Copies a regular file into this process's staging: hashed while copying, checked against the size
 * cap, its stat identity rechecked after the copy (a file that changed while we read it is refused).
 * `stored_path` is where the object will live once published: artifacts/sha256/ab/<hex>/payload<.ext>.
 */
export function stageArtifactFile(
  workspace: Workspace,
  sourcePath: string,
  options: {
    maxBytes: number;
    payloadExtension?: string;
    /** false: the caller makes the copy durable itself, with syncStagedArtifacts, before it publishes. */
    sync?: boolean;
  },
): StagedArtifact {
  const before = lstatSync(sourcePath);
  if (!before.isFile()) {
    throw executionRefused("Only regular files can be stored as artifacts.", {
      remediation: ["Pass the path of a regular file (not a link, folder or device)."],
    });
  }
  if (before.size > options.maxBytes) throw tooLarge(before.size, options.maxBytes);
  const staging = processStagingPath(workspace, `artifact-${crypto.randomUUID()}`);
  const hasher = new Bun.CryptoHasher("sha256");
  const input = openSync(sourcePath, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0));
  let output: number | undefined;
  let total = 0;
  try {
    const opened = fstatSync(input);
    if (opened.ino !== before.ino || opened.dev !== before.dev) throw changedWhileReading();
    output = openSync(staging, "wx", 0o600);
    const buffer = Buffer.allocUnsafe(chunkSize);
    for (;;) {
      const read = readSync(input, buffer, 0, chunkSize, null);
      if (read === 0) break;
      total += read;
      if (total > options.maxBytes) throw tooLarge(total, options.maxBytes);
      const slice = buffer.subarray(0, read);
      hasher.update(slice);
      let written = 0;
      while (written < read) written += writeSync(output, slice, written, read - written);
    }
    if (options.sync !== false) fsyncSync(output);
    const after = fstatSync(input);
    if (after.size !== total || after.mtimeMs !== before.mtimeMs || after.ino !== before.ino) throw changedWhileReading();
  } catch (error) {
    if (output !== undefined) closeSync(output);
    output = undefined;
    rmSync(staging, { force: true });
    throw error;
  } finally {
    closeSync(input);
    if (output !== undefined) closeSync(output);
  }
  const hex = hasher.digest("hex");
  const extension = options.payloadExtension ?? safeExtension(sourcePath);
  const payloadName = `payload${extension}`;
  crashPoint("artifact_staged");
  return {
    artifact_id: `sha256:${hex}`,
    sha256: hex,
    byte_length: total,
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

function safeExtension(path: string): string {
  const extension = extname(path).toLowerCase();
  return /^\.[a-z0-9]{1,12}$/.test(extension) ? extension : "";
}

const tooLarge = artifactTooLarge;

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
