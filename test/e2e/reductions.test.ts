import { afterEach, describe, expect, setDefaultTimeout, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { callTool, connectMcp, type McpSession, temporaryFolder } from "../support/binary.ts";
import { declare, python } from "../support/project.ts";

// Up to ~100 predicate runs of a Python script each, on a loaded two-core machine.
setDefaultTimeout(300_000);

let session: McpSession | undefined;
afterEach(async () => {
  await session?.close();
  session = undefined;
});

const predicate = `import os, sys
with open(os.environ["FLAMEOX_REDUCTION_CANDIDATE"], encoding="utf-8") as handle:
    lines = set(handle.read().splitlines())
sys.exit(0 if {"needle-alpha", "needle-omega"} <= lines else 1)
`;

/** 10,000 lines, two of which the predicate needs. */
function bigInput(withNeedles = true): string {
  const lines = Array.from({ length: 10_000 }, (_, index) => `line ${index}: ${"filler ".repeat(index % 7)}`);
  if (withNeedles) {
    lines[1234] = "needle-alpha";
    lines[8765] = "needle-omega";
  }
  return `${lines.join("\n")}\n`;
}

async function reductionProject(): Promise<{ project: string; session: McpSession }> {
  const project = temporaryFolder("reduce");
  writeFileSync(join(project, "predicate.py"), predicate);
  writeFileSync(join(project, "big.txt"), bigInput());
  writeFileSync(join(project, "plain.txt"), bigInput(false));
  // A data folder of its own: the user's managed providers (a shrinkray among them) are not this test's.
  const opened = await connectMcp(project, ["--init"], { XDG_DATA_HOME: temporaryFolder("reduce-data") });
  await declare(opened, "still-fails", [python(), "-S", "predicate.py"]);
  return { project, session: opened };
}

async function importFile(target: McpSession, path: string): Promise<string> {
  const imported = await callTool(target, "import_artifact", { path });
  expect(imported.envelope.ok).toBe(true);
  return imported.envelope.result.artifact_id;
}

/** The stored bytes of an artifact, read from the workspace the way a person would. */
function storedBytes(project: string, artifactId: string): string {
  const hex = artifactId.replace("sha256:", "");
  const folder = join(project, ".diagnostics", "artifacts", "sha256", hex.slice(0, 2), hex);
  const payload = new Bun.Glob("payload*").scanSync(folder).next().value as string;
  return readFileSync(join(folder, payload), "utf8");
}

describe("reductions over stdio", () => {
  test("a 10,000-line input shrinks to the two lines the predicate needs, stored as a new artifact with every attempt recorded", async () => {
    const opened = await reductionProject();
    session = opened.session;
    const original = await importFile(session, "big.txt");

    const planned = await callTool(session, "plan_reduction", {
      request: { original_artifact_id: original, predicate_workload: "still-fails", partitioner: "text_lines" },
    });
    expect(planned.envelope.ok).toBe(true);
    const plan = planned.envelope.result;
    expect(plan.original).toMatchObject({ artifact_id: original, unit_count: 10_000 });
    expect(plan.predicate.candidate_variable).toBe("FLAMEOX_REDUCTION_CANDIDATE");
    expect(plan.engine.name).toBe("native_ddmin");

    const executed = await callTool(session, "execute_reduction", { plan_id: plan.plan_id });
    expect(executed.envelope.ok).toBe(true);
    const result = executed.envelope.result;
    expect(result.disposition).toBe("succeeded");
    expect(result.units).toEqual({ original: 10_000, final: 2 });
    expect(result.minimality).toBe("one_minimal");
    expect(result.final_revalidation).toBe("passed");
    expect(result.final_artifact_id).not.toBe(original);
    expect(storedBytes(opened.project, result.final_artifact_id)).toBe("needle-alpha\nneedle-omega\n");
    expect(result.attempt_counts.interesting).toBeGreaterThan(1);
    expect(result.attempt_counts.not_interesting).toBeGreaterThan(0);
    expect(result.attempts.total).toBe(result.attempt_counts.candidates + 2);
    expect(result.attempts.rows[0]).toMatchObject({ attempt: 1, units: 10_000, classification: "interesting", exit_codes: [0] });
    expect(JSON.stringify(executed.envelope).length).toBeLessThan(8000);

    // Provenance: the reduced artifact is registered in its own run that names the original and the reduction.
    const artifact = await callTool(session, "get_artifact", { artifact_id: result.final_artifact_id });
    expect(artifact.envelope.result.registrations[0]).toMatchObject({
      run_id: result.run_id,
      role: "reduction_final",
      producer: "flameox.reduction",
    });
    const run = await callTool(session, "get_run", { run_id: result.run_id });
    expect(run.envelope.result.limitation_details[0].message).toContain(`original_artifact_id=${original}`);
    expect(run.envelope.result.limitation_details[0].message).toContain(`reduction_id=${result.reduction_id}`);

    // Every attempt, paged to the end in order, each page (at the largest page size) within the result budget.
    const seen: number[] = [];
    let cursor: string | null = null;
    do {
      const page = await callTool(session, "get_reduction", { reduction_id: result.reduction_id, limit: 15, cursor });
      expect(JSON.stringify(page.envelope).length).toBeLessThan(8000);
      seen.push(...page.envelope.result.attempts.rows.map((row: any) => row.attempt));
      cursor = page.envelope.result.attempts.next_cursor;
    } while (cursor);
    expect(seen).toEqual(Array.from({ length: result.attempts.total }, (_, index) => index + 1));

    // A consumed plan is never run again.
    const again = await callTool(session, "execute_reduction", { plan_id: plan.plan_id });
    expect(again.isError).toBe(true);
    expect(again.envelope.error.code).toBe("INVALID_CAPTURE_PLAN");
    expect(again.envelope.error.recovery.next_tool).toBe("plan_reduction");
  });

  test("a predicate changed after planning is refused with the replan arguments; a dull original and shrinkray say why", async () => {
    const opened = await reductionProject();
    session = opened.session;
    const original = await importFile(session, "big.txt");
    const request = { original_artifact_id: original, predicate_workload: "still-fails", partitioner: "text_lines" };
    const planned = await callTool(session, "plan_reduction", { request });
    const status = await callTool(session, "workload_configuration_status");
    const replaced = await callTool(session, "configure_workload", {
      name: "still-fails",
      operation: "replace",
      argv: [python(), "predicate.py"],
      expected_configuration_id: status.envelope.result.configuration_id,
    });
    expect(replaced.envelope.error).toBeNull();
    const refused = await callTool(session, "execute_reduction", { plan_id: planned.envelope.result.plan_id });
    expect(refused.envelope.error.code).toBe("EXECUTION_REFUSED");
    expect(refused.envelope.error.details.reasons).toEqual(["the predicate workload's definition changed"]);
    expect(refused.envelope.error.recovery).toMatchObject({ kind: "replan_reduction", next_tool: "plan_reduction" });
    expect(refused.envelope.error.recovery.context.arguments.request).toMatchObject(request);

    const plain = await importFile(session, "plain.txt");
    const dull = await callTool(session, "plan_reduction", { request: { ...request, original_artifact_id: plain } });
    const dullResult = await callTool(session, "execute_reduction", { plan_id: dull.envelope.result.plan_id });
    expect(dullResult.envelope.result).toMatchObject({ disposition: "original_not_interesting", final_artifact_id: null, run_id: null });
    expect(dullResult.envelope.result.attempts.total).toBe(1);

    const shrinkray = await callTool(session, "plan_reduction", { request: { ...request, engine: "shrinkray" } });
    expect(shrinkray.envelope.error.code).toBe("CAPABILITY_UNAVAILABLE");
    expect(shrinkray.envelope.error.message).toContain("native_ddmin");
    // Its recovery installs the managed provider (shrinkray-reductions.test.ts makes that call for real).
    expect(shrinkray.envelope.error.recovery.next_tool).toBe("start_capability_setup");
    expect(shrinkray.envelope.error.recovery.context.arguments).toEqual({ adapters: ["shrinkray"], idempotency_key: expect.any(String) });
  });
});
