// The pytest flow an agent runs, over real stdio against the compiled binary:
// configure → plan_capture(pytest) → execute → extract_pytest → query_measurements; plus the CLI.
import { afterEach, expect, test, setDefaultTimeout } from "bun:test";
import { cpSync } from "node:fs";
import { join } from "node:path";
import { callTool, connectMcp, repositoryRoot, runCli, temporaryFolder, type McpSession } from "../support/binary.ts";

// Captures run real pytest through the compiled binary. The suite's default per-test deadline is 30 s (scripts/test-deadline.ts).
setDefaultTimeout(120_000);

let session: McpSession | undefined;
afterEach(async () => {
  await session?.close();
  session = undefined;
});

test("capture → extract_pytest → query_measurements over MCP; flameox extract and measurements query", async () => {
  const project = temporaryFolder("evidence-tools");
  cpSync(join(repositoryRoot, "test", "fixtures", "python", "pytest-suite"), join(project, "suite"), { recursive: true });
  const python = join(repositoryRoot, ".tools", "venv", "bin", "python");
  session = await connectMcp(project, [], { PYTHONDONTWRITEBYTECODE: "1" });
  const names = (await session.client.listTools()).tools.map((tool) => tool.name);
  for (const name of [
    "extract_pytest",
    "extract_perfetto",
    "analyze_pytorch",
    "analyze_failures",
    "query_measurements",
    "get_trace_window",
    "summarize_evidence",
  ])
    expect(names).toContain(name);
  expect(names.filter((name) => name === "get_evidence")).toHaveLength(1);
  await callTool(session, "initialize_workspace");
  const configured = await callTool(session, "configure_workload", {
    name: "tests",
    operation: "create",
    argv: [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "suite", "-n", "2"],
  });
  expect(configured.envelope.ok).toBe(true);
  const plan = await callTool(session, "plan_capture", { workload_name: "tests", adapter: "pytest", parameters: {} });
  expect(plan.envelope.ok).toBe(true);
  const executed = await callTool(session, "execute_capture_plan", { plan_id: plan.envelope.result.plan_id });
  expect(executed.envelope.ok).toBe(true);
  const runId = executed.envelope.result.run_id;
  const extracted = await callTool(session, "extract_pytest", { run_id: runId });
  expect(extracted.envelope.ok).toBe(true);
  expect(extracted.envelope.result.counts).toEqual({ passed: 4, failed: 1, skipped: 1, xfailed: 1, xpassed: 1, error: 0, crashed: 0 });
  expect(extracted.envelope.result.slowest[0].nodeid).toBe("suite/test_suite.py::test_slow");
  const measured = await callTool(session, "query_measurements", { run_id: runId, name_prefix: "test.duration_ns", limit: 100 });
  const totals = measured.envelope.result.measurements
    .filter((row: any) => row.phase === null)
    .sort((left: any, right: any) => right.value - left.value);
  expect(totals).toHaveLength(8);
  expect(totals[0].dimensions.nodeid).toBe("suite/test_suite.py::test_slow");
  const window = await callTool(session, "get_trace_window", { artifact_id: "sha256:00", start_ns: 10, end_ns: 10, limit: 5 });
  expect(window.envelope.error.code).toBe("INVALID_ARGUMENTS");
  expect(window.envelope.error.details.fields).toEqual([
    { field: "end_ns", message: "must be greater than start_ns", type: "greater_than" },
  ]);
  const pytorch = await callTool(session, "analyze_pytorch", { run_or_artifact: runId, limit: 5 });
  expect(pytorch.envelope.error.code).toBe("CAPABILITY_UNAVAILABLE");
  await session.close();
  session = undefined;

  const cli = runCli(["--json", "extract", "pytest", runId], { cwd: project });
  expect(cli.exitCode).toBe(0);
  expect(cli.json.counts.failed).toBe(1);
  const query = runCli(["--json", "measurements", "query", "--run-id", runId, "--name-prefix", "test.count", "--limit", "3"], {
    cwd: project,
  });
  expect(query.exitCode).toBe(0);
  expect(query.json.returned).toBe(3);
  expect(query.json.total).toBe(7);
  const failures = runCli(["--json", "analyze", "failures"], { cwd: project });
  expect(failures.exitCode).toBe(0);
  expect(failures.json.clusters.length).toBeGreaterThan(0);
}, 120_000);
