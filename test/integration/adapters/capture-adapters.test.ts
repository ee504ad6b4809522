// Every tool adapter end to end in-process: plan → execute with the real tool → extract → analysis.
import { describe, expect, test, setDefaultTimeout } from "bun:test";
import { join } from "node:path";
import { capture, declare, failure, project, pythonFixtures, repositoryRoot, venvBin, venvPython } from "./harness.ts";
import { defaultHotspotRequest } from "../../../src/services/analysis-service.ts";

// Each test runs a real profiler on a real workload. The suite's default per-test deadline is 30 s (scripts/test-deadline.ts).
setDefaultTimeout(120_000);

const hotspots = (services: Awaited<ReturnType<typeof project>>["services"], runId: string) =>
  services.analysis.hotspots(defaultHotspotRequest(runId, 5));

describe("pytest adapter", () => {
  for (const workers of [null, "2"]) {
    test(`exact counts and the slowest test, ${workers ? "-n 2" : "serial"}`, async () => {
      const { services } = await project("pytest", { suite: join(pythonFixtures, "pytest-suite") });
      await declare(services, "tests", [
        venvPython,
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "suite",
        ...(workers ? ["-n", workers] : []),
      ]);
      const run = await capture(services, "tests", "pytest");
      expect(run.execution_status).toBe("failed");
      // The receipt's own answer: counts, the failing test and the slowest, and the failures as the next step.
      expect(run.analysis?.kind).toBe("test_outcomes");
      expect(run.analysis?.summary?.counts).toEqual({ passed: 4, failed: 1, skipped: 1, xfailed: 1, xpassed: 1 });
      expect((run.analysis!.summary!.failures as { nodeid: string }[])[0]!.nodeid).toBe("suite/test_suite.py::test_fails");
      expect((run.analysis!.summary!.slowest as { nodeid: string }[])[0]!.nodeid).toBe("suite/test_suite.py::test_slow");
      expect(run.next_tool).toBe("analyze_failures");
      const extracted = await services.extraction.extract("pytest", { run_id: run.run_id });
      expect(extracted.counts).toEqual({ passed: 4, failed: 1, skipped: 1, xfailed: 1, xpassed: 1, error: 0, crashed: 0 });
      expect(extracted.collected).toBe(8);
      expect((extracted.slowest as { nodeid: string }[])[0]!.nodeid).toBe("suite/test_suite.py::test_slow");
      if (workers) expect((extracted.workers as string[]).length).toBe(2);
      expect(extracted.superseded_bundle_ids).toHaveLength(1);
      const durations = await services.measurements.query({
        run_id: run.run_id,
        artifact_id: null,
        name_prefix: "test.duration_ns",
        include_warmups: false,
        limit: 1000,
        cursor: null,
      });
      const totals = durations.measurements.filter((row) => row.phase === null).sort((left, right) => right.value - left.value);
      expect(totals).toHaveLength(8);
      expect(totals[0]!.dimensions!.nodeid).toBe("suite/test_suite.py::test_slow");
      const again = await services.extraction.extract("pytest", { run_id: run.run_id });
      const after = await services.measurements.query({
        run_id: run.run_id,
        artifact_id: null,
        name_prefix: "test.duration_ns",
        include_warmups: false,
        limit: 1000,
        cursor: null,
      });
      expect(after.total).toBe(durations.total);
      expect(again.superseded_bundle_ids).toEqual(extracted.bundle_ids);
      const failures = await services.failureAnalysis.analyze({ limit: 10, filter: null });
      expect(
        failures.clusters.some(
          (cluster) =>
            cluster.source === "test" && cluster.signature.includes("assert") && cluster.examples[0]!.subject.endsWith("test_fails"),
        ),
      ).toBe(true);
    }, 60_000);
  }

  test("a killed xdist worker is reported, not hidden", async () => {
    const { services } = await project("pytest-crash", { crash: join(pythonFixtures, "pytest-crash") });
    await declare(services, "crash", [venvPython, "-m", "pytest", "-q", "-p", "no:cacheprovider", "crash", "-n", "2"]);
    const run = await capture(services, "crash", "pytest");
    const extracted = await services.extraction.extract("pytest", { run_id: run.run_id });
    expect((extracted.counts as Record<string, number>).crashed).toBe(1);
    expect((extracted.crashed_workers as { nodeids: string[] }[])[0]!.nodeids).toEqual(["crash/test_crash.py::test_kills_its_worker"]);
    expect(extracted.complete).toBe(false);
    expect(extracted.limitations.join(" ")).toContain("crashed");
  }, 60_000);
});

