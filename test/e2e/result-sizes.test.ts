/**
 * What every tool answers by default on a populated workspace (100 runs: imports, real captures, a
 * pytest run, a small experiment), over real stdio against the compiled binary: each answer's text is at
 * most 8,000 characters, and no answer names the project root or the temporary folder.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { tmpdir } from "node:os";
import { realpathSync } from "node:fs";
import { dirname, join } from "node:path";
import { callTool, connectMcp, repositoryRoot, temporaryFolder, type McpSession } from "../support/binary.ts";
import { populateWorkspace, writePopulatedProject, type PopulatedIds } from "../support/populated-workspace.ts";

// About 100 imports, four captures and a four-trial experiment through the binary, then a call of every tool.
setDefaultTimeout(300_000);

let session: McpSession;
let project: string;
let ids: PopulatedIds;

beforeAll(async () => {
  project = temporaryFolder("result-sizes");
  writePopulatedProject(project);
  // A package index on a closed loopback port and a private data folder: a setup started by the test fails
  // at once instead of installing anything.
  session = await connectMcp(project, [], {
    PYTHONDONTWRITEBYTECODE: "1",
    PIP_INDEX_URL: "http://127.0.0.1:9/simple",
    XDG_DATA_HOME: temporaryFolder("result-sizes-data"),
  });
  ids = await populateWorkspace(session, 100);
});

afterAll(async () => {
  await session?.close();
});

/** Each registered tool with its minimal valid arguments (required fields only, taken from the workspace). */
function minimalArguments(): Record<string, Record<string, unknown>> {
  const run = ids.hotRunId;
  return {
    initialize_workspace: {},
    workspace_status: {},
    workload_configuration_status: {},
    configure_workload: { name: "extra", operation: "create", argv: ["python3", "hot.py"] },
    validate_workspace: {},
    list_capabilities: {},
    list_declared_workflows: {},
    get_declared_workflow: { name: "hot" },
    plan_capture: { workload_name: "hot", adapter: "py-spy" },
    execute_capture_plan: { plan_id: "0".repeat(64) },
    start_detached_capture: { plan_id: "0".repeat(64), idempotency_key: "sizes-detached-1" },
    get_detached_capture: { run_id: run },
    cancel_detached_capture: { run_id: run },
    import_artifact: { path: "py-spy.speedscope.json" },
    list_runs: {},
    get_run: { run_id: run },
    list_artifacts: {},
    get_artifact: { artifact_id: ids.speedscopeArtifactId },
    analyze_hotspots: { run_or_artifact: run },
    get_frame_callers: { run_or_artifact: run, frame_id: ids.frameId },
    get_frame_callees: { run_or_artifact: run, frame_id: ids.frameId },
    get_stack_examples: { run_or_artifact: run, frame_id: ids.frameId },
    analyze_memory: { run_or_artifact: run },
    analyze_execution: { run_or_artifact: run },
    analyze_pytorch: { run_or_artifact: run },
    analyze_accelerator_launches: { run_or_artifact: run },
    get_trace_window: { artifact_id: ids.traceArtifactId, start_ns: 0, end_ns: 10_000_000_000_000 },
    analyze_failures: {},
    query_measurements: {},
    get_evidence: { ref_type: "analysis", ref_id: ids.analysisId },
    summarize_evidence: { request: {} },
    get_native_viewer_plan: { run_or_artifact: run },
    configure_experiment: { name: "sizes", operation: "create", workload: "busy", factors: { variant: ["base", "more"] } },
    plan_experiment: { experiment_name: "ab" },
    run_experiment: { plan_id: "0".repeat(64) },
    get_experiment: { experiment_id: ids.experimentId },
    list_experiment_trials: { experiment_id: ids.experimentId },
    freeze_run_set: { run_ids: [ids.importRunId] },
    compare_run_sets: { baseline_run_set_id: ids.runSetIds[0], candidate_run_set_id: ids.runSetIds[1] },
    record_comparison: { baseline_run_set_id: ids.runSetIds[0], candidate_run_set_id: ids.runSetIds[1] },
    analyze_scaling: { experiment_id: ids.experimentId },
    record_analysis: { recipe: "failures" },
    create_investigation: { question: "Is the import path slow?" },
    list_investigations: {},
    get_investigation: { investigation_id: ids.investigationId },
    record_hypothesis: {
      investigation_id: ids.investigationId,
      claim: "light_work is cheap",
      prediction: "light_work holds little self time",
      discriminating_condition: "light_work self share below a tenth",
    },
    get_hypothesis: { hypothesis_id: ids.hypothesisId },
    record_finding: {
      kind: "performance",
      title: "t",
      claim: "c",
      evidence_level: "inferred",
      confidence: "low",
      assessment: "unassessed",
    },
    get_finding: { finding_id: ids.findingId },
    list_findings: {},
    extract_pyperf: { run_id: run },
    extract_benchmark_samples: { run_id: run },
    extract_python_startup: { run_id: run },
    extract_pytest: { run_id: ids.pytestRunId },
    extract_coverage: { run_id: run },
    extract_memray: { run_id: run },
    extract_perfetto: { run_id: run },
    extract_nsight_systems: { run_id: run },
    extract_observations: { run_id: run },
    // Setup installs nothing here: the session's package index refuses connections (see beforeAll).
    start_capability_setup: { adapters: ["py-spy"], idempotency_key: "sizes-setup-1" },
    get_capability_setup: { operation_id: "op-missing" },
    cancel_capability_setup: { operation_id: "op-missing" },
    prepare_capabilities: { adapters: ["py-spy"] },
    prepare_adapter: { adapter: "none", distribution: "none" },
    prepare_workload_dependencies: { workload_name: "hot" },
    import_xctrace: { path: "missing.trace" },
    register_artifact_pipeline: {
      request: {
        run_id: ids.importRunId,
        pipeline_name: "sizes",
        pipeline_schema: "v1",
        producer: "tests",
        producer_version: "1",
        stages: [{ name: "parse", ordinal: 0, status: "available", format: "json", format_schema: "v1" }],
      },
    },
    compare_artifact_pipelines: { baseline_pipeline_id: "pipeline-missing", candidate_pipeline_id: "pipeline-missing" },
    plan_reduction: {
      request: { original_artifact_id: ids.speedscopeArtifactId, predicate_workload: "outcome", partitioner: "json_top_level" },
    },
    execute_reduction: { plan_id: "0".repeat(64) },
    get_reduction: { reduction_id: "reduction-missing" },
  };
}

