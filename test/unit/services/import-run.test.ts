import { describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { PublishArtifactInput } from "../../../src/store/artifact-placement.ts";
import { readArtifact, registrationsOfArtifact } from "../../../src/store/artifact-registry.ts";
import { stageArtifactFileSync } from "../../../src/store/artifact-store.ts";
import { type CorpusHead, corpusHead } from "../../../src/store/corpus.ts";
import { readRun } from "../../../src/store/run-store.ts";
import { initializeWorkspace, type Workspace } from "../../../src/store/workspace.ts";
import type { PreparedBundle } from "../../../src/services/evidence-publisher.ts";
import { publishImportRun } from "../../../src/services/import-run.ts";

function workspace() {
  const root = mkdtempSync(join(tmpdir(), "flameox-import-run-"));
  const { workspace } = initializeWorkspace({ projectRoot: root, workspaceRoot: join(root, ".diagnostics") }, "");
  return { root, workspace, cleanup: () => rmSync(root, { recursive: true, force: true }) };
}

function registration(space: Workspace, root: string, runId: string, name: string): PublishArtifactInput {
  writeFileSync(join(root, name), `bytes of ${name}`);
  return {
    runId,
    artifact: stageArtifactFileSync(space, join(root, name), { maxBytes: 1 << 20 }),
    displayName: name,
    kind: "collector_metadata",
    role: `role_${name.replace(".", "_")}`,
    mediaType: "text/plain",
    sensitivity: "internal",
    producer: "test",
    producerVersion: null,
    format: "text",
  };
}

function revisionReasons(space: Workspace, runId: string): string[] {
  return space.state.database
    .query<{ reason: string }, [string]>("SELECT reason FROM run_revisions WHERE run_id = ? ORDER BY revision")
    .all(runId)
    .map((row) => row.reason);
}

function commitReasons(space: Workspace): string[] {
  return space.state.database
    .query<{ reason: string }, []>("SELECT reason FROM corpus_commits ORDER BY sequence")
    .all()
    .map((row) => row.reason);
}

describe("publishImportRun", () => {
  test("one run with every registration, the workload and limitations, one corpus commit, and the bundle registered at that head", () => {
    const { root, workspace: space, cleanup } = workspace();
    try {
      const runId = crypto.randomUUID();
      const registrations = [registration(space, root, runId, "a.txt"), registration(space, root, runId, "b.txt")];
      const before = corpusHead(space.state.database);
      const registered: CorpusHead[] = [];
      const bundle = { register: (head: CorpusHead) => registered.push(head) } as unknown as PreparedBundle;
      const head = publishImportRun(space, {
        runId,
        registrations,
        workload: { name: "bench", definitionId: "def-1" },
        limitations: ["first limitation"],
        limitationDetails: [{ source: "reduction", code: "reduction_provenance", message: "m" }],
        reasons: { run: "reduction", corpus: "reduction r-1" },
        bundle,
      });
      expect(head.sequence).toBe(before.sequence + 1);
      expect(corpusHead(space.state.database)).toEqual(head);
      expect(registered).toEqual([head]);
      expect(commitReasons(space).at(-1)).toBe("reduction r-1");
      expect(revisionReasons(space, runId)).toEqual(["reduction"]);
      const run = readRun(space.state.database, runId);
      expect(run).toMatchObject({
        run_type: "import",
        execution_status: "not_applicable",
        capture_status: "registered",
        workload_name: "bench",
        workload_definition_id: "def-1",
        limitations: ["first limitation"],
        limitation_details: [{ source: "reduction", code: "reduction_provenance", message: "m" }],
      });
      expect(run?.artifacts.map((artifact) => artifact.role)).toEqual(["role_a_txt", "role_b_txt"]);
      for (const { artifact } of registrations) {
        expect(readArtifact(space.state.database, artifact.artifact_id)).not.toBeNull();
        const [only] = registrationsOfArtifact(space.state.database, artifact.artifact_id);
        expect(only?.run_id).toBe(runId);
        expect(run?.artifacts.map((reference) => reference.registration_id)).toContain(only?.registration_id ?? "missing");
      }
    } finally {
      cleanup();
    }
  });

  test("without a workload or limitation details the manifest keeps the blank ones; a failing bundle leaves nothing published", () => {
    const { root, workspace: space, cleanup } = workspace();
    try {
      const runId = crypto.randomUUID();
      const staged = registration(space, root, runId, "c.txt");
      publishImportRun(space, { runId, registrations: [staged], limitations: [], reasons: { run: "import", corpus: `import ${runId}` } });
      expect(readRun(space.state.database, runId)).toMatchObject({
        workload_name: null,
        workload_definition_id: null,
        limitation_details: [],
      });

      const failedRun = crypto.randomUUID();
      const failing = registration(space, root, failedRun, "d.txt");
      const before = corpusHead(space.state.database);
      const bundle = {
        register: () => {
          throw new Error("the bundle cannot be registered");
        },
      } as unknown as PreparedBundle;
      expect(() =>
        publishImportRun(space, {
          runId: failedRun,
          registrations: [failing],
          limitations: [],
          reasons: { run: "import", corpus: "x" },
          bundle,
        }),
      ).toThrow("the bundle cannot be registered");
      expect(readRun(space.state.database, failedRun)).toBeNull();
      expect(readArtifact(space.state.database, failing.artifact.artifact_id)).toBeNull();
      expect(corpusHead(space.state.database)).toEqual(before);
    } finally {
      cleanup();
    }
  });
});
