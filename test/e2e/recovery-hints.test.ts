/**
 * Every kind of failure an agent meets on the way, over real stdio against the compiled binary: the error's
 * recovery names the next tool with arguments, and calling exactly that tool with exactly those arguments
 * succeeds. Errors are read from the text content, as a host that drops structuredContent shows them.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { copyFileSync } from "node:fs";
import { join } from "node:path";
import { callTool, connectMcp, repositoryRoot, temporaryFolder, type McpSession } from "../support/binary.ts";
import { populateWorkspace, writePopulatedProject, type PopulatedIds } from "../support/populated-workspace.ts";

// Builds a small workspace (real captures, a four-trial experiment), then follows about twenty hints.
setDefaultTimeout(180_000);

let session: McpSession;
let ids: PopulatedIds;

beforeAll(async () => {
  const project = temporaryFolder("recovery-hints");
  writePopulatedProject(project);
  session = await connectMcp(project, [], { PYTHONDONTWRITEBYTECODE: "1" });
  ids = await populateWorkspace(session, 10);
});

afterAll(async () => {
  await session?.close();
});

/** The error as the text content carries it. */
async function failing(name: string, args: Record<string, unknown>): Promise<any> {
  const answer = await callTool(session, name, args);
  expect(answer.isError).toBe(true);
  return JSON.parse(answer.text).error;
}

/** Calls the hint verbatim and returns its result; the hint must be complete (nothing for the caller to supply). */
async function follow(error: any, target: McpSession = session): Promise<any> {
  const recovery = error.recovery;
  expect(typeof recovery.next_tool).toBe("string");
  expect(recovery.context?.caller_supplies).toBeUndefined();
  const answer = await callTool(target, recovery.next_tool, recovery.context.arguments);
  if (answer.isError) throw new Error(`${recovery.next_tool} failed as hinted: ${answer.text}`);
  return JSON.parse(answer.text).result;
}

test("a consumed capture plan re-plans the same capture; an unknown plan id lists the workloads", async () => {
  const plan = await callTool(session, "plan_capture", { workload_name: "hot", adapter: "command", parameters: { seconds: "0.5" } });
  expect((await callTool(session, "execute_capture_plan", { plan_id: plan.envelope.result.plan_id })).envelope.ok).toBe(true);
  const consumed = await failing("execute_capture_plan", { plan_id: plan.envelope.result.plan_id });
  expect([consumed.code, consumed.recovery.next_tool]).toEqual(["INVALID_CAPTURE_PLAN", "plan_capture"]);
  const replanned = await follow(consumed);
  expect([replanned.workload_name, replanned.adapter, replanned.parameters]).toEqual(["hot", "command", { seconds: "0.5" }]);
  expect((await follow(await failing("execute_capture_plan", { plan_id: "f".repeat(64) }))).workflows.length).toBeGreaterThan(0);
});

test("a consumed experiment plan re-plans the same experiment", async () => {
  const plan = await callTool(session, "plan_experiment", { experiment_name: "ab" });
  expect((await callTool(session, "run_experiment", { plan_id: plan.envelope.result.plan_id })).envelope.ok).toBe(true);
  const replanned = await follow(await failing("run_experiment", { plan_id: plan.envelope.result.plan_id }));
  expect(replanned.plan_id).toBeString();
});

test("refused workload parameters re-plan without them", async () => {
  expect(
    (await follow(await failing("plan_capture", { workload_name: "hot", adapter: "command", parameters: { speed: "1" } }))).plan_id,
  ).toBeString();
  const disallowed = await failing("plan_capture", { workload_name: "hot", adapter: "command", parameters: { seconds: "9" } });
  expect((await follow(disallowed)).parameters).toEqual({ seconds: "0.5" });
});

test("malformed, over-budget and stale paging arguments: the same tool with them left out", async () => {
  expect((await follow(await failing("list_runs", { limit: 0 }))).runs.length).toBeGreaterThan(0);
  expect((await follow(await failing("query_measurements", { limit: 5000, run_id: ids.pytestRunId }))).total).toBeGreaterThan(0);
  const page = (await callTool(session, "list_runs", { limit: 1 })).envelope.result;
  const stale = await failing("list_runs", { limit: 2, cursor: page.next_cursor });
  expect(stale.code).toBe("STALE_CURSOR");
  expect((await follow(stale)).returned).toBe(2);
});

test("missing records point at what lists them, or at the record under its right type", async () => {
  expect((await follow(await failing("get_run", { run_id: "no-such-run" }))).total).toBeGreaterThan(0);
  const wrongType = await failing("get_evidence", { ref_type: "comparison", ref_id: ids.analysisId });
  expect((await follow(wrongType)).ref_id).toBe(ids.analysisId);
  const runSet = await failing("compare_run_sets", { baseline_run_set_id: "rs-missing", candidate_run_set_id: ids.runSetIds[0] });
  expect((await follow(runSet)).runs).toBeArray();
});

