/**
 * ReportService over a real workspace (SQLite + DuckDB + Parquet): a profile imported from the
 * committed py-spy fixture, plus a bundle of test durations, memory stacks and trace events published
 * for the same run, so every report section and the export/SVG bounds are exercised in-process.
 */
import { afterAll, beforeAll, expect, test, setDefaultTimeout } from "bun:test";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { frameKey, type FrameRow } from "../../../src/domain/evidence.ts";
import { prepareBundle, publishBundles } from "../../../src/services/evidence-publisher.ts";
import { regroup } from "../../../src/analysis/report-evidence.ts";
import { splitTargets } from "../../../src/services/report-service.ts";
import { Services } from "../../../src/services/services.ts";
import { projectImport } from "../../support/imports.ts";

// Real captures feed the reports. The suite's default per-test deadline is 30 s (scripts/test-deadline.ts).
setDefaultTimeout(60_000);

const fixtures = resolve(import.meta.dir, "../../fixtures/formats");
let project: string;
let services: Services;
let runId: string;
let artifactId: string;

function frame(name: string, line: number): FrameRow {
  const identity = { language: "python", function: name, file: "tests/test_api.py", line };
  return { frame_key: frameKey(identity), ...identity, module: null };
}

beforeAll(async () => {
  project = realpathSync(mkdtempSync(join(tmpdir(), "flameox-report-service-")));
  copyFileSync(join(fixtures, "py-spy.speedscope.json"), join(project, "py-spy.speedscope.json"));
  services = new Services({ projectRoot: project });
  await services.workspaces.initialize();
  const receipt = await services.imports.importArtifact(projectImport(join(project, "py-spy.speedscope.json")));
  runId = receipt.run_id;
  artifactId = receipt.artifact_id;
  const allocate = frame("allocate_buffers", 10);
  const build = frame("build_index", 20);
  const caller = frame("load", 5);
  const bundle = await prepareBundle(
    services.workspace(),
    { runId, artifactId, extractor: "report-test", extractorVersion: "1" },
    async (sink) => {
      for (const row of [allocate, build, caller]) sink.frame(row);
      sink.stack({
        thread: "main",
        process: "1",
        frame_keys: [caller.frame_key, allocate.frame_key],
        weight: 50 * 2 ** 20,
        unit: "bytes",
        sample_count: 3,
      });
      sink.stack({
        thread: "main",
        process: "1",
        frame_keys: [caller.frame_key, build.frame_key],
        weight: 5 * 2 ** 20,
        unit: "bytes",
        sample_count: 7,
      });
      const test = (nodeid: string, duration: number, outcome: string) =>
        sink.measurement({
          name: "test.duration_ns",
          value: duration,
          unit: "ns",
          aggregation: "sum",
          is_warmup: false,
          worker: null,
          run_index: null,
          value_index: null,
          phase: null,
          dimensions: JSON.stringify({ nodeid, outcome }),
        });
      test("tests/test_api.py::test_slow", 2_500_000_000, "passed");
      test("tests/test_api.py::test_fast", 1_000_000, "failed");
      for (let index = 0; index < 5; index += 1) {
        sink.traceEvent({
          event_id: index,
          parent_id: null,
          depth: 0,
          name: `step_${index}`,
          category: "cpu_op",
          ts_ns: index * 1_000_000,
          dur_ns: 900_000,
          pid: "100",
          tid: String(1 + (index % 2)),
          args: null,
          correlation: null,
          device: null,
          stream: null,
          phase: "X",
        });
      }
    },
  );
  publishBundles(services.workspace(), [bundle], "report test evidence");
});

afterAll(() => {
  services?.close();
  if (project) rmSync(project, { recursive: true, force: true });
});

test("a report holds every section the evidence supports", async () => {
  const { html, summary } = await services.reports.renderReport({ targets: [runId], baseline: null, unit: null, title: null });
  expect(summary.unit).toBe("ns");
  expect(summary.sections).toEqual(["flame_graph", "timeline", "top_functions", "slowest_tests", "top_allocators"]);
  expect(summary.run_ids).toEqual([runId]);
  expect(html).toContain("tests/test_api.py::test_slow");
  expect(html).toContain("allocate_buffers");
  expect(html).toContain("50.0 MiB");
  expect(html.indexOf("test_slow")).toBeLessThan(html.indexOf("test_fast"));
  expect(html).toContain("5 events in 2 lanes");
  expect(html).toContain("hot_loop");
});

