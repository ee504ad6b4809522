/**
 * The shrinkray reduction engine over real stdio against the compiled binary: refused with the exact
 * setup call while its managed provider is missing, installed from the package registry for real
 * (into a temporary XDG_DATA_HOME, so the user's own providers are never touched), then a 10,000-line
 * input reduced by ShrinkRay to the lines the predicate needs, with every predicate run recorded; a
 * predicate that does not hold on the original ends as original_not_interesting with nothing published.
 */
import { afterEach, expect, setDefaultTimeout, test } from "bun:test";
import { appendFileSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { callTool, connectMcp, type McpSession, temporaryFolder } from "../support/binary.ts";
import { reportMissingNewerPython } from "../support/newer-python.ts";
import { declare, python } from "../support/project.ts";
import { waitFor } from "../support/wait.ts";

// A registry install (about 10-20 s here) and ShrinkRay judging some 700-1000 candidates one at a time
// on a loaded two-core machine; generous so a slow day does not fail it.
setDefaultTimeout(600_000);

const sessions: McpSession[] = [];
afterEach(async () => {
  for (const session of sessions.splice(0)) await session.close().catch(() => undefined);
});

/** Exits 0 while the candidate still holds both needle lines; every run leaves one line in calls.log, a witness independent of flameox. */
const predicate = `import os, sys
with open("calls.log", "a") as log:
    log.write("run\\n")
with open(os.environ["FLAMEOX_REDUCTION_CANDIDATE"], "rb") as handle:
    lines = set(handle.read().splitlines())
sys.exit(0 if {b"needle-alpha", b"needle-omega"} <= lines else 1)
`;

/** Never interesting: exits 1 on every input, leaving one line per run in never.log. */
const neverInteresting = `with open("never.log", "a") as log:
    log.write("run\\n")
raise SystemExit(1)
`;

/** 10,000 lines, two of which the predicate needs; short filler keeps ShrinkRay's passes quick. */
function bigInput(): string {
  const lines = Array.from({ length: 10_000 }, (_, index) => `x${index % 10}`);
  lines[1234] = "needle-alpha";
  lines[8765] = "needle-omega";
  return `${lines.join("\n")}\n`;
}

function storedBytes(project: string, artifactId: string): string {
  const hex = artifactId.replace("sha256:", "");
  const folder = join(project, ".diagnostics", "artifacts", "sha256", hex.slice(0, 2), hex);
  const payload = new Bun.Glob("payload*").scanSync(folder).next().value as string;
  return readFileSync(join(folder, payload), "utf8");
}

function pollUntilEnded(session: McpSession, operationId: string): Promise<any> {
  return waitFor(
    "the shrinkray setup to end",
    async () => {
      const status = (await callTool(session, "get_capability_setup", { operation_id: operationId })).envelope.result;
      return status.state !== "starting" && status.state !== "running" && status;
    },
    { deadlineMs: 400_000, intervalMs: 500 },
  );
}

async function allAttempts(session: McpSession, reductionId: string): Promise<any[]> {
  const rows: any[] = [];
  let cursor: string | null = null;
  do {
    const page = await callTool(session, "get_reduction", { reduction_id: reductionId, limit: 15, cursor });
    expect(JSON.stringify(page.envelope).length).toBeLessThan(8000);
    rows.push(...page.envelope.result.attempts.rows);
    cursor = page.envelope.result.attempts.next_cursor;
  } while (cursor);
  return rows;
}

test.skipIf(reportMissingNewerPython("the shrinkray engine e2e"))(
  "shrinkray: refused with the setup call, installed from the registry, reduces 10,000 lines to the needed ones with every attempt recorded",
  async () => {
    const project = temporaryFolder("shrinkray");
    const dataHome = temporaryFolder("shrinkray-data");
    writeFileSync(join(project, "predicate.py"), predicate);
    writeFileSync(join(project, "never.py"), neverInteresting);
    writeFileSync(join(project, "big.txt"), bigInput());
    const session = await connectMcp(project, ["--init"], { XDG_DATA_HOME: dataHome });
    sessions.push(session);
    await declare(session, "still-fails", [python(), "-S", "predicate.py"]);
    await declare(session, "never-fails", [python(), "-S", "never.py"]);
    const imported = await callTool(session, "import_artifact", { path: "big.txt" });
    const original = imported.envelope.result.artifact_id;
    const request = { original_artifact_id: original, predicate_workload: "still-fails", partitioner: "text_lines", engine: "shrinkray" };

    // Without the provider: refused, and the recovery is the exact setup call list_capabilities also names.
    const refused = await callTool(session, "plan_reduction", { request });
    expect(refused.envelope.error.code).toBe("CAPABILITY_UNAVAILABLE");
    expect(refused.envelope.error.message).toContain("native_ddmin");
    expect(refused.envelope.error.recovery.next_tool).toBe("start_capability_setup");
    const setupArguments = refused.envelope.error.recovery.context.arguments;
    expect(setupArguments.adapters).toEqual(["shrinkray"]);
    const before = (await callTool(session, "list_capabilities", { adapter: "shrinkray" })).envelope.result;
    expect(before.capabilities[0]).toMatchObject({ status: "unavailable", provisioning: "managed_runtime" });
    expect(before.setup_adapters).toEqual(["shrinkray"]);
    expect(before.next_tool).toBe("start_capability_setup");
    expect(before.capabilities[0].setup.arguments).toEqual(setupArguments);

    const installStarted = performance.now();
    const started = (await callTool(session, "start_capability_setup", setupArguments)).envelope.result;
    const done = await pollUntilEnded(session, started.operation_id);
    console.log(`shrinkray setup: ${Math.round(performance.now() - installStarted)} ms`);
    expect({ state: done.state, failure: done.failure_message, detail: done.failure_details }).toMatchObject({ state: "terminal" });
    expect(done.item_outcomes).toEqual([
      expect.objectContaining({ item: "shrinkray", status: "complete", provider: "providers/shrinkray/26.7.6.1" }),
    ]);
    const after = (await callTool(session, "list_capabilities", { adapter: "shrinkray" })).envelope.result;
    expect(after.capabilities[0]).toMatchObject({
      status: "available",
      provisioning: "managed_runtime",
      managed_provider: "providers/shrinkray/26.7.6.1",
      version: "26.7.6.1",
      setup: null,
    });

    const planned = (await callTool(session, "plan_reduction", { request })).envelope.result;
    expect(planned.engine.name).toBe("shrinkray");
    expect(planned.engine.version).toEndWith("/shrinkray-26.7.6.1");
    const reductionStarted = performance.now();
    const executed = await session.client.callTool({ name: "execute_reduction", arguments: { plan_id: planned.plan_id } }, undefined, {
      timeout: 500_000,
    });
    const result = (executed.structuredContent as any).result;
    console.log(
      `shrinkray reduction: ${Math.round(performance.now() - reductionStarted)} ms, ${result.attempts.total} attempts, ${result.attempt_counts.predicate_runs} predicate runs`,
    );
    expect(result.disposition).toBe("succeeded");
    expect(result.engine.name).toBe("shrinkray");
    expect(result.final_revalidation).toBe("passed");
    const reduced = storedBytes(project, result.final_artifact_id)
      .split("\n")
      .filter((line) => line !== "");
    expect(reduced.length).toBeGreaterThanOrEqual(2);
    expect(reduced.length).toBeLessThanOrEqual(3);
    expect(reduced).toContain("needle-alpha");
    expect(reduced).toContain("needle-omega");
    expect(result.units.original).toBe(10_000);

    // Every predicate run is an attempt: the predicate's own log, flameox's counts and the paged rows agree.
    const runs = readFileSync(join(project, "calls.log"), "utf8")
      .split("\n")
      .filter((line) => line !== "").length;
    expect(result.attempts.total).toBeGreaterThan(0);
    expect(result.attempt_counts.predicate_runs).toBe(runs);
    expect(result.attempts.total).toBe(runs);
    expect(result.attempts.total).toBe(result.attempt_counts.candidates + 1);
    const rows = await allAttempts(session, result.reduction_id);
    expect(rows.map((row) => row.attempt)).toEqual(Array.from({ length: runs }, (_, index) => index + 1));
    expect(rows[0]).toMatchObject({ units: 10_000, classification: "interesting", exit_codes: [0] });
    expect(rows.some((row) => row.classification === "not_interesting")).toBe(true);

    // Provenance like a native reduction: a new artifact in its own run naming the original and the reduction.
    const artifact = (await callTool(session, "get_artifact", { artifact_id: result.final_artifact_id })).envelope.result;
    expect(artifact.registrations[0]).toMatchObject({ run_id: result.run_id, role: "reduction_final", producer: "flameox.reduction" });
    const run = (await callTool(session, "get_run", { run_id: result.run_id })).envelope.result;
    expect(run.limitation_details[0].message).toContain(`original_artifact_id=${original}`);

    // A predicate that does not hold on the original ends the reduction at once, with nothing published:
    // ShrinkRay's own check of its initial input is flameox's first attempt.
    const hopeless = (await callTool(session, "plan_reduction", { request: { ...request, predicate_workload: "never-fails" } })).envelope
      .result;
    const ended = (await callTool(session, "execute_reduction", { plan_id: hopeless.plan_id })).envelope.result;
    expect(ended.disposition).toBe("original_not_interesting");
    expect(ended.final_artifact_id ?? null).toBeNull();
    expect(ended.limitations.join(" ")).toContain("exited 1 on the original artifact");
    const neverRuns = readFileSync(join(project, "never.log"), "utf8")
      .split("\n")
      .filter((line) => line !== "").length;
    expect(neverRuns).toBeGreaterThan(0);
    expect(ended.attempt_counts.predicate_runs).toBe(neverRuns);
    const hopelessRows = await allAttempts(session, ended.reduction_id);
    expect(hopelessRows).toHaveLength(neverRuns);
    expect(hopelessRows[0]).toMatchObject({ units: 10_000, classification: "not_interesting", exit_codes: [1] });

    // A provider that changed after planning is refused with the replan call.
    const stale = (await callTool(session, "plan_reduction", { request })).envelope.result;
    appendFileSync(join(dataHome, "flameox", "providers", "shrinkray", "26.7.6.1", "bin", "shrinkray"), "\n# changed\n");
    const refusedStale = await callTool(session, "execute_reduction", { plan_id: stale.plan_id });
    expect(refusedStale.envelope.error.code).toBe("EXECUTION_REFUSED");
    expect(refusedStale.envelope.error.details.reasons).toEqual(["the shrinkray provider changed (reinstalled or modified)"]);
    expect(refusedStale.envelope.error.recovery.next_tool).toBe("plan_reduction");
    expect(refusedStale.envelope.error.recovery.context.arguments.request).toMatchObject(request);
  },
);
