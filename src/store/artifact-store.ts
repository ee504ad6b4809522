import {
  chmodSync,
  closeSync,
  constants,
  existsSync,
  fstatSync,
  lstatSync,
  mkdirSync,
  openSync,
  readSync,
  renameSync,
  rmSync,
  writeSync,
  fsyncSync,
} from "node:fs";
import { extname, join } from "node:path";
import { artifactIntegrityFailed, artifactTooLarge, executionRefused, type FlameoxError } from "../domain/errors.ts";
import type { Workspace } from "./workspace.ts";

export type StoredArtifact = {
  artifact_id: string;
  sha256: string;
  byte_length: number;
  payload_name: string;
  /** Relative to the workspace root; never shown to agents. */
  stored_path: string;
  already_present: boolean;
};

const chunkSize = 1 << 20;

/**
 * Copies a regular file into the content-addressed store: hashed while copying into staging,
 * checked against the size cap, its stat identity rechecked after the copy (a file that changed
 * while we read it is refused), then renamed into artifacts/sha256/ab/<hex>/ and made read-only.
 */
export function storeArtifactFile(
  workspace: Workspace,
  sourcePath: string,
  options: { maxBytes: number; payloadExtension?: string },
): StoredArtifact {
  const before = lstatSync(sourcePath);
  if (!before.isFile()) {
    throw executionRefused("Only regular files can be stored as artifacts.", {
      remediation: ["Pass the path of a regular file (not a link, folder or device)."],
    });
  }
  if (before.size > options.maxBytes) throw tooLarge(before.size, options.maxBytes);
  const staging = workspace.path("staging", `artifact-${crypto.randomUUID()}`);
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
    fsyncSync(output);
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
  const folder = join("artifacts", "sha256", hex.slice(0, 2), hex);
  const target = join(folder, payloadName);
  const absoluteFolder = workspace.path(folder);
  const absoluteTarget = workspace.path(target);
  if (existsSync(absoluteTarget)) {
    rmSync(staging, { force: true });
    return {
      artifact_id: `sha256:${hex}`,
      sha256: hex,
      byte_length: total,
      payload_name: payloadName,
      stored_path: target,
      already_present: true,
    };
  }
  mkdirSync(absoluteFolder, { recursive: true });
  chmodSync(staging, 0o444);
  renameSync(staging, absoluteTarget);
  return {
    artifact_id: `sha256:${hex}`,
    sha256: hex,
    byte_length: total,
    payload_name: payloadName,
    stored_path: target,
    already_present: false,
  };
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