test("pytest fixtures: setup and teardown time per fixture, costliest first, through query_measurements", async () => {
  const { services } = await project("pytest-fixtures", { suite: join(pythonFixtures, "pytest-fixtures") });
  await declare(services, "tests", [venvPython, "-m", "pytest", "-q", "-p", "no:cacheprovider", "suite"]);
  const run = await capture(services, "tests", "pytest");
  expect(run.execution_status).toBe("succeeded");
  const extracted = await services.extraction.extract("pytest", { run_id: run.run_id });
  expect(extracted.fixture_teardowns).toBe(extracted.fixture_setups);
  const totals = await services.measurements.query({
    run_id: run.run_id,
    artifact_id: null,
    name_prefix: "test.fixture_total_ns",
    include_warmups: false,
    limit: 100,
    cursor: null,
  });
  const rows = totals.measurements.map((row) => ({
    fixture: row.dimensions!.fixture,
    phase: row.phase,
    instances: row.dimensions!.instances,
    rank: row.value_index,
    value: row.value,
  }));
  // The session fixture sleeps 0.6 s in teardown, costly_setup 0.1 s in each of two setups, free
  // does nothing: margins of 0.4 s and 0.2 s, far above scheduling noise. Sleeps bound from below.
  expect(rows.slice(0, 6).map(({ fixture, phase, instances, rank }) => ({ fixture, phase, instances, rank }))).toEqual([
    { fixture: "costly_teardown", phase: "setup", instances: 1, rank: 0 },
    { fixture: "costly_teardown", phase: "teardown", instances: 1, rank: 0 },
    { fixture: "costly_setup", phase: "setup", instances: 2, rank: 1 },
    { fixture: "costly_setup", phase: "teardown", instances: 2, rank: 1 },
    { fixture: "free", phase: "setup", instances: 2, rank: 2 },
    { fixture: "free", phase: "teardown", instances: 2, rank: 2 },
  ]);
  expect(rows[1]!.value).toBeGreaterThanOrEqual(600_000_000);
  expect(rows[2]!.value).toBeGreaterThanOrEqual(200_000_000);
  const perInstance = await services.measurements.query({
    run_id: run.run_id,
    artifact_id: null,
    name_prefix: "test.fixture_teardown_ns",
    include_warmups: false,
    limit: 100,
    cursor: null,
  });
  const sessionTeardown = perInstance.measurements.find((row) => row.dimensions!.fixture === "costly_teardown")!;
  expect(sessionTeardown.dimensions).toMatchObject({ scope: "session", nodeid: "suite/test_fixtures.py::test_first" });
  expect(sessionTeardown.value).toBeGreaterThanOrEqual(600_000_000);
}, 60_000);