test("units are chosen or refused, never mixed", async () => {
  const bytes = await services.reports.renderReport({ targets: [runId], baseline: null, unit: "bytes", title: null });
  expect(bytes.summary.unit).toBe("bytes");
  expect(bytes.summary.total_weight).toBe(55 * 2 ** 20);
  await expect(services.reports.renderReport({ targets: [runId], baseline: null, unit: "samples", title: null })).rejects.toMatchObject({
    code: "INVALID_ARGUMENTS",
  });
  // A baseline with stacks in the chosen unit adds the differential flame graph, in that unit on both sides.
  const differential = await services.reports.renderReport({ targets: [runId], baseline: [runId], unit: "bytes", title: null });
  expect(differential.summary.unit).toBe("bytes");
  expect(differential.summary.baseline_run_ids).toEqual([runId]);
  expect(differential.summary.sections).toContain("differential_flame_graph");
  expect(differential.summary.total_weight).toBe(55 * 2 ** 20);
});

test("the SVG flame graph is bounded and names frames in <title>s", async () => {
  const svg = await services.reports.flameGraphSvg(runId, { maxNodes: 2 });
  expect(svg.startsWith("<svg")).toBe(true);
  expect((svg.match(/<title>/g) ?? []).length).toBe(3);
  expect(svg).toContain("smaller frames omitted");
  const byArtifact = await services.reports.flameGraphSvg(artifactId);
  expect(byArtifact).toContain("<title>hot_loop");
});

test("exports: speedscope keeps every unit; single-unit formats take the preferred or the named one", async () => {
  const folder = join(project, "exports");
  mkdirSync(folder);
  const speedscope = await services.reports.export({ target: runId, format: "speedscope", unit: null }, join(folder, "all.json"));
  expect(speedscope.unit).toBeNull();
  const document = JSON.parse(readFileSync(speedscope.path, "utf8"));
  expect(new Set(document.profiles.map((profile: any) => profile.unit))).toEqual(new Set(["nanoseconds", "bytes"]));
  const collapsed = await services.reports.export({ target: runId, format: "collapsed", unit: "bytes" }, join(folder, "memory.txt"));
  expect(collapsed.unit).toBe("bytes");
  expect(readFileSync(collapsed.path, "utf8")).toContain(
    `load (tests/test_api.py:5);allocate_buffers (tests/test_api.py:10) ${50 * 2 ** 20}`,
  );
  await expect(services.reports.export({ target: runId, format: "chrome", unit: "bytes" }, join(folder, "t.json"))).rejects.toMatchObject({
    code: "INVALID_ARGUMENTS",
  });
});

test("output paths: folders, links and missing folders are refused", async () => {
  const request = { targets: [runId], baseline: null, unit: null, title: null };
  mkdirSync(join(project, "folder"));
  await expect(services.reports.writeReport(request, join(project, "folder"))).rejects.toMatchObject({ code: "EXECUTION_REFUSED" });
  writeFileSync(join(project, "target.txt"), "keep");
  symlinkSync(join(project, "target.txt"), join(project, "link.html"));
  await expect(services.reports.writeReport(request, join(project, "link.html"))).rejects.toMatchObject({ code: "EXECUTION_REFUSED" });
  expect(readFileSync(join(project, "target.txt"), "utf8")).toBe("keep");
  await expect(services.reports.writeReport(request, join(project, "missing", "r.html"))).rejects.toMatchObject({
    code: "INVALID_ARGUMENTS",
  });
  writeFileSync(join(project, "old.html"), "old");
  const written = await services.reports.writeReport(request, join(project, "old.html"));
  expect(written.bytes).toBeGreaterThan(1000);
  expect(readFileSync(join(project, "old.html"), "utf8")).toStartWith("<!doctype html>");
});

test("the viewer plan is read-only and exact", async () => {
  const plan = await services.reports.viewerPlan(artifactId);
  expect(plan.evidence.stacks).toBe(true);
  expect(plan.report_command.slice(0, 3)).toEqual(["flameox", "report", artifactId]);
  expect(plan.viewers.every((viewer) => viewer.prepare_command[0] === "flameox" && !viewer.output.includes(":"))).toBe(true);
});

test("regroup merges a function's lines into one frame; splitTargets splits and dedupes", () => {
  const first = frame("work", 3);
  const second = frame("work", 9);
  const root = frame("main", 1);
  const frames = new Map([first, second, root].map((row) => [row.frame_key, row]));
  const { frames: grouped, stacks } = regroup(
    frames,
    [
      { thread: null, process: null, frame_keys: [root.frame_key, second.frame_key], weight: 2, unit: "samples", sample_count: 2 },
      { thread: null, process: null, frame_keys: [root.frame_key, first.frame_key], weight: 3, unit: "samples", sample_count: 3 },
    ],
    "function",
  );
  expect(stacks).toHaveLength(1);
  expect(stacks[0]!.weight).toBe(5);
  expect(grouped.get(stacks[0]!.frame_keys[1]!)?.line).toBe(3);
  expect(splitTargets(["a,b", "b", " c "])).toEqual(["a", "b", "c"]);
});
