/**
 * The first answer of a capture is ranked from the rows its extraction recorded (hotspots-in-memory.ts)
 * instead of a DuckDB query. Oracle: on seeded profiles written through the real bundle writer into
 * Parquet and published, the recorded answer equals AnalysisService's query answer field for field.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { copyFileSync, mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { recordedHotspots } from "../../../src/analysis/hotspots-in-memory.ts";
import { type FrameRow, frameKey, type StackRow, type StackUnit } from "../../../src/domain/evidence.ts";
import { defaultHotspotRequest } from "../../../src/services/analysis-service.ts";
import { prepareBundle, publishBundles } from "../../../src/services/evidence-publisher.ts";
import { Services } from "../../../src/services/services.ts";
import { StackRecording } from "../../../src/services/stack-recording.ts";
import { evidenceEngine } from "../../../src/store/evidence-query.ts";
import { blankManifest, insertRun } from "../../../src/store/run-store.ts";
import { projectImport } from "../../support/imports.ts";
import { seededRandom } from "../../support/random.ts";

// Each case writes and publishes a bundle (DuckDB + Parquet) and asks both paths several questions.
setDefaultTimeout(60_000);

let project: string;
let services: Services;
let artifactId: string;

beforeAll(async () => {
  project = realpathSync(mkdtempSync(join(tmpdir(), "flameox-hotspots-in-memory-")));
  copyFileSync(resolve(import.meta.dir, "../../fixtures/formats/py-spy.speedscope.json"), join(project, "profile.json"));
  services = new Services({ projectRoot: project });
  await services.workspaces.initialize();
  artifactId = (await services.imports.importArtifact(projectImport(join(project, "profile.json")))).artifact_id;
});

afterAll(() => {
  services.close();
  rmSync(project, { recursive: true, force: true });
});

function frame(identity: Omit<FrameRow, "frame_key">): FrameRow {
  return { frame_key: frameKey(identity), ...identity };
}

/** Functions with several lines each (keys that share a function), file-less frames told apart by module, recursion, ties, zero weights. */
function seededProfile(seed: number, units: StackUnit[]): { frames: FrameRow[]; stacks: StackRow[] } {
  const random = seededRandom(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const frames: FrameRow[] = [];
  for (let index = 0; index < 24; index += 1) {
    const fileLess = index % 6 === 5;
    const lines = 1 + Math.floor(random() * 3);
    for (let line = 0; line < lines; line += 1)
      frames.push(
        frame({
          function: index % 7 === 3 ? `fn_ü${index}` : `fn${index}`,
          file: fileLess ? null : `pkg/m${index % 5}.py`,
          line: fileLess ? null : 10 * index + line,
          module: fileLess ? `lib${line}.so` : null,
          language: fileLess ? "native" : "python",
        }),
      );
  }
  const stacks: StackRow[] = [];
  for (let index = 0; index < 300; index += 1) {
    const depth = 1 + Math.floor(random() * 10);
    const keys = Array.from({ length: depth }, () => pick(frames).frame_key);
    if (random() < 0.2) keys.push(keys[0]!);
    stacks.push({
      thread: pick(["MainThread", "worker-1", null]),
      process: "1",
      frame_keys: random() < 0.02 ? [] : keys,
      weight: random() < 0.05 ? 0 : pick([1, 2, 3, 10]) * (random() < 0.5 ? 1 : 10_000_000),
      unit: pick(units),
      sample_count: 1,
    });
  }
  // Exact ties on self and total weight, which only the frame id orders.
  const ties = ["tie_a", "tie_b", "tie_c"].map((name) =>
    frame({ function: name, file: "pkg/ties.py", line: 1, module: null, language: "python" }),
  );
  frames.push(...ties);
  for (const unit of units)
    for (const tie of ties)
      stacks.push({ thread: null, process: "1", frame_keys: [frames[0]!.frame_key, tie.frame_key], weight: 7, unit, sample_count: 1 });
  return { frames, stacks };
}

/** Publishes the rows as the only bundle of a new run, through a recording like a capture's; returns the run and its recording. */
async function publishRecorded(rows: { frames: FrameRow[]; stacks: StackRow[] }): Promise<{ runId: string; recording: StackRecording }> {
  const workspace = services.workspace();
  const runId = crypto.randomUUID();
  workspace.state.write(() => insertRun(workspace.state.database, blankManifest(runId, "import", new Date().toISOString()), "test run"));
  const recording = new StackRecording();
  let keep: ((bundleId: string) => void) | undefined;
  const bundle = await prepareBundle(workspace, { runId, artifactId, extractor: "py-spy", extractorVersion: "1" }, async (writer) => {
    const recorded = recording.record(writer);
    keep = recorded.keep;
    for (const row of rows.frames) recorded.sink.frame(row);
    for (const row of rows.stacks) recorded.sink.stack(row);
    return [];
  });
  keep!(bundle.bundleId);
  publishBundles(workspace, [bundle], "recorded rows test");
  return { runId, recording };
}

for (const [seed, units] of [
  [1, ["samples"]],
  [2, ["ns"]],
  [3, ["samples", "bytes", "ns"]],
] as [number, StackUnit[]][]) {
  test(`recorded rows answer the default ranking exactly as the query over their Parquet (seed ${seed}, ${units.join("+")})`, async () => {
    const { runId, recording } = await publishRecorded(seededProfile(seed, units));
    const engine = evidenceEngine(services.workspace());
    for (const limit of [1, 5, 500]) {
      const request = defaultHotspotRequest(runId, limit);
      const opened = engine.viewsOpened;
      let used = false;
      const fromRows = await services.analysis.hotspots(request, (bundleIds) => {
        const rows = recording.rowsOf(bundleIds);
        used = rows !== null;
        return rows;
      });
      // The recorded path ran and opened no view over the bundle.
      expect(used).toBe(true);
      expect(engine.viewsOpened).toBe(opened);
      const fromQuery = await services.analysis.hotspots(request);
      expect(fromRows).toEqual(fromQuery);
      expect(JSON.stringify(fromRows)).toBe(JSON.stringify(fromQuery));
      expect(fromRows.hotspots.length).toBeGreaterThan(0);
    }
  });
}

test("rows the SQL would read differently are declined: one key with two frames, an accelerator's clock, merged or restarted extractions", async () => {
  const main = frame({ function: "main", file: "app.py", line: 1, module: null, language: "python" });
  const stack: StackRow = { thread: null, process: null, frame_keys: [main.frame_key], weight: 1, unit: "ns", sample_count: 1 };
  expect(recordedHotspots({ frames: [main], stacks: [stack] }, "ns", { offset: 0, limit: 5 })).not.toBeNull();
  expect(recordedHotspots({ frames: [main, { ...main, line: 2 }], stacks: [stack] }, "ns", { offset: 0, limit: 5 })).toBeNull();
  const kernel = { ...frame({ function: "gemm", file: null, line: null, module: "kernel", language: "cuda" }) };
  expect(recordedHotspots({ frames: [main, kernel], stacks: [stack] }, "ns", { offset: 0, limit: 5 })).toBeNull();
  expect(recordedHotspots({ frames: [main], stacks: [{ ...stack, weight: 0.5 }] }, "ns", { offset: 0, limit: 5 })).toBeNull();
  expect(recordedHotspots({ frames: [], stacks: [stack] }, "ns", { offset: 0, limit: 5 })).toBeNull();

  for (const member of ["mergeRepeatedStacks", "restart"] as const) {
    const calls: string[] = [];
    const writer = {
      frame: () => calls.push("frame"),
      stack: () => calls.push("stack"),
      traceEvent: () => undefined,
      measurement: () => undefined,
      observation: () => undefined,
      mergeRepeatedStacks: () => calls.push("merge"),
      restart: () => calls.push("restart"),
    };
    const recording = new StackRecording();
    const recorded = recording.record(writer);
    recorded.sink.frame(main);
    recorded.sink.stack(stack);
    (recorded.sink as unknown as Record<string, () => void>)[member]!();
    recorded.keep("bundle-a");
    // The writer saw every call; the recording holds nothing it could answer from.
    expect(calls).toEqual(["frame", "stack", member === "restart" ? "restart" : "merge"]);
    expect(recording.rowsOf(["bundle-a"])).toBeNull();
  }
  const plain = new StackRecording();
  const recorded = plain.record({ frame: () => 0, stack: () => 0, traceEvent: () => 0, measurement: () => 0, observation: () => 0 });
  // A writer without the optional members still looks like one without them to extractors.
  expect("mergeRepeatedStacks" in recorded.sink).toBe(false);
  expect(typeof (recorded.sink as unknown as Record<string, unknown>).mergeRepeatedStacks).toBe("undefined");
  recorded.sink.stack(stack);
  recorded.keep("bundle-b");
  expect(plain.rowsOf(["bundle-b"])?.stacks).toEqual([stack]);
  expect(plain.rowsOf(["bundle-b", "bundle-c"])).toBeNull();
});