test("coverage: exactly the executed lines and arcs, and which statements and branches were missed", async () => {
  const { services } = await project("coverage", { "app.py": join(pythonFixtures, "coverage", "branches.py") });
  await declare(services, "cov", [venvPython, "app.py"]);
  const run = await capture(services, "cov", "coverage");
  expect(run.analysis?.kind).toBe("coverage");
  // branches.py: classify(3) and classify(4) never take `value > 10` (line 3) and unused() (line 8) never runs.
  expect(run.analysis?.summary).toMatchObject({ statement_count: 8, covered_line_count: 6, missed_line_count: 2, total: 1 });
  expect(run.analysis?.summary?.files).toEqual([
    {
      file: "app.py",
      statement_count: 8,
      covered_line_count: 6,
      missed_line_count: 2,
      percent_covered: 75,
      missed_line_ranges: "3, 8",
      branch_count: 2,
      missed_branch_count: 1,
      partial_branch_count: 1,
      missed_branches: "2->3",
      executed_line_count: 6,
    },
  ]);
  expect(run.limitation_details.map((detail) => detail.code)).toEqual(["trusted_local_execution"]);
  expect(run.next_tool).toBe("analyze_execution");
  expect(run.next_arguments).toEqual({ run_or_artifact: run.run_id });
  const result = await services.executionAnalysis.analyze({ run_or_artifact: run.run_id, limit: 10, comparison_run_or_artifact: null });
  expect(result.files).toHaveLength(1);
  expect(result.files[0]).toMatchObject({ file: "app.py", executed_line_count: 6, arc_count: 8, excluded_line_count: 0 });
  // Ranges run over consecutive statements (lines 5-6 and 9-10 are blank), as coverage.py writes them.
  expect(result.files[0]!.executed_line_ranges).toBe("1-2, 4-7, 11-12");
  expect(result.percent_covered).toBe(75);
  expect(result.limitations).toEqual([]);
  // Re-extraction runs the report again with the run's own interpreter: the statements stay.
  const extracted = await services.extraction.extract("coverage", { run_id: run.run_id });
  expect([extracted.line_count, extracted.arc_count, extracted.statement_count, extracted.missed_line_count]).toEqual([6, 8, 8, 2]);
  const again = await services.executionAnalysis.analyze({ run_or_artifact: run.run_id, limit: 10, comparison_run_or_artifact: null });
  expect(again.files[0]!.missed_line_ranges).toBe("3, 8");
}, 60_000);

test("coverage: a file whose source no longer parses keeps its executed lines, with a typed limitation; the others keep their statements", async () => {
  const { services } = await project("coverage-broken", {
    "app.py": join(pythonFixtures, "coverage", "rewrites-itself.py"),
    "helper.py": join(pythonFixtures, "coverage", "branches.py"),
  });
  await declare(services, "cov", [venvPython, "app.py"]);
  const run = await capture(services, "cov", "coverage");
  expect(run.execution_status).toBe("succeeded");
  const detail = run.limitation_details.find((entry) => entry.code === "coverage_statements_unavailable");
  expect(detail).toMatchObject({ source: "extraction" });
  expect(detail!.message).toContain("1 of 2 measured file(s) (first: app.py)");
  const result = await services.executionAnalysis.analyze({ run_or_artifact: run.run_id, limit: 10, comparison_run_or_artifact: null });
  const byFile = new Map(result.files.map((file) => [file.file, file]));
  expect(byFile.get("helper.py")).toMatchObject({ statement_count: 8, missed_line_ranges: "3, 8" });
  expect(byFile.get("app.py")).toMatchObject({ statement_count: null, missed_line_ranges: null, missed_line_count: null });
  expect(byFile.get("app.py")!.executed_line_count).toBeGreaterThan(0);
  expect(result.limitations.some((limitation) => limitation.includes("first: app.py"))).toBe(true);
}, 60_000);

