// Garbage in the Python-side and trace formats, through the real services (import → extract →
// Parquet → analysis): a typed refusal, or evidence with a limitation that the analyses repeat.
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { Database } from "bun:sqlite";
import { readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { failure, project } from "./harness.ts";
import { defaultHotspotRequest } from "../../../src/services/analysis-service.ts";
import { projectImport } from "../../support/imports.ts";

// Extraction writes Parquet through DuckDB; each case is a fresh workspace.
setDefaultTimeout(60_000);

type Services = Awaited<ReturnType<typeof project>>["services"];

async function imported(services: Services, root: string, name: string, content: string | Uint8Array, kind: string | null) {
  writeFileSync(join(root, name), content);
  return services.imports.importArtifact(projectImport(name, kind));
}

function bundlesOf(root: string): string[] {
  return readdirSync(join(root, ".diagnostics", "evidence"));
}

describe("pyperf", () => {
  test("-1e9 s and 1e300 are left out with a limitation that query_measurements repeats", async () => {
    const { root, services } = await project("pyperf-absurd");
    const suite = { version: "1.0", metadata: { name: "bench" }, benchmarks: [{ runs: [{ values: [0.002, -1e9, 1e300, 0.003] }] }] };
    const receipt = await imported(services, root, "bench.json", JSON.stringify(suite), "benchmark_samples");
    const extracted = await services.extraction.extract("pyperf", { run_id: receipt.run_id });
    const expected =
      "2 pyperf value(s) were left out: 1 negative (a time or size cannot be), 1 beyond 2^53 ns, bytes or counts (benchmark bench).";
    expect(extracted.limitations).toEqual([expected]);
    const measurements = await services.measurements.query({
      run_id: receipt.run_id,
      artifact_id: null,
      name_prefix: "pyperf.",
      include_warmups: false,
      limit: 10,
      cursor: null,
    });
    expect(measurements.measurements.map((row) => row.value)).toEqual([0.002e9, 0.003e9]);
    expect(measurements.limitations).toEqual([expected]);
  });

  test("a gzip bomb is ARTIFACT_TOO_LARGE and leaves no bundle", async () => {
    const { root, services } = await project("pyperf-bomb");
    // 256 MiB of spaces before a valid document: 256 KB compressed, far past the 64 MiB text bound.
    const bomb = gzipSync(Buffer.concat([Buffer.alloc(256 << 20, 0x20), Buffer.from('{"version":"1.0","benchmarks":[]}')]), { level: 9 });
    const receipt = await imported(services, root, "bench.json.gz", bomb, "benchmark_samples");
    const error = await failure(() => services.extraction.extract("pyperf", { run_id: receipt.run_id }));
    expect(error.code).toBe("ARTIFACT_TOO_LARGE");
    expect(bundlesOf(root)).toEqual([]);
  });
});

describe("pytest event streams", () => {
  test("negative and impossible durations are left out with a limitation; outcomes stay; query_measurements repeats it", async () => {
    const { root, services } = await project("pytest-negative");
    const line = (event: string, fields: Record<string, unknown>) =>
      JSON.stringify({ schema: "flameox.pytest-events.v1", event, observed_at_ns: 1_000, worker_id: "controller", ...fields });
    const stream = [
      line("run_started", { run_started_at_ns: 1_000, scheduler: "no" }),
      line("fixture_setup", { fixture: "db", scope: "function", nodeid: "t.py::a", duration_ns: -5_000, outcome: "passed" }),
      line("fixture_teardown", { fixture: "db", scope: "function", nodeid: "t.py::a", duration_ns: 7_000 }),
      line("test_phase", { nodeid: "t.py::a", phase: "setup", outcome: "passed", duration_ns: 1_000 }),
      line("test_phase", { nodeid: "t.py::a", phase: "call", outcome: "passed", duration_ns: -2_000_000 }),
      line("test_phase", { nodeid: "t.py::a", phase: "teardown", outcome: "passed", duration_ns: 1e300 }),
      line("session_finished", { exit_status: 0 }),
    ].join("\n");
    const receipt = await imported(services, root, "events.jsonl", `${stream}\n`, "test_execution");
    const extracted = await services.extraction.extract("pytest", { run_id: receipt.run_id });
    const note = "3 duration(s) in the stream were negative or beyond 2^53 ns; they were left out (their tests keep their outcomes).";
    expect(extracted.limitations).toEqual([note]);
    expect(extracted.counts).toMatchObject({ passed: 1 });
    const durations = await services.measurements.query({
      run_id: receipt.run_id,
      artifact_id: null,
      name_prefix: "test.",
      include_warmups: false,
      limit: 100,
      cursor: null,
    });
    expect(durations.measurements.every((row) => row.value >= 0 && row.value < 1e15)).toBe(true);
    const phases = durations.measurements.filter((row) => row.name === "test.duration_ns").map((row) => [row.phase, row.value]);
    // The setup phase, and the test's total (phase null) made of it alone.
    expect(phases).toEqual([
      ["setup", 1_000],
      [null, 1_000],
    ]);
    expect(durations.limitations).toEqual([note]);
  });
});

function nsightExport(path: string, statements: string[]): void {
  const database = new Database(path);
  database.run(
    "create table CUPTI_ACTIVITY_KIND_RUNTIME (start integer, end integer, globalTid integer, correlationId integer, name text)",
  );
  for (const statement of statements) database.run(statement);
  database.close();
}

describe("Nsight Systems exports", () => {
  test("a kernel table that is a recursive view is refused at once, not read forever", async () => {
    const { root, services } = await project("nsight-view");
    nsightExport(join(root, "report.sqlite"), [
      "create view CUPTI_ACTIVITY_KIND_KERNEL as with recursive r(n) as (select 1 union all select n + 1 from r) select n as start, n + 1 as end, 'k' as demangledName from r",
    ]);
    const real = await services.imports.importArtifact(projectImport("report.sqlite", "execution_trace"));
    const error = await failure(() => services.extraction.extract("nsight_systems", { run_id: real.run_id }));
    expect(error.code).toBe("ARTIFACT_PARSE_FAILED");
    expect(bundlesOf(root)).toEqual([]);
  });

  test("end < start is kept with duration 0 and 1e30 left out, each said, and analyze_accelerator_launches repeats it", async () => {
    const { root, services } = await project("nsight-garbage");
    nsightExport(join(root, "report.sqlite"), [
      "create table CUPTI_ACTIVITY_KIND_KERNEL (start integer, end integer, deviceId integer, streamId integer, correlationId integer, demangledName text)",
      "insert into CUPTI_ACTIVITY_KIND_RUNTIME values (100, 110, 1, 1, 'cudaLaunchKernel'), (200, 210, 1, 2, 'cudaLaunchKernel'), (300, 310, 1, 3, 'cudaLaunchKernel')",
      "insert into CUPTI_ACTIVITY_KIND_KERNEL values (120, 115, 0, 7, 1, 'reversed'), (220, 320, 0, 7, 2, 'fine'), (1e30, 1e30, 0, 7, 3, 'absurd')",
    ]);
    const receipt = await services.imports.importArtifact(projectImport("report.sqlite", "execution_trace"));
    const extracted = await services.extraction.extract("nsight_systems", { run_id: receipt.run_id });
    const reversed = "1 row(s) of CUPTI_ACTIVITY_KIND_KERNEL end before they start; they are kept with duration 0.";
    const absurd = "1 row(s) of CUPTI_ACTIVITY_KIND_KERNEL have timestamps beyond 2^62 ns and were left out.";
    expect(extracted.limitations).toContain(reversed);
    expect(extracted.limitations).toContain(absurd);
    expect(extracted.top_kernels).toEqual([
      { name: "fine", count: 1, totalNs: 100 },
      { name: "reversed", count: 1, totalNs: 0 },
    ]);
    const launches = await services.traceAnalysis.acceleratorLaunches({
      run_or_artifact: receipt.run_id,
      limit: 10,
      comparison_run_or_artifact: null,
      phase: null,
    });
    expect(launches.summary.kernels).toBe(2);
    expect(launches.limitations).toContain(reversed);
    expect(launches.limitations).toContain(absurd);
  });
});

describe("Chrome traces", () => {
  test("ts and dur of 1e300 µs are left out with a limitation (no DuckDB error); analyze_hotspots repeats it", async () => {
    const { root, services } = await project("chrome-absurd");
    const events = [
      { ph: "X", name: "absurd_start", cat: "c", pid: 1, tid: 1, ts: 1e300, dur: 5 },
      { ph: "X", name: "absurd_length", cat: "c", pid: 1, tid: 1, ts: 1, dur: 1e300 },
      { ph: "X", name: "fine", cat: "c", pid: 1, tid: 1, ts: 10, dur: 5 },
    ];
    const receipt = await imported(services, root, "trace.json", JSON.stringify({ traceEvents: events }), null);
    const note = "2 events had a ts or dur beyond 4e15 µs (no clock's value) and were left out.";
    expect(receipt.evidence.limitations).toContain(note);
    const hotspots = await services.analysis.hotspots(defaultHotspotRequest(receipt.run_id, 10));
    expect(hotspots.hotspots.map((hotspot) => [hotspot.function, hotspot.self_weight])).toEqual([["fine", 5000]]);
    expect(hotspots.limitations).toContain(note);
  });
});