test("every registered tool's default answer on a 100-run workspace is at most 8,000 characters and names no host path", async () => {
  expect(ids.runCount).toBeGreaterThanOrEqual(100);
  const listed = (await session.client.listTools()).tools.map((tool) => tool.name);
  const calls = minimalArguments();
  expect(Object.keys(calls).sort()).toEqual([...listed].sort());
  const sizes: Record<string, number> = {};
  const hostPaths: string[] = [];
  // The project, the temporary folder, and where the tools and the interpreter live (executables outside the
  // project are shown by name).
  const tools = join(repositoryRoot, ".tools");
  const hostRoots = [
    project,
    realpathSync(tmpdir()),
    tools,
    realpathSync(tools),
    dirname(realpathSync(join(tools, "venv", "bin", "python3"))),
  ];
  for (const name of listed) {
    const answer = await callTool(session, name, calls[name]!);
    sizes[name] = answer.text.length;
    // The text is the envelope itself, so reading it back gives the same object as structuredContent.
    expect(JSON.parse(answer.text)).toEqual(answer.envelope);
    const everything = JSON.stringify(answer.raw);
    for (const root of hostRoots) if (everything.includes(root)) hostPaths.push(`${name}: ${root}`);
  }
  const over = Object.entries(sizes).filter(([, size]) => size > 8000);
  console.log(JSON.stringify(sizes));
  expect(over).toEqual([]);
  expect(hostPaths).toEqual([]);
});