test("memray: analyze_memory peak within 10% of a known 50 MiB allocation", async () => {
  const { services } = await project("memray", { "mem.py": join(pythonFixtures, "memray", "allocate.py") });
  await declare(services, "mem", [venvPython, "mem.py"]);
  const run = await capture(services, "mem", "memray");
  expect(run.analysis?.kind).toBe("memory");
  expect((run.analysis!.summary!.top_allocations as { function: string }[])[0]!.function).toBe("hold_buffer");
  expect(run.analysis?.summary?.retained_bytes).toBeGreaterThan(0);
  const result = await services.memoryAnalysis.analyze({ run_or_artifact: run.run_id, limit: 5 });
  const known = 50 * 1024 * 1024;
  expect(Math.abs(result.peak_bytes! - known) / known).toBeLessThan(0.1);
  expect(result.top_allocations[0]!.function).toBe("hold_buffer");
  const extracted = await services.extraction.extract("memray", { run_id: run.run_id });
  expect(extracted.peak_bytes).toBe(result.peak_bytes);
}, 60_000);

test("memray leak: the leaking function ranks first for retained memory; a larger allocation freed before exit does not", async () => {
  const { services } = await project("memray-leak", { "leak.py": join(pythonFixtures, "memray", "leak.py") });
  await declare(services, "leak", [venvPython, "leak.py"]);
  const run = await capture(services, "leak", "memray");
  const result = await services.memoryAnalysis.analyze({ run_or_artifact: run.run_id, limit: 5 });
  const leaked = 63 * 1024 * 512;
  // At the high-water mark the 63 MiB transient buffer dominates; at exit only the 31.5 MiB one is held.
  expect(result.top_allocations[0]!.function).toBe("transient_peak");
  expect(result.retained_allocations[0]!.function).toBe("leak");
  expect(result.retained_allocations[0]!.unit).toBe("retained_bytes");
  expect(Math.abs(result.retained_allocations[0]!.self_weight - leaked)).toBeLessThan(64 * 1024);
  expect(result.retained_allocations.some((hotspot) => hotspot.function === "transient_peak")).toBe(false);
  const hotspots = await services.analysis.hotspots({
    run_or_artifact: run.run_id,
    limit: 3,
    group_by: "function",
    order_by: "self",
    unit: "retained_bytes",
    thread: null,
    per_thread: false,
    cursor: null,
  });
  expect(hotspots.hotspots[0]!.function).toBe("leak");
  // A drill-down without a unit reads the frame's own stacks: the leak's retained bytes.
  const examples = await services.analysis.stackExamples({
    run_or_artifact: run.run_id,
    frame_id: result.retained_allocations[0]!.frame_id,
    limit: 3,
    cursor: null,
    unit: null,
    thread: null,
  });
  expect(examples.unit).toBe("retained_bytes");
  expect(examples.examples[0]!.frames.at(-1)!.function).toBe("leak");
}, 60_000);

test("torch.profiler: matmul is the top CPU operator, with shapes and [memory] allocations", async () => {
  const { services } = await project("torch", { "mm.py": join(pythonFixtures, "torch", "matmul.py") });
  await declare(services, "mm", [venvPython, "mm.py"]);
  const run = await capture(services, "mm", "torch.profiler");
  expect(run.analysis?.kind).toBe("operators");
  expect((run.analysis!.summary!.operators as { name: string }[])[0]!.name).toBe("aten::mm");
  expect(run.next_tool).toBe("analyze_pytorch");
  const result = await services.traceAnalysis.pytorch({ run_or_artifact: run.run_id, limit: 5, order_by: "self", cursor: null });
  expect(result.operators[0]!.name).toBe("aten::mm");
  expect(result.operators[0]!.calls).toBe(20);
  expect(result.operators[0]!.shapes).toContain("[[512,512],[512,512]]");
  expect(result.allocations.allocation_count).toBeGreaterThan(0);
  const launches = await services.traceAnalysis.acceleratorLaunches({
    run_or_artifact: run.run_id,
    limit: 5,
    comparison_run_or_artifact: null,
    phase: null,
  });
  expect(launches.evidence.status).toBe("empty");
  const trace = run.artifact_ids.find((id) => services.runs.getArtifact(id).kinds.includes("execution_trace"))!;
  const window = await services.traceAnalysis.window({
    artifact_id: trace,
    start_ns: 0,
    end_ns: Number.MAX_SAFE_INTEGER,
    limit: 10,
    cursor: null,
  });
  expect(window.returned).toBe(10);
  const next = await services.traceAnalysis.window({
    artifact_id: trace,
    start_ns: 0,
    end_ns: Number.MAX_SAFE_INTEGER,
    limit: 10,
    cursor: window.next_cursor,
  });
  expect(next.events[0]!.ts_ns).toBeGreaterThanOrEqual(window.events[9]!.ts_ns);
  const invalid = await failure(() =>
    services.traceAnalysis.window({ artifact_id: trace, start_ns: 5, end_ns: 5, limit: 10, cursor: null }),
  );
  expect(invalid.code).toBe("INVALID_ARGUMENTS");
  expect(invalid.details.fields).toEqual([{ field: "end_ns", message: "must be greater than start_ns", type: "greater_than" }]);
}, 90_000);

