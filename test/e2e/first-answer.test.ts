// An agent's first answers over real stdio against the compiled binary: the capture receipt carries the
// adapter's default analysis, a failed run says what it printed and what it died of, and the path from a
// fresh project to hotspots takes five calls without an error.
import { afterEach, describe, expect, setDefaultTimeout, test } from "bun:test";
import { cpSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { callTool, connectMcp, repositoryRoot, runCli, type McpSession } from "../support/binary.ts";
import { python, workloadProject } from "../support/project.ts";
import { waitFor } from "../support/wait.ts";

// Real py-spy, pytest and memray captures through the binary.
setDefaultTimeout(180_000);

let session: McpSession | undefined;
afterEach(async () => {
  await session?.close();
  session = undefined;
});

/** Every tool call an agent makes, counted, with the ones that came back as errors. */
function countingAgent(current: McpSession) {
  const calls: { name: string; isError: boolean }[] = [];
  return {
    calls,
    errors: () => calls.filter((call) => call.isError).map((call) => call.name),
    async call(name: string, args: Record<string, unknown> = {}) {
      const outcome = await callTool(current, name, args);
      calls.push({ name, isError: outcome.isError });
      return outcome;
    },
  };
}

/** The result as a client receives it: the envelope's JSON, which the default budget bounds at 8,000 characters. */
function resultCharacters(outcome: { envelope: unknown }): number {
  return JSON.stringify(outcome.envelope).length;
}

describe("the first answer comes with the receipt", () => {
  test("from a fresh project: hotspots of a CPU-bound script in 5 calls without an error, callers in one more", async () => {
    const project = workloadProject("first-answer");
    session = await connectMcp(project);
    const agent = countingAgent(session);

    const status = await agent.call("workspace_status");
    expect(status.envelope.result).toMatchObject({ workspace_found: false, code: "WORKSPACE_NOT_FOUND" });
    await agent.call(status.envelope.result.next_tool, status.envelope.result.next_arguments);
    await agent.call("configure_workload", { name: "hot", operation: "create", argv: [python(), "hot.py", "1.5"] });
    const plan = await agent.call("plan_capture", { workload_name: "hot", adapter: "py-spy" });
    const executed = await agent.call("execute_capture_plan", { plan_id: plan.envelope.result.plan_id });

    expect(agent.calls.map((call) => call.name)).toEqual([
      "workspace_status",
      "initialize_workspace",
      "configure_workload",
      "plan_capture",
      "execute_capture_plan",
    ]);
    expect(agent.errors()).toEqual([]);
    const receipt = executed.envelope.result;
    expect(receipt.execution_status).toBe("succeeded");
    expect(receipt.analysis.kind).toBe("hotspots");
    expect(receipt.analysis.status).toBe("available");
    const top = receipt.analysis.summary.hotspots[0];
    expect(top.function).toBe("burn_cpu");
    expect(top.file).toBe("hot.py");
    // burn_cpu does ~8x the CPU work of light_work per round (process_time), so its share is ≈ 0.89 of ~150
    // samples (sd ≈ 0.026); falling below 0.5 would take a deviation of over 14 binomial standard deviations.
    expect(top.self_share).toBeGreaterThan(0.5);
    expect(receipt.analysis.summary.hotspots.length).toBeLessThanOrEqual(5);
    expect(resultCharacters(executed)).toBeLessThanOrEqual(8_000);

    // The receipt names the next step with its exact arguments: who calls the top hotspot.
    expect(receipt.next_tool).toBe("get_frame_callers");
    expect(receipt.next_arguments).toEqual({ run_or_artifact: receipt.run_id, frame_id: top.frame_id });
    const callers = await agent.call(receipt.next_tool, receipt.next_arguments);
    expect(callers.envelope.result.edges[0].function).toBe("run_job");
    expect(agent.calls).toHaveLength(6);
    expect(agent.errors()).toEqual([]);
  });

  test("a pytest capture's receipt names the failing test and the slowest ones, and points at the failures", async () => {
    const project = workloadProject("first-answer-pytest");
    cpSync(join(repositoryRoot, "test", "fixtures", "python", "pytest-suite"), join(project, "suite"), { recursive: true });
    session = await connectMcp(project, ["--init"], { PYTHONDONTWRITEBYTECODE: "1" });
    const agent = countingAgent(session);
    await agent.call("configure_workload", {
      name: "tests",
      operation: "create",
      argv: [python(), "-m", "pytest", "-q", "-p", "no:cacheprovider", "suite"],
    });
    const plan = await agent.call("plan_capture", { workload_name: "tests", adapter: "pytest" });
    const executed = await agent.call("execute_capture_plan", { plan_id: plan.envelope.result.plan_id });
    expect(agent.errors()).toEqual([]);
    const receipt = executed.envelope.result;
    // pytest exits 1 when a test fails: a recorded failed run, not an error.
    expect(receipt.execution_status).toBe("failed");
    expect(receipt.analysis.kind).toBe("test_outcomes");
    const summary = receipt.analysis.summary;
    expect(summary.counts).toEqual({ passed: 4, failed: 1, skipped: 1, xfailed: 1, xpassed: 1 });
    expect(summary.failure_total).toBe(1);
    expect(summary.failures[0]).toMatchObject({ nodeid: "suite/test_suite.py::test_fails", outcome: "failed" });
    expect(summary.failures[0].message).toContain("assert");
    // test_slow sleeps 0.4 s; the next slowest spends ~0.05 s in a fixture.
    expect(summary.slowest[0].nodeid).toBe("suite/test_suite.py::test_slow");
    expect(summary.slowest.length).toBeLessThanOrEqual(5);
    expect(resultCharacters(executed)).toBeLessThanOrEqual(8_000);

    // Never analyze_hotspots for a test run: the next step is the failure clusters of this workload.
    expect(receipt.next_tool).toBe("analyze_failures");
    expect(receipt.next_arguments).toEqual({ filter: { workload_name: "tests" } });
    const failures = await agent.call(receipt.next_tool, receipt.next_arguments);
    const tests = failures.envelope.result.clusters.filter((cluster: any) => cluster.source === "test");
    expect(tests[0].examples[0].subject).toBe("suite/test_suite.py::test_fails");
    expect(agent.errors()).toEqual([]);
  });

  test("a memray capture's receipt has peak, retained and top allocations; analyze_memory pages that list", async () => {
    const project = workloadProject("first-answer-memray");
    writeFileSync(
      join(project, "hold.py"),
      [
        "def big():",
        "    return bytearray(30 * 1024 * 1024)",
        "def medium():",
        "    return bytearray(20 * 1024 * 1024)",
        "def small():",
        "    return bytearray(10 * 1024 * 1024)",
        "kept = [big(), medium(), small()]",
        "",
      ].join("\n"),
    );
    session = await connectMcp(project, ["--init"]);
    await callTool(session, "configure_workload", { name: "hold", operation: "create", argv: [python(), "hold.py"] });
    const plan = await callTool(session, "plan_capture", { workload_name: "hold", adapter: "memray" });
    const executed = await callTool(session, "execute_capture_plan", { plan_id: plan.envelope.result.plan_id });
    const receipt = executed.envelope.result;
    expect(receipt.analysis.kind).toBe("memory");
    const summary = receipt.analysis.summary;
    expect(summary.peak_bytes).toBeGreaterThanOrEqual(60 * 1024 * 1024);
    // Still allocated at exit: the three buffers the module keeps.
    expect(summary.retained_bytes).toBeGreaterThanOrEqual(60 * 1024 * 1024);
    expect(summary.top_allocations.slice(0, 3).map((entry: any) => entry.function)).toEqual(["big", "medium", "small"]);
    expect(receipt.next_tool).toBe("get_stack_examples");

    const first = await callTool(session, "analyze_memory", { run_or_artifact: receipt.run_id, limit: 1 });
    expect(first.envelope.result.returned).toBe(1);
    expect(first.envelope.result.total).toBeGreaterThanOrEqual(3);
    expect(first.envelope.result.truncated).toBe(true);
    expect(first.envelope.result.top_allocations[0].function).toBe("big");
    const second = await callTool(session, "analyze_memory", {
      run_or_artifact: receipt.run_id,
      limit: 1,
      cursor: first.envelope.result.next_cursor,
    });
    expect(second.envelope.result.top_allocations[0].function).toBe("medium");
    expect(second.envelope.result.total).toBe(first.envelope.result.total);
  });

  test("a memray leak's receipt leads with what was retained at exit and drills into the leaking frame in retained bytes", async () => {
    const project = workloadProject("first-answer-leak");
    cpSync(join(repositoryRoot, "test", "fixtures", "python", "memray", "leak.py"), join(project, "leak.py"));
    session = await connectMcp(project, ["--init"]);
    const agent = countingAgent(session);
    await agent.call("configure_workload", { name: "leak", operation: "create", argv: [python(), "leak.py"] });
    const plan = await agent.call("plan_capture", { workload_name: "leak", adapter: "memray" });
    const executed = await agent.call("execute_capture_plan", { plan_id: plan.envelope.result.plan_id });
    const receipt = executed.envelope.result;
    const summary = receipt.analysis.summary;
    // leak.py frees a 63 MiB buffer (the peak), then keeps 31.5 MiB until exit: half the peak is still held.
    expect(summary.top_allocations[0].function).toBe("transient_peak");
    expect(summary.retained_allocations[0].function).toBe("leak");
    expect(summary.leading_ranking).toBe("retained_at_exit");
    expect(receipt.next_tool).toBe("get_stack_examples");
    expect(receipt.next_arguments).toEqual({
      run_or_artifact: receipt.run_id,
      frame_id: summary.retained_allocations[0].frame_id,
      unit: "retained_bytes",
    });
    const examples = await agent.call(receipt.next_tool, receipt.next_arguments);
    expect(examples.envelope.result.unit).toBe("retained_bytes");
    expect(examples.envelope.result.frame.function).toBe("leak");
    expect(examples.envelope.result.examples[0].weight).toBeGreaterThanOrEqual(31 * 1024 * 1024);
    expect(agent.errors()).toEqual([]);
  });

  test("a coverage capture's receipt names the missed lines per file; analyze_execution pages every file within the budget", async () => {
    const project = workloadProject("first-answer-coverage");
    // 40 modules with one used function (its `else` never runs) and two unused ones, and a main script
    // with a larger unused function, so main.py has the most missed lines.
    const module = [
      "def used(x):",
      "    if x > 0:",
      "        return x",
      "    return -x",
      "def unused_one():",
      "    a = 1",
      "    b = 2",
      "    return a + b",
      "def unused_two():",
      "    return 0",
      "",
    ].join("\n");
    const names = Array.from({ length: 40 }, (_, index) => `module_${String(index).padStart(2, "0")}`);
    for (const name of names) writeFileSync(join(project, `${name}.py`), module);
    writeFileSync(
      join(project, "main.py"),
      [
        ...names.map((name) => `import ${name}`),
        "def never_called():",
        ...Array.from({ length: 8 }, (_, index) => `    value_${index} = ${index}`),
        "    return 0",
        ...names.map((name) => `${name}.used(1)`),
        "",
      ].join("\n"),
    );
    session = await connectMcp(project, ["--init"], { PYTHONDONTWRITEBYTECODE: "1" });
    const agent = countingAgent(session);
    await agent.call("configure_workload", { name: "modules", operation: "create", argv: [python(), "main.py"] });
    const plan = await agent.call("plan_capture", { workload_name: "modules", adapter: "coverage" });
    const executed = await agent.call("execute_capture_plan", { plan_id: plan.envelope.result.plan_id });
    const receipt = executed.envelope.result;
    expect(receipt.analysis.kind).toBe("coverage");
    const summary = receipt.analysis.summary;
    // Each module: 10 statements, 5 missed; main.py: 40 imports + def + 40 calls ran, the 9 body lines did not.
    expect(summary).toMatchObject({ statement_count: 40 * 10 + 90, missed_line_count: 40 * 5 + 9, total: 41 });
    expect(summary.files[0]).toMatchObject({ file: "main.py", missed_line_count: 9, missed_line_ranges: "42-50" });
    expect(summary.files[1]).toMatchObject({
      file: "module_00.py",
      statement_count: 10,
      covered_line_count: 5,
      missed_line_count: 5,
      percent_covered: 50,
      missed_line_ranges: "4, 6-8, 10",
      missed_branches: "2->4",
    });
    expect(summary.files.length).toBeLessThanOrEqual(5);
    expect(resultCharacters(executed)).toBeLessThanOrEqual(8_000);
    expect(receipt.next_tool).toBe("analyze_execution");

    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page: any = await agent.call("analyze_execution", { ...receipt.next_arguments, limit: 1000, ...(cursor ? { cursor } : {}) });
      expect(resultCharacters(page)).toBeLessThanOrEqual(8_000);
      expect(page.envelope.result.total).toBe(41);
      seen.push(...page.envelope.result.files.map((file: any) => file.file));
      cursor = page.envelope.result.next_cursor;
      pages += 1;
    } while (cursor);
    // Every file once, most missed first, over more than one page.
    expect(pages).toBeGreaterThan(1);
    expect(seen).toEqual(["main.py", ...names.map((name) => `${name}.py`)]);
    expect(agent.errors()).toEqual([]);
  });

  test("when coverage cannot analyze a file after the run, the capture still succeeds with a typed limitation and that file's executed lines", async () => {
    const project = workloadProject("first-answer-coverage-limited");
    cpSync(join(repositoryRoot, "test", "fixtures", "python", "coverage", "rewrites-itself.py"), join(project, "app.py"));
    cpSync(join(repositoryRoot, "test", "fixtures", "python", "coverage", "branches.py"), join(project, "helper.py"));
    session = await connectMcp(project, ["--init"], { PYTHONDONTWRITEBYTECODE: "1" });
    const agent = countingAgent(session);
    await agent.call("configure_workload", { name: "app", operation: "create", argv: [python(), "app.py"] });
    const plan = await agent.call("plan_capture", { workload_name: "app", adapter: "coverage" });
    const executed = await agent.call("execute_capture_plan", { plan_id: plan.envelope.result.plan_id });
    const receipt = executed.envelope.result;
    expect(receipt.execution_status).toBe("succeeded");
    expect(receipt.validation_status).toBe("passed");
    const limitation = receipt.limitation_details.find((detail: any) => detail.code === "coverage_statements_unavailable");
    expect(limitation).toMatchObject({ source: "extraction" });
    expect(limitation.message).toContain("first: app.py");
    expect(limitation.message).not.toContain(project);
    const files = new Map(receipt.analysis.summary.files.map((file: any) => [file.file, file]));
    expect(files.get("helper.py")).toMatchObject({ missed_line_ranges: "3, 8" });
    expect(files.get("app.py")).toMatchObject({ statement_count: null, missed_line_ranges: null });
    const run = await agent.call("get_run", { run_id: receipt.run_id });
    expect(run.envelope.result.limitation_details.map((detail: any) => detail.code)).toContain("coverage_statements_unavailable");
    expect(agent.errors()).toEqual([]);
  });

  test("a detached capture, once terminal, comes with the same first answer", async () => {
    const project = workloadProject("first-answer-detached");
    session = await connectMcp(project, ["--init"]);
    await callTool(session, "configure_workload", { name: "hot", operation: "create", argv: [python(), "hot.py", "1.0"] });
    const plan = await callTool(session, "plan_capture", { workload_name: "hot", adapter: "py-spy" });
    const started = await callTool(session, "start_detached_capture", {
      plan_id: plan.envelope.result.plan_id,
      idempotency_key: "first-answer-detached",
    });
    expect(started.envelope.result.analysis).toBeNull();
    const terminal = await waitFor("the detached capture to finish", async () => {
      const status = await callTool(session!, "get_detached_capture", { run_id: started.envelope.result.run_id });
      return status.envelope.result.state === "terminal" ? status.envelope.result : null;
    });
    expect(terminal.analysis.kind).toBe("hotspots");
    expect(terminal.analysis.summary.hotspots[0].function).toBe("burn_cpu");
    expect(terminal.next_tool).toBe("get_frame_callers");
  });
});

