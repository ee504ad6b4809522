/**
 * A workspace with about a hundred runs, built over MCP against the compiled binary: real captures
 * (py-spy, command, pytest), a small real experiment, and imports of the recorded profiles in
 * test/fixtures/formats up to the requested run count. Tests that measure what every tool answers by
 * default (size, host paths) start from it.
 */
import { copyFileSync, cpSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { callTool, repositoryRoot, type McpSession } from "./binary.ts";
import { python } from "./project.ts";

export type PopulatedIds = {
  hotRunId: string;
  commandRunId: string;
  pytestRunId: string;
  importRunId: string;
  speedscopeArtifactId: string;
  traceArtifactId: string;
  frameId: string;
  experimentId: string;
  experimentPlanId: string;
  runSetIds: string[];
  comparisonId: string;
  investigationId: string;
  hypothesisId: string;
  findingId: string;
  analysisId: string;
  runCount: number;
};

/** Copies the fixtures and writes flameox.toml with the workloads and one two-block experiment. */
export function writePopulatedProject(root: string): void {
  const fixtures = join(repositoryRoot, "test", "fixtures");
  for (const name of ["hot.py", "outcome.py"]) copyFileSync(join(fixtures, "workloads", name), join(root, name));
  copyFileSync(join(fixtures, "experiments", "busy.py"), join(root, "busy.py"));
  cpSync(join(fixtures, "python", "pytest-suite"), join(root, "suite"), { recursive: true });
  for (const name of ["py-spy.speedscope.json", "py-spy.raw.txt", "node-busy.cpuprofile", "py-spy.chrometrace.json"])
    copyFileSync(join(fixtures, "formats", name), join(root, name));
  writeFileSync(
    join(root, "flameox.toml"),
    `[workloads.hot]
argv = ["${python()}", "hot.py", "{seconds}"]
parameters = { seconds = ["0.5", "75"] }
timeout_seconds = 120

[workloads.outcome]
argv = ["${python()}", "outcome.py", "fail"]

[workloads.tests]
argv = ["${python()}", "-m", "pytest", "-q", "-p", "no:cacheprovider", "suite"]

[workloads.busy]
argv = ["${python()}", "-S", "busy.py", "{variant}"]
parameters = { variant = ["base", "more"] }

[experiments.ab]
workload = "busy"
factors = { variant = ["base", "more"] }
treatment_factor = "variant"
blocks = 2
polarity = "lower_is_better"
practical_threshold = 0.03
random_seed = 1
`,
  );
}

async function ok(session: McpSession, name: string, args: Record<string, unknown>): Promise<any> {
  const called = await callTool(session, name, args);
  if (!called.envelope?.ok) throw new Error(`${name} failed: ${JSON.stringify(called.envelope?.error ?? called.text)}`);
  return called.envelope.result;
}

async function capture(session: McpSession, workload: string, adapter: string, parameters: Record<string, unknown> = {}) {
  const plan = await ok(session, "plan_capture", { workload_name: workload, adapter, parameters });
  return ok(session, "execute_capture_plan", { plan_id: plan.plan_id });
}

/** Fills an initialized-or-not project written by writePopulatedProject until it holds `runCount` runs. */
export async function populateWorkspace(session: McpSession, runCount = 100): Promise<PopulatedIds> {
  await ok(session, "initialize_workspace", {});
  const hot = await capture(session, "hot", "py-spy", { seconds: "0.5" });
  const command = await callTool(session, "execute_capture_plan", {
    plan_id: (await ok(session, "plan_capture", { workload_name: "outcome", adapter: "command" })).plan_id,
  });
  const pytest = await capture(session, "tests", "pytest");
  await ok(session, "extract_pytest", { run_id: pytest.run_id });

  const investigation = await ok(session, "create_investigation", { question: "Why is hot.py slow?" });
  const experimentPlan = await ok(session, "plan_experiment", { experiment_name: "ab", investigation_id: investigation.investigation_id });
  const experiment = await ok(session, "run_experiment", { plan_id: experimentPlan.plan_id });
  const spare = await ok(session, "plan_experiment", { experiment_name: "ab" });

  const formats = ["py-spy.speedscope.json", "py-spy.raw.txt", "node-busy.cpuprofile", "py-spy.chrometrace.json"];
  const first = await ok(session, "import_artifact", { path: formats[0] });
  const trace = await ok(session, "import_artifact", { path: formats[3], kind: "execution_trace" });
  const listed = await ok(session, "list_runs", { limit: 1 });
  for (let index = listed.total; index < runCount; index += 1) await ok(session, "import_artifact", { path: formats[index % 3] });

  const hotspots = await ok(session, "analyze_hotspots", { run_or_artifact: hot.run_id, limit: 1 });
  const analysis = await ok(session, "record_analysis", { recipe: "hotspots", input_id: hot.run_id, limit: 5 });
  const hypothesis = await ok(session, "record_hypothesis", {
    investigation_id: investigation.investigation_id,
    claim: "burn_cpu dominates",
    prediction: "burn_cpu holds most self time",
    discriminating_condition: "burn_cpu self share above one half",
  });
  const finding = await ok(session, "record_finding", {
    kind: "performance",
    title: "burn_cpu is hot",
    claim: "burn_cpu holds most self time",
    evidence_level: "derived",
    confidence: "medium",
    assessment: "unassessed",
    investigation_id: investigation.investigation_id,
    evidence: [{ ref_type: "analysis", ref_id: analysis.ref_id, relation: "supports" }],
  });
  const total = (await ok(session, "list_runs", { limit: 1 })).total;
  return {
    hotRunId: hot.run_id,
    commandRunId: command.envelope?.result?.run_id ?? command.envelope?.error?.run_id,
    pytestRunId: pytest.run_id,
    importRunId: first.run_id,
    speedscopeArtifactId: first.artifact_id,
    traceArtifactId: trace.artifact_id,
    frameId: hotspots.hotspots[0].frame_id,
    experimentId: experiment.experiment_id,
    experimentPlanId: spare.plan_id,
    runSetIds: experiment.run_set_ids,
    comparisonId: experiment.comparison_id,
    investigationId: investigation.investigation_id,
    hypothesisId: hypothesis.hypothesis?.hypothesis_id ?? hypothesis.hypothesis_id,
    findingId: finding.finding.finding_id,
    analysisId: analysis.ref_id,
    runCount: total,
  };
}