test("perf: the hot C function of a small compiled program", async () => {
  const { root, services } = await project("perf", { "hot.c": join(pythonFixtures, "perf", "hot.c") });
  expect(
    Bun.spawnSync(["gcc", "-O1", "-fno-omit-frame-pointer", "-fno-inline", "-o", join(root, "hot"), join(root, "hot.c")]).exitCode,
  ).toBe(0);
  await declare(services, "hot", [join(root, "hot")]);
  const run = await capture(services, "hot", "perf");
  expect((await hotspots(services, run.run_id)).hotspots[0]!.function).toBe("hot_loop");
  expect((run.analysis!.summary!.hotspots as { function: string }[])[0]!.function).toBe("hot_loop");
  expect(run.next_tool).toBe("get_frame_callers");
}, 60_000);

test("python-startup: the slow-importing package is the top package", async () => {
  const { services } = await project("startup", {
    "entry.py": join(pythonFixtures, "startup", "entry.py"),
    slowpkg: join(pythonFixtures, "startup", "slowpkg"),
  });
  await declare(services, "start", [venvPython, "entry.py"]);
  const run = await capture(services, "start", "python-startup", { samples: 2 });
  expect(run.analysis?.kind).toBe("imports");
  expect((run.analysis!.summary!.imports as { group: string }[])[0]!.group).toBe("slowpkg");
  expect((run.analysis!.summary!.startup as { name: string; count: number }[]).find((row) => row.name === "startup.wall_ns")?.count).toBe(
    2,
  );
  expect(run.next_tool).toBe("query_measurements");
  const extracted = await services.extraction.extract("python_startup", { run_id: run.run_id });
  expect(extracted.top_package).toBe("slowpkg");
  expect(extracted.sample_count).toBe(2);
}, 60_000);

test("pyperf: every value and every warm-up", async () => {
  const { services } = await project("pyperf", { "app.py": join(pythonFixtures, "coverage", "branches.py") });
  await declare(services, "app", [venvPython, "app.py"]);
  const run = await capture(services, "app", "pyperf", { processes: 2, values: 2, warmups: 1, loops: 1 });
  expect(run.analysis?.kind).toBe("benchmark");
  // Warm-ups are left out of the summary: 2 processes × 2 values.
  expect((run.analysis!.summary!.groups as { name: string; count: number }[]).find((row) => row.name === "pyperf.workload")?.count).toBe(4);
  expect(run.next_arguments).toEqual({ run_id: run.run_id, name_prefix: "pyperf." });
  const extracted = await services.extraction.extract("pyperf", { run_id: run.run_id });
  expect(extracted.value_count).toBe(4);
  expect(extracted.warmup_count).toBe(2);
  const values = await services.measurements.query({
    run_id: run.run_id,
    artifact_id: null,
    name_prefix: "pyperf.workload",
    include_warmups: false,
    limit: 100,
    cursor: null,
  });
  const all = await services.measurements.query({
    run_id: run.run_id,
    artifact_id: null,
    name_prefix: "pyperf.workload",
    include_warmups: true,
    limit: 100,
    cursor: null,
  });
  expect(values.measurements.filter((row) => row.name === "pyperf.workload")).toHaveLength(4);
  expect(all.measurements.filter((row) => row.name === "pyperf.workload" && row.is_warmup)).toHaveLength(2);
}, 60_000);