test("findings the rules refuse are recorded as the rules allow: inconclusive, derived, without missing references", async () => {
  const base = { kind: "performance", title: "t", claim: "c", confidence: "low", investigation_id: ids.investigationId };
  const unsupported = await failing("record_finding", { ...base, evidence_level: "inferred", assessment: "supported" });
  expect((await follow(unsupported)).finding.assessment).toBe("inconclusive");
  const noComparison = await failing("record_finding", {
    ...base,
    evidence_level: "observed",
    assessment: "supported",
    evidence: [{ ref_type: "run", ref_id: ids.hotRunId, relation: "supports" }],
  });
  expect(noComparison.code).toBe("COMPARISON_INVALID");
  expect((await follow(noComparison)).finding.assessment).toBe("inconclusive");
  const observed = await failing("record_finding", {
    ...base,
    evidence_level: "observed",
    assessment: "unassessed",
    evidence: [{ ref_type: "analysis", ref_id: ids.analysisId, relation: "context" }],
  });
  expect((await follow(observed)).finding.evidence_level).toBe("derived");
  const missing = await failing("record_finding", {
    ...base,
    evidence_level: "inferred",
    assessment: "unassessed",
    evidence: [
      { ref_type: "run", ref_id: "no-such-run", relation: "context" },
      { ref_type: "run", ref_id: ids.hotRunId, relation: "context" },
    ],
  });
  expect((await follow(missing)).finding.evidence.map((reference: any) => reference.ref_id)).toEqual([ids.hotRunId]);
});

test("evidence a run lacks: extract_pytest on a py-spy capture lists the pytest runs, whose extraction then works", async () => {
  const error = await failing("extract_pytest", { run_id: ids.hotRunId });
  const runs = (await follow(error)).runs;
  expect(runs.map((run: any) => run.run_id)).toContain(ids.pytestRunId);
  expect((await callTool(session, "extract_pytest", { run_id: runs[0].run_id })).envelope.ok).toBe(true);
});

test("hotspots of a run without stack samples: the hint plans a sampling capture of the same workload", async () => {
  const error = await failing("analyze_hotspots", { run_or_artifact: ids.commandRunId });
  expect(error.code).toBe("CAPABILITY_UNAVAILABLE");
  const plan = await follow(error);
  expect([plan.workload_name, plan.adapter, typeof plan.plan_id]).toEqual(["outcome", "py-spy", "string"]);
});

test("replacing an undeclared workload declares it; a refused environment entry is left out; importing a temporary file from the project root imports it from temp", async () => {
  const replaced = await failing("configure_workload", { name: "fresh", operation: "replace", argv: ["python3", "hot.py"] });
  expect((await follow(replaced)).action).toBe("created");
  const environment = { LD_PRELOAD: "libx.so", HOT_MODE: "1" };
  const preload = await failing("configure_workload", { name: "env", operation: "create", argv: ["python3", "hot.py"], environment });
  expect(preload.code).toBe("EXECUTION_REFUSED");
  expect((await follow(preload)).action).toBe("created");
  const outside = join(temporaryFolder("recovery-import"), "profile.speedscope.json");
  copyFileSync(join(repositoryRoot, "test", "fixtures", "formats", "py-spy.speedscope.json"), outside);
  expect((await follow(await failing("import_artifact", { path: outside }))).artifact_id).toStartWith("sha256:");
});

test("a missing resource is a -32002 error whose recovery works as given", async () => {
  const error = await session.client.readResource({ uri: "flameox://runs/no-such-run" }).catch((caught) => caught);
  expect(error.code).toBe(-32002);
  expect(error.data.error.code).toBe("RUN_NOT_FOUND");
  expect((await follow(error.data.error)).total).toBeGreaterThan(0);
  const runSet = await session.client.readResource({ uri: "flameox://run-sets/rs-missing" }).catch((caught) => caught);
  expect([runSet.code, runSet.data.error.details.missing_entity]).toEqual([-32002, "run_set"]);
});

test("a project without a workspace: initialize_workspace as given", async () => {
  const bare = await connectMcp(temporaryFolder("recovery-bare"));
  try {
    // workspace_status answers this state as a result; any other tool is refused with WORKSPACE_NOT_FOUND.
    const listed = await callTool(bare, "list_runs");
    const error = JSON.parse(listed.text).error;
    expect(error.code).toBe("WORKSPACE_NOT_FOUND");
    expect((await follow(error, bare)).workspace_id).toBeString();
  } finally {
    await bare.close();
  }
});