describe("what happened in the run is visible", () => {
  test("a crashing script: the receipt and get_run show its exception and output tail, secrets redacted; analyze_failures lists it", async () => {
    const project = workloadProject("first-answer-crash");
    writeFileSync(
      join(project, "crash.py"),
      [
        "import sys",
        "print('loading config', flush=True)",
        "print('API_TOKEN=tok-12345-secret', file=sys.stderr, flush=True)",
        "def inner(x):",
        "    raise ValueError(f'bad value {x}')",
        "def outer():",
        "    inner(42)",
        "outer()",
        "",
      ].join("\n"),
    );
    session = await connectMcp(project, ["--init"]);
    const agent = countingAgent(session);
    await agent.call("configure_workload", { name: "crash", operation: "create", argv: [python(), "crash.py"] });
    const plan = await agent.call("plan_capture", { workload_name: "crash", adapter: "command" });
    const executed = await agent.call("execute_capture_plan", { plan_id: plan.envelope.result.plan_id });
    const receipt = executed.envelope.result;
    expect(receipt.execution_status).toBe("failed");
    expect(receipt.exit_code).toBe(1);
    expect(receipt.exception).toMatchObject({ exception_type: "ValueError", message: "bad value 42" });
    expect(receipt.output_tail.stdout.tail).toBe("loading config\n");
    expect(receipt.next_tool).toBe("get_run");

    const run = await agent.call(receipt.next_tool, receipt.next_arguments);
    const manifest = run.envelope.result;
    expect(manifest.exception.exception_type).toBe("ValueError");
    expect(manifest.exception.message).toBe("bad value 42");
    expect(manifest.exception.frames.map((frame: any) => frame.function)).toEqual(["<module>", "outer", "inner"]);
    // Project files are named relative to the project; no host path reaches the agent.
    expect(manifest.exception.frames[2]).toEqual({ file: "crash.py", line: 5, function: "inner" });
    expect(manifest.process.stderr.tail).toContain("ValueError: bad value 42");
    expect(manifest.process.stderr.tail).toContain("API_TOKEN=[redacted]");
    expect(manifest.process.stderr.tail).not.toContain("tok-12345-secret");
    expect(manifest.process.stderr.tail).not.toContain(project);
    expect(resultCharacters(run)).toBeLessThanOrEqual(8_000);

    // limit is optional, as on every other analysis.
    const failures = await agent.call("analyze_failures");
    const cluster = failures.envelope.result.clusters.find((entry: any) => entry.source === "run");
    expect(cluster.signature).toBe("crash (command): ValueError: bad value N");
    expect(cluster.examples[0]).toMatchObject({ message: "ValueError: bad value 42", location: "crash.py:5 in inner" });
    expect(agent.errors()).toEqual([]);
  });
});

