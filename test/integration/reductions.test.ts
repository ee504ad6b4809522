/**
 * Reductions through the services with real predicate processes: the structured partitioners end to
 * end, dependency closure on a real trace, and the budgets (predicate timeout, max_attempts).
 */
import { afterEach, expect, setDefaultTimeout, test } from "bun:test";
import { readFileSync, realpathSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import type { FlameoxError } from "../../src/domain/errors.ts";
import { Services } from "../../src/services/services.ts";
import { projectImport } from "../support/imports.ts";
import { temporaryFolder } from "../support/temporary-folders.ts";

setDefaultTimeout(180_000);

const repositoryRoot = resolve(import.meta.dir, "../..");
const python = realpathSync(join(repositoryRoot, ".tools", "venv", "bin", "python3"));

let services: Services | undefined;
afterEach(() => {
  services?.close();
  services = undefined;
});

/** A project with one predicate workload running `script`, and `input` imported as an artifact. */
async function reductionSetup(script: string, input: string, inputName: string) {
  const root = temporaryFolder("reduction");
  writeFileSync(join(root, "predicate.py"), script);
  writeFileSync(join(root, inputName), input);
  writeFileSync(join(root, "flameox.toml"), `[workloads.predicate]\nargv = ["${python}", "-S", "predicate.py"]\n`);
  services = new Services({ projectRoot: root });
  await services.workspaces.initialize();
  const imported = await services.imports.importArtifact(projectImport(inputName));
  const stored = (artifactId: string) => {
    const hex = artifactId.replace("sha256:", "");
    const folder = join(root, ".diagnostics", "artifacts", "sha256", hex.slice(0, 2), hex);
    const payload = new Bun.Glob("payload*").scanSync(folder).next().value as string;
    return readFileSync(join(folder, payload), "utf8");
  };
  return { artifactId: imported.artifact_id, services, stored };
}

const limits = (overrides: Record<string, number> = {}) => ({
  max_attempts: 1000,
  wall_time_seconds: 600,
  predicate_timeout_seconds: 30,
  predicate_repetitions: 1,
  ...overrides,
});

test("a Chrome trace reduces to the end event the predicate needs and the begin event it depends on", async () => {
  const events = [
    { ph: "M", name: "process_name", pid: 1, tid: 1, args: { name: "app" } },
    ...Array.from({ length: 60 }, (_, index) => ({ ph: "X", name: `work-${index}`, pid: 1, tid: 1, ts: index * 10, dur: 5 })),
    { ph: "B", name: "broken-span", pid: 1, tid: 2, ts: 5 },
    ...Array.from({ length: 60 }, (_, index) => ({ ph: "i", name: `tick-${index}`, pid: 1, tid: 3, ts: index, s: "t" })),
    { ph: "E", pid: 1, tid: 2, ts: 900, args: { error: "boom" } },
  ];
  // Interesting while an end event carries the error; the end event alone would be a different (orphan) trace.
  const script = `import json, os, sys
trace = json.load(open(os.environ["FLAMEOX_REDUCTION_CANDIDATE"]))
sys.exit(0 if any(event.get("args", {}).get("error") == "boom" for event in trace["traceEvents"]) else 1)
`;
  const setup = await reductionSetup(script, JSON.stringify({ traceEvents: events, displayTimeUnit: "ns" }, null, 1), "trace.json");
  const plan = await setup.services.reductions.plan({
    original_artifact_id: setup.artifactId,
    predicate_workload: "predicate",
    predicate_parameters: {},
    partitioner: "chrome_trace_events",
    engine: "native_ddmin",
    limits: limits(),
  });
  expect(plan.original.unit_count).toBe(events.length);
  const result = await setup.services.reductions.execute(plan.plan_id);
  expect(result.disposition).toBe("succeeded");
  // The pretty-printed original differs from the compact rebuild, which was judged before any unit was removed.
  expect(result.attempts.rows[1]).toMatchObject({ units: events.length, classification: "interesting" });
  const reduced = JSON.parse(setup.stored(result.final_artifact_id!));
  expect(reduced).toEqual({ traceEvents: [events[61], events[events.length - 1]], displayTimeUnit: "ns" });
  expect(result.attempt_counts.dependency_closure_no_op).toBeGreaterThan(0);
});

test("a predicate that hangs on small candidates times out, is rejected, and the result stays above it", async () => {
  const records = Array.from({ length: 24 }, (_, index) => JSON.stringify({ id: index, payload: "x".repeat(index) }));
  // Interesting when record 7 is present; with fewer than 3 records it hangs (a timeout, never interesting).
  const script = `import json, os, sys, time
records = [json.loads(line) for line in open(os.environ["FLAMEOX_REDUCTION_CANDIDATE"]) if line.strip()]
if len(records) < 3:
    time.sleep(60)
sys.exit(0 if any(record["id"] == 7 for record in records) else 1)
`;
  const setup = await reductionSetup(script, `${records.join("\n")}\n`, "records.jsonl");
  const plan = await setup.services.reductions.plan({
    original_artifact_id: setup.artifactId,
    predicate_workload: "predicate",
    predicate_parameters: {},
    partitioner: "jsonl_records",
    engine: "native_ddmin",
    // 2 s is two orders of magnitude above the predicate's own run time (python -S on 24 short records).
    limits: limits({ predicate_timeout_seconds: 2 }),
  });
  const result = await setup.services.reductions.execute(plan.plan_id);
  expect(result.disposition).toBe("succeeded");
  expect(result.attempt_counts.timed_out).toBeGreaterThan(0);
  const kept = setup
    .stored(result.final_artifact_id!)
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line).id as number);
  expect(kept).toContain(7);
  expect(kept.length).toBe(3);
});

