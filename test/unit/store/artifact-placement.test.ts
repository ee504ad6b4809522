import { describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { publishArtifact, reclaimUnpublished } from "../../../src/store/artifact-placement.ts";
import { readArtifact } from "../../../src/store/artifact-registry.ts";
import { type StagedArtifact, stageArtifactFileSync } from "../../../src/store/artifact-store.ts";
import { blankManifest, insertRun } from "../../../src/store/run-store.ts";
import { initializeWorkspace, type Workspace } from "../../../src/store/workspace.ts";
import { waitFor } from "../../support/wait.ts";

function workspace() {
  const root = mkdtempSync(join(tmpdir(), "flameox-placement-"));
  const { workspace } = initializeWorkspace({ projectRoot: root, workspaceRoot: join(root, ".diagnostics") }, "");
  return { root, workspace, cleanup: () => rmSync(root, { recursive: true, force: true }) };
}

function stage(space: Workspace, root: string, name: string, bytes: string): StagedArtifact {
  writeFileSync(join(root, name), bytes);
  return stageArtifactFileSync(space, join(root, name), { maxBytes: 1 << 20 });
}

/** One import's transaction: its run, then its artifact placed and registered; `fail` throws before commit. */
function publishImport(space: Workspace, staged: StagedArtifact, options: { fail?: boolean } = {}) {
  return space.state.write(() => {
    const runId = crypto.randomUUID();
    insertRun(space.state.database, blankManifest(runId, "import", new Date().toISOString()), "import");
    const published = publishArtifact(space, {
      runId,
      artifact: staged,
      displayName: "x",
      kind: "collector_metadata",
      role: "imported",
      mediaType: null,
      sensitivity: "internal",
      producer: null,
      producerVersion: null,
      format: null,
    });
    if (options.fail) throw new Error("the transaction fails after placing");
    return published.artifact;
  });
}

function objectFiles(space: Workspace): string[] {
  const found: string[] = [];
  const walk = (folder: string) => {
    for (const entry of readdirSync(folder, { withFileTypes: true })) {
      if (entry.isDirectory()) walk(join(folder, entry.name));
      found.push(join(folder, entry.name).slice(space.path("artifacts").length + 1));
    }
  };
  walk(space.path("artifacts"));
  return found.sort();
}

describe("artifact placement", () => {
  test("nothing is in artifacts/ before the publishing transaction; the same bytes published twice are one object", async () => {
    const { root, workspace: space, cleanup } = workspace();
    try {
      const first = stage(space, root, "a.json", "same bytes");
      const second = stage(space, root, "b.txt", "same bytes");
      expect(objectFiles(space)).toEqual([]);
      const placed = publishImport(space, first);
      expect(placed.already_present).toBe(false);
      const reused = publishImport(space, second);
      // The registered object is reused (its path and payload name), and the second staged copy goes
      // (after the transaction, on the thread pool).
      expect(reused).toMatchObject({ already_present: true, stored_path: placed.stored_path, payload_name: "payload.json" });
      await waitFor("the duplicate staged copy to be removed", () => !existsSync(second.staged_path));
      const folder = placed.stored_path.slice("artifacts/".length, placed.stored_path.lastIndexOf("/"));
      expect(objectFiles(space)).toEqual(["sha256", folder.slice(0, "sha256/ab".length), folder, `${folder}/payload.json`]);
    } finally {
      cleanup();
    }
  });

  test("a failed transaction's object is removed with its folders, and a refusal leaves no folder", () => {
    const { root, workspace: space, cleanup } = workspace();
    try {
      const staged = stage(space, root, "a.json", "only once");
      expect(() => publishImport(space, staged, { fail: true })).toThrow("fails after placing");
      // The rename happened inside the transaction that rolled back: the object is there, named by no row.
      expect(existsSync(space.path(staged.stored_path))).toBe(true);
      reclaimUnpublished(space, [staged]);
      expect(objectFiles(space)).toEqual(["sha256"]);
      expect(readdirSync(space.path("artifacts", "sha256"))).toEqual([]);
    } finally {
      cleanup();
    }
  });

  test("a failing import never removes the object another import of the same bytes registered meanwhile", () => {
    const { root, workspace: space, cleanup } = workspace();
    try {
      const failing = stage(space, root, "a.json", "shared bytes");
      const succeeding = stage(space, root, "b.json", "shared bytes");
      expect(() => publishImport(space, failing, { fail: true })).toThrow();
      // The other import commits before the failing one cleans up: it finds the object unregistered and makes it its own.
      const registered = publishImport(space, succeeding);
      reclaimUnpublished(space, [failing]);
      expect(readArtifact(space.state.database, registered.artifact_id)).not.toBeNull();
      expect(readFileSync(space.path(registered.stored_path), "utf8")).toBe("shared bytes");
    } finally {
      cleanup();
    }
  });

  test("publishing the bytes of a registered object whose file went missing restores the file", () => {
    const { root, workspace: space, cleanup } = workspace();
    try {
      const registered = publishImport(space, stage(space, root, "a.json", "restorable"));
      rmSync(space.path(registered.stored_path), { force: true });
      const again = publishImport(space, stage(space, root, "again.bin", "restorable"));
      expect(again).toMatchObject({ stored_path: registered.stored_path, already_present: false });
      expect(readFileSync(space.path(registered.stored_path), "utf8")).toBe("restorable");
    } finally {
      cleanup();
    }
  });
});
