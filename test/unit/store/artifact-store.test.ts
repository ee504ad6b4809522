import { describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import {
  appendFileSync,
  closeSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  truncateSync,
  utimesSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { dirname, join } from "node:path";
import { type StagedArtifact, stageArtifactFile, stageArtifactFileSync } from "../../../src/store/artifact-store.ts";
import { processStagingPath } from "../../../src/store/process-staging.ts";
import { initializeWorkspace, type Workspace } from "../../../src/store/workspace.ts";
import { seededBytes } from "../../support/bytes.ts";
import { temporaryFolder } from "../../support/temporary-folders.ts";

function workspace() {
  const root = temporaryFolder("artifact-store");
  const { workspace } = initializeWorkspace({ projectRoot: root, workspaceRoot: join(root, ".diagnostics") }, "");
  return { root, workspace, cleanup: () => rmSync(root, { recursive: true, force: true }) };
}

/** The staged copies in this process's staging folder for `space`. */
function stagedCopies(space: Workspace): string[] {
  return readdirSync(dirname(processStagingPath(space, "probe"))).filter((name) => name.startsWith("artifact-"));
}

/**
 * A source whose mtime is an hour old: any write after staging starts then moves the mtime, whatever the
 * clock's granularity, so "changed" is observable without racing the clock.
 */
function aged(path: string, bytes: Uint8Array): void {
  writeFileSync(path, bytes);
  const hourAgo = new Date(Date.now() - 3_600_000);
  utimesSync(path, hourAgo, hourAgo);
}

function expectExactCopy(staged: StagedArtifact, source: Buffer): void {
  const stored = readFileSync(staged.staged_path);
  expect(stored.equals(source)).toBe(true);
  const independent = createHash("sha256").update(stored).digest("hex");
  expect(staged.sha256).toBe(independent);
  expect(staged.artifact_id).toBe(`sha256:${independent}`);
  expect(staged.byte_length).toBe(source.length);
}

describe("artifact staging", () => {
  // 1 MiB is the read and hashing chunk: these end inside the first chunk, on a boundary, just past one and
  // many chunks later, and leave nothing to hash at all.
  const sizes = [0, 1, 4097, 1 << 20, (1 << 20) + 1, (20 << 20) + 5];

  test("the artifact id is the sha256 of exactly the staged bytes, at every size and by both stagers", async () => {
    const { root, workspace: space, cleanup } = workspace();
    try {
      for (const size of sizes) {
        const path = join(root, `source-${size}.bin`);
        const bytes = seededBytes(size);
        writeFileSync(path, bytes);
        const copied = await stageArtifactFile(space, path, { maxBytes: 64 << 20 });
        expectExactCopy(copied, bytes);
        const written = stageArtifactFileSync(space, path, { maxBytes: 64 << 20, sync: false });
        expectExactCopy(written, bytes);
        expect(written.artifact_id).toBe(copied.artifact_id);
        expect(copied.staged_path).not.toBe(written.staged_path);
        expect(copied.stored_path).toBe(join("artifacts", "sha256", copied.sha256.slice(0, 2), copied.sha256, "payload.bin"));
      }
    } finally {
      cleanup();
    }
  });

  test("a file at the cap is staged; one byte over it is refused before anything is copied", async () => {
    const { root, workspace: space, cleanup } = workspace();
    try {
      const path = join(root, "capped.bin");
      const bytes = seededBytes(1 << 20);
      writeFileSync(path, bytes);
      expectExactCopy(await stageArtifactFile(space, path, { maxBytes: 1 << 20 }), bytes);
      expectExactCopy(stageArtifactFileSync(space, path, { maxBytes: 1 << 20 }), bytes);
      const before = stagedCopies(space).length;
      await expect(stageArtifactFile(space, path, { maxBytes: (1 << 20) - 1 })).rejects.toMatchObject({ code: "ARTIFACT_TOO_LARGE" });
      expect(() => stageArtifactFileSync(space, path, { maxBytes: (1 << 20) - 1 })).toThrow(
        expect.objectContaining({ code: "ARTIFACT_TOO_LARGE" }),
      );
      expect(stagedCopies(space).length).toBe(before);
    } finally {
      cleanup();
    }
  });

  test("a file that grows past the cap after it was opened is refused as too large and leaves no staged copy", async () => {
    const { root, workspace: space, cleanup } = workspace();
    try {
      const path = join(root, "growing.bin");
      aged(path, seededBytes(16 << 20));
      // The call opens and checks the file before it returns its promise; the file grows while the copy runs.
      const staging = stageArtifactFile(space, path, { maxBytes: (16 << 20) + 10 });
      appendFileSync(path, Buffer.alloc(32 << 20, 1));
      const refusal = await staging.then(
        () => null,
        (error: unknown) => error,
      );
      // Whether the copy saw the old size or the grown one, the refusal names the size the file has now.
      expect(refusal).toMatchObject({
        code: "ARTIFACT_TOO_LARGE",
        details: { byte_length: 48 << 20, max_artifact_bytes: (16 << 20) + 10 },
      });
      expect(stagedCopies(space)).toEqual([]);
    } finally {
      cleanup();
    }
  });

  test("a file rewritten, grown or truncated while it is copied is refused and leaves no staged copy", async () => {
    const { root, workspace: space, cleanup } = workspace();
    try {
      const path = join(root, "changing.bin");
      const changes: Record<string, () => void> = {
        rewritten_in_place: () => {
          const handle = openSync(path, "r+");
          writeSync(handle, "z", 5);
          closeSync(handle);
        },
        grown_under_the_cap: () => appendFileSync(path, "more"),
        truncated: () => truncateSync(path, 100),
      };
      for (const [name, change] of Object.entries(changes)) {
        aged(path, seededBytes(12 << 20));
        const staging = stageArtifactFile(space, path, { maxBytes: 64 << 20 });
        change();
        await expect(staging, name).rejects.toMatchObject({ code: "ARTIFACT_INTEGRITY_FAILED" });
        expect(stagedCopies(space), name).toEqual([]);
      }
    } finally {
      cleanup();
    }
  });

  test("a symbolic link, a folder and a FIFO are refused by both stagers, before anything is staged", async () => {
    const { root, workspace: space, cleanup } = workspace();
    try {
      const target = join(root, "target.bin");
      writeFileSync(target, "the real bytes");
      const link = join(root, "link.bin");
      symlinkSync(target, link);
      const folder = join(root, "folder");
      mkdirSync(folder);
      const fifo = join(root, "pipe");
      expect(Bun.spawnSync(["mkfifo", fifo]).exitCode).toBe(0);
      for (const path of [link, folder, fifo]) {
        await expect(stageArtifactFile(space, path, { maxBytes: 1 << 20 }), path).rejects.toMatchObject({ code: "EXECUTION_REFUSED" });
        expect(() => stageArtifactFileSync(space, path, { maxBytes: 1 << 20 }), path).toThrow(
          expect.objectContaining({ code: "EXECUTION_REFUSED" }),
        );
      }
      expect(stagedCopies(space)).toEqual([]);
    } finally {
      cleanup();
    }
  });
});