test("max_attempts stops the reduction with the best candidate stored but minimality not claimed", async () => {
  const lines = Array.from({ length: 400 }, (_, index) => `row ${index}`);
  const script = `import os, sys
sys.exit(0 if "row 399" in open(os.environ["FLAMEOX_REDUCTION_CANDIDATE"]).read().splitlines() else 1)
`;
  const setup = await reductionSetup(script, `${lines.join("\n")}\n`, "rows.txt");
  const plan = await setup.services.reductions.plan({
    original_artifact_id: setup.artifactId,
    predicate_workload: "predicate",
    predicate_parameters: {},
    partitioner: "text_lines",
    engine: "native_ddmin",
    limits: limits({ max_attempts: 4 }),
  });
  const result = await setup.services.reductions.execute(plan.plan_id);
  expect(result).toMatchObject({ budget_exhausted: "max_attempts", minimality: "not_claimed", disposition: "succeeded" });
  expect(result.units.final).toBeLessThan(400);
  expect(result.units.final).toBeGreaterThan(1);
  expect(setup.stored(result.final_artifact_id!)).toContain("row 399\n");
});

test("planning refuses what cannot be reduced: an unknown artifact, a partitioner that does not fit, an undeclared predicate", async () => {
  const setup = await reductionSetup("import sys\nsys.exit(0)\n", "not json\n", "plain.txt");
  const request = {
    original_artifact_id: setup.artifactId,
    predicate_workload: "predicate",
    predicate_parameters: {},
    partitioner: "text_lines" as const,
    engine: "native_ddmin" as const,
    limits: limits(),
  };
  const codeOf = async (change: Record<string, unknown>) => {
    try {
      await setup.services.reductions.plan({ ...request, ...change });
    } catch (error) {
      return (error as FlameoxError).code;
    }
    return "planned";
  };
  expect(await codeOf({ original_artifact_id: "sha256:0000" })).toBe("INVALID_ARGUMENTS");
  expect(await codeOf({ partitioner: "json_top_level" })).toBe("ARTIFACT_PARSE_FAILED");
  expect(await codeOf({ predicate_workload: "missing" })).toBe("WORKSPACE_INVALID");
  expect(await codeOf({})).toBe("planned");
});

test("the wall-time budget stops a reduction whose predicate is slow, recorded as such", async () => {
  const lines = Array.from({ length: 400 }, (_, index) => `row ${index}`);
  // One second per judgement against a five-second budget: a few judgements fit, the reduction cannot finish.
  const script = `import os, sys, time
time.sleep(1)
sys.exit(0 if "row 399" in open(os.environ["FLAMEOX_REDUCTION_CANDIDATE"]).read().splitlines() else 1)
`;
  const setup = await reductionSetup(script, `${lines.join("\n")}\n`, "rows.txt");
  const plan = await setup.services.reductions.plan({
    original_artifact_id: setup.artifactId,
    predicate_workload: "predicate",
    predicate_parameters: {},
    partitioner: "text_lines",
    engine: "native_ddmin",
    limits: limits({ wall_time_seconds: 5 }),
  });
  const result = await setup.services.reductions.execute(plan.plan_id);
  expect(result).toMatchObject({ budget_exhausted: "wall_time", minimality: "not_claimed" });
  expect(result.limitations.join(" ")).toContain("wall time budget ran out");
});