test("V8: the hot JS function of a node script", async () => {
  const { services } = await project("v8", { "busy.js": join(repositoryRoot, "test", "fixtures", "formats", "busy.js") });
  await declare(services, "js", ["node", "busy.js"]);
  const run = await capture(services, "js", "v8");
  expect((await hotspots(services, run.run_id)).hotspots[0]!.function).toBe("hotLoop");
  expect((run.analysis!.summary!.hotspots as { function: string }[])[0]!.function).toBe("hotLoop");
}, 60_000);

describe("a missing tool is CAPABILITY_UNAVAILABLE with the exact remedy", () => {
  test("perf not on PATH", async () => {
    const { root, services } = await project("no-perf");
    await declare(services, "true", ["/bin/true"]);
    const saved = process.env.PATH;
    process.env.PATH = venvBin;
    try {
      const error = await failure(() =>
        services.captures.plan({
          workload_name: "true",
          adapter: "perf",
          parameters: {},
          adapter_options: {},
          preflight_mode: "auto",
          capture_mode: "auto",
        }),
      );
      expect(error.code).toBe("CAPABILITY_UNAVAILABLE");
      expect(error.remediation.join(" ")).toContain("apt-get install linux-perf");
    } finally {
      process.env.PATH = saved;
    }
    expect(root).toBeTruthy();
  });

  test("python modules missing from the workload's interpreter", async () => {
    const bare = Bun.spawnSync([venvPython, "-c", "import sys; print(sys.base_prefix)"]).stdout.toString().trim();
    const { root, services } = await project("no-modules", { "app.py": join(pythonFixtures, "coverage", "branches.py") });
    const made = Bun.spawnSync([venvPython, "-m", "venv", "--without-pip", join(root, "bare")]);
    expect(made.exitCode).toBe(0);
    const python = join(root, "bare", "bin", "python");
    await declare(services, "app", [python, "app.py"]);
    await declare(services, "tests", [python, "-m", "pytest", "app.py"]);
    const expected: Record<string, string> = {
      pytest: `${python} -m pip install pytest==9.2.0 pytest-xdist==3.8.0`,
      coverage: `${python} -m pip install coverage==7.17.5`,
      memray: `${python} -m pip install memray==1.20.0`,
      pyperf: `${python} -m pip install pyperf==2.11.0`,
      "torch.profiler": `${python} -m pip install torch==2.13.0`,
    };
    for (const [adapter, remedy] of Object.entries(expected)) {
      const error = await failure(() =>
        services.captures.plan({
          workload_name: adapter === "pytest" ? "tests" : "app",
          adapter,
          parameters: {},
          adapter_options: {},
          preflight_mode: "auto",
          capture_mode: "auto",
        }),
      );
      expect(error.code).toBe("CAPABILITY_UNAVAILABLE");
      expect(error.remediation.join(" ")).toContain(remedy);
      expect(error.nextTool).toBe("list_capabilities");
    }
    expect(bare).toBeTruthy();
  }, 60_000);

  test("v8 on a non-node workload", async () => {
    const { services } = await project("no-node", { "app.py": join(pythonFixtures, "coverage", "branches.py") });
    await declare(services, "app", [venvPython, "app.py"]);
    const error = await failure(() =>
      services.captures.plan({
        workload_name: "app",
        adapter: "v8",
        parameters: {},
        adapter_options: {},
        preflight_mode: "auto",
        capture_mode: "auto",
      }),
    );
    expect(error.code).toBe("INVALID_CAPTURE_PLAN");
    expect(error.remediation.join(" ")).toContain("node <script>");
  });
});