describe("small wrongs", () => {
  test("comparing on a metric no run has is COMPARISON_INVALID naming the metrics they have, with the comparison to call instead", async () => {
    const project = workloadProject("first-answer-metric");
    session = await connectMcp(project, ["--init"]);
    await callTool(session, "configure_workload", { name: "quick", operation: "create", argv: [python(), "hot.py", "0.05"] });
    const receipts: any[] = [];
    for (let index = 0; index < 2; index += 1) {
      const plan = await callTool(session, "plan_capture", { workload_name: "quick", adapter: "command" });
      receipts.push((await callTool(session, "execute_capture_plan", { plan_id: plan.envelope.result.plan_id })).envelope.result);
    }
    const runs = receipts.map((receipt) => receipt.run_id as string);
    const compared = await callTool(session, "compare_run_sets", {
      baseline_run_set_id: runs[0],
      candidate_run_set_id: runs[1],
      metric: "no.such_metric",
    });
    expect(compared.isError).toBe(true);
    expect(compared.envelope.error.code).toBe("COMPARISON_INVALID");
    expect(compared.envelope.error.details.available_metrics).toContain("runtime.wall_time_ns");
    expect(compared.envelope.error.recovery.next_tool).toBe("compare_run_sets");
    expect(compared.envelope.error.recovery.context.arguments).toEqual({
      baseline_run_set_id: runs[0],
      candidate_run_set_id: runs[1],
      metric: "runtime.wall_time_ns",
    });
    const retried = await callTool(session, "compare_run_sets", compared.envelope.error.recovery.context.arguments);
    expect(retried.isError).toBe(false);
    expect(retried.envelope.result.metric).toBe("runtime.wall_time_ns");

    // The other two analyses whose limit used to be required: without one they get as far as the evidence
    // (a command run has no trace events, which they say with the tool that would record some).
    const launches = await callTool(session, "analyze_accelerator_launches", { run_or_artifact: runs[0] });
    expect(launches.envelope.error.code).toBe("CAPABILITY_UNAVAILABLE");
    const window = await callTool(session, "get_trace_window", { artifact_id: receipts[0].artifact_ids[0], start_ns: 0, end_ns: 10 });
    expect(window.envelope.error.code).toBe("CAPABILITY_UNAVAILABLE");
  });

  test("capture run --help lists every adapter plan_capture can run", () => {
    const help = runCli(["capture", "run", "--help"]);
    expect(help.exitCode).toBe(0);
    for (const adapter of ["command", "py-spy", "perf", "pyperf", "pytest", "coverage", "memray", "torch.profiler", "python-startup", "v8"])
      expect(help.stdout).toContain(adapter);
  });
});
