/**
 * record_analysis for every recipe, through the MCP tool layer in process (argument validation, handler,
 * envelope) over real captures: coverage (two runs that take different branches), memray, torch.profiler
 * and a failing command. Each recorded result is re-read with get_evidence and the
 * flameox://evidence/analysis/{id} resource and must equal what the read-only analyze_* tool returns
 * for the same input.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { digestOf } from "../../../src/domain/canonical-json.ts";
import { toolsByName } from "../../../src/mcp/registry.ts";
import { readResource } from "../../../src/mcp/resources.ts";
import { callTool } from "../../../src/mcp/server.ts";
import type { Services } from "../../../src/services/services.ts";
import { capture, declare, project, pythonFixtures, venvPython } from "../adapters/harness.ts";

// Real trials and profiles. The suite's default per-test deadline is 30 s (scripts/test-deadline.ts).
setDefaultTimeout(120_000);

let services: Services;
const runs: Record<string, string> = {};
let traceArtifact: string;

async function tool(name: string, args: Record<string, unknown>): Promise<{ ok: boolean; result: any; error: any }> {
  const definition = toolsByName().get(name);
  if (!definition) throw new Error(`no tool ${name}`);
  const outcome = await callTool(definition, args, services, { signal: new AbortController().signal });
  return outcome.structuredContent as { ok: boolean; result: any; error: any };
}

/** What a result looks like once stored as JSON (undefined members dropped). */
function stored(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value));
}

beforeAll(async () => {
  let root: string;
  ({ root, services } = await project("analysis-records", {
    "mem.py": join(pythonFixtures, "memray", "allocate.py"),
    "mm.py": join(pythonFixtures, "torch", "matmul.py"),
  }));
  writeFileSync(
    join(root, "app.py"),
    'import sys\n\n\ndef classify(value):\n    if value > 10:\n        return "big"\n    return "small"\n\n\nprint([classify(int(arg)) for arg in sys.argv[1:]])\n',
  );
  await declare(services, "small", [venvPython, "app.py", "3"]);
  await declare(services, "big", [venvPython, "app.py", "30"]);
  await declare(services, "mem", [venvPython, "mem.py"]);
  await declare(services, "mm", [venvPython, "mm.py"]);
  await declare(services, "broken", [venvPython, "-c", "import sys; sys.exit(3)"]);
  runs.small = (await capture(services, "small", "coverage")).run_id;
  runs.big = (await capture(services, "big", "coverage")).run_id;
  runs.mem = (await capture(services, "mem", "memray")).run_id;
  const torch = await capture(services, "mm", "torch.profiler");
  runs.torch = torch.run_id;
  traceArtifact = torch.artifact_ids.find((id) => services.runs.getArtifact(id).kinds.includes("execution_trace"))!;
  // capture → extract → analyze, as an agent does (a capture may or may not have extracted the trace already).
  await services.extraction.extract("perfetto", { run_id: runs.torch });
  runs.broken = (await capture(services, "broken", "command")).run_id;
}, 90_000);

afterAll(() => services.close());

type Case = { recipe: string; record: Record<string, unknown>; readOnly: [string, Record<string, unknown>]; check(result: any): void };

const cases = (): Case[] => [
  {
    recipe: "hotspots",
    record: { input_id: runs.torch, limit: 5 },
    readOnly: ["analyze_hotspots", { run_or_artifact: runs.torch, limit: 5 }],
    check: (result) => expect(result.returned).toBeGreaterThan(0),
  },
  {
    recipe: "memory",
    record: { input_id: runs.mem, limit: 5 },
    readOnly: ["analyze_memory", { run_or_artifact: runs.mem, limit: 5 }],
    check: (result) => expect(result.top_allocations[0].function).toBe("hold_buffer"),
  },
  {
    recipe: "execution",
    record: { input_id: runs.small },
    readOnly: ["analyze_execution", { run_or_artifact: runs.small }],
    check: (result) => expect(result.files[0].file).toBe("app.py"),
  },
  {
    recipe: "execution",
    record: { input_id: runs.small, comparison_input_id: runs.big, limit: 10 },
    readOnly: ["analyze_execution", { run_or_artifact: runs.small, comparison_run_or_artifact: runs.big, limit: 10 }],
    check: (result) => {
      expect(result.comparison_run_or_artifact).toBe(runs.big);
      expect(result.differences).toHaveLength(1);
      expect(result.differences[0].lines_only_in_base).toEqual([7]);
      expect(result.differences[0].lines_only_in_comparison).toEqual([6]);
    },
  },
  {
    recipe: "pytorch",
    record: { input_id: runs.torch, limit: 3 },
    readOnly: ["analyze_pytorch", { run_or_artifact: runs.torch, limit: 3 }],
    check: (result) => expect(result.operators[0].name).toBe("aten::mm"),
  },
  {
    recipe: "accelerator_launches",
    record: { input_id: runs.torch, comparison_input_id: traceArtifact, limit: 5 },
    readOnly: ["analyze_accelerator_launches", { run_or_artifact: runs.torch, comparison_run_or_artifact: traceArtifact, limit: 5 }],
    // A CPU-only trace: an empty result with its reason, recorded like any other.
    check: (result) => {
      expect(result.comparison_run_or_artifact).toBe(traceArtifact);
      expect(result.evidence.status).toBe("empty");
    },
  },
  {
    recipe: "accelerator_launches",
    record: { input_id: traceArtifact, phase: "forward", limit: 5 },
    readOnly: ["analyze_accelerator_launches", { run_or_artifact: traceArtifact, phase: "forward", limit: 5 }],
    check: (result) => expect(result.phase).toBe("forward"),
  },
  {
    recipe: "failures",
    record: { limit: 10 },
    readOnly: ["analyze_failures", { limit: 10 }],
    check: (result) => {
      expect(result.failed_runs).toBe(1);
      expect(result.clusters[0].run_ids).toEqual([runs.broken]);
    },
  },
];

describe("record_analysis runs the read-only recipe and persists exactly its result", () => {
  test("every recipe: recorded, re-read via get_evidence and the resource, equal to the read-only tool's result", async () => {
    for (const entry of cases()) {
      const readOnly = await tool(entry.readOnly[0], entry.readOnly[1]);
      expect({ recipe: entry.recipe, ok: readOnly.ok, error: readOnly.error }).toEqual({ recipe: entry.recipe, ok: true, error: null });
      entry.check(readOnly.result);

      const recorded = await tool("record_analysis", { recipe: entry.recipe, ...entry.record });
      expect({ recipe: entry.recipe, ok: recorded.ok, error: recorded.error }).toEqual({ recipe: entry.recipe, ok: true, error: null });
      const receipt = recorded.result;
      expect(receipt.ref_type).toBe("analysis");
      // The version moves when a recipe's result changes meaning (analyze_memory.v2: total and returned count top_allocations).
      expect(receipt.recipe).toMatch(new RegExp(`^analyze_${entry.recipe}\\.v\\d+$`));
      expect(receipt.created).toBe(true);
      expect(receipt.corpus_commit_id).toBe(readOnly.result.corpus_commit_id);
      expect(receipt.resource_uri).toBe(`flameox://evidence/analysis/${encodeURIComponent(receipt.ref_id)}`);

      const evidence = await tool("get_evidence", { ref_type: "analysis", ref_id: receipt.ref_id });
      expect(evidence.ok).toBe(true);
      expect(evidence.result.data.result_digest).toBe(receipt.result_digest);
      expect(evidence.result.data.corpus_commit_id).toBe(receipt.corpus_commit_id);
      const record = evidence.result.data.record;
      expect(record.result).toEqual(stored(readOnly.result));
      expect(digestOf(record.result)).toBe(receipt.result_digest);

      const resource = await readResource(receipt.resource_uri, services);
      const fromResource = JSON.parse(resource!.text);
      expect(fromResource.ref_id).toBe(receipt.ref_id);
      expect(fromResource.result).toEqual(stored(readOnly.result));
      expect(fromResource.inputs).toEqual(record.inputs);

      // Exact inputs: the ids and limit as given, and for one-input recipes the evidence bundles read.
      for (const [field, value] of Object.entries(entry.record)) expect(record.inputs[field]).toBe(value);
      if (entry.recipe !== "failures") expect(record.inputs.bundle_ids.length).toBeGreaterThan(0);
      if (entry.record.comparison_input_id) expect(record.inputs.comparison_bundle_ids.length).toBeGreaterThan(0);

      // Same input at the same corpus commit: the same id, not a second record.
      const again = await tool("record_analysis", { recipe: entry.recipe, ...entry.record });
      expect(again.result.ref_id).toBe(receipt.ref_id);
      expect(again.result.created).toBe(false);
    }
    const recipes = new Set(cases().map((entry) => entry.recipe));
    expect([...recipes].sort()).toEqual(["accelerator_launches", "execution", "failures", "hotspots", "memory", "pytorch"]);
  }, 60_000);

  test("a recorded analysis can be cited by a finding", async () => {
    const recorded = await tool("record_analysis", { recipe: "memory", input_id: runs.mem });
    const investigation = await tool("create_investigation", { question: "Where does mem.py's memory go?" });
    const finding = await tool("record_finding", {
      kind: "memory",
      title: "hold_buffer holds the peak",
      claim: "hold_buffer allocates the 50 MiB peak",
      evidence_level: "derived",
      confidence: "high",
      assessment: "supported",
      investigation_id: investigation.result.investigation_id,
      evidence: [{ ref_type: "analysis", ref_id: recorded.result.ref_id, relation: "supports" }],
    });
    expect({ ok: finding.ok, error: finding.error }).toEqual({ ok: true, error: null });
    expect(finding.result.finding.evidence[0].resource_uri).toBe(recorded.result.resource_uri);
  });
});

describe("recipe/argument combinations follow MaterializeAnalysisRequest", () => {
  const refused = async (args: Record<string, unknown>) => {
    const outcome = await tool("record_analysis", args);
    expect(outcome.ok).toBe(false);
    expect(outcome.error.code).toBe("INVALID_ARGUMENTS");
    return outcome.error.details.fields.map((problem: { field: string }) => problem.field) as string[];
  };

  test("each wrong field is named", async () => {
    // Others ⇒ input_id only (required).
    for (const recipe of ["hotspots", "memory", "execution", "pytorch", "accelerator_launches"]) {
      expect(await refused({ recipe })).toEqual(["input_id"]);
      expect(await refused({ recipe, input_id: runs.mem, experiment_id: "e1" })).toEqual(["experiment_id"]);
    }
    // comparison_input_id only for execution and accelerator_launches; phase only for accelerator_launches.
    for (const recipe of ["hotspots", "memory", "pytorch"])
      expect(await refused({ recipe, input_id: runs.torch, comparison_input_id: runs.mem })).toEqual(["comparison_input_id"]);
    for (const recipe of ["hotspots", "memory", "execution", "pytorch"])
      expect(await refused({ recipe, input_id: runs.torch, phase: "forward" })).toEqual(["phase"]);
    // Failures ⇒ none.
    expect(await refused({ recipe: "failures", input_id: runs.broken, comparison_input_id: runs.mem, phase: "x" })).toEqual([
      "input_id",
      "comparison_input_id",
      "phase",
    ]);
    expect(await refused({ recipe: "failures", experiment_id: "e1" })).toEqual(["experiment_id"]);
    // Scaling ⇒ an experiment (or, in flameox, a run set), nothing per input.
    expect(await refused({ recipe: "scaling" })).toEqual(["experiment_id"]);
    expect(await refused({ recipe: "scaling", experiment_id: "e1", input_id: runs.mem })).toEqual(["input_id"]);
    expect(await refused({ recipe: "scaling", experiment_id: "e1", phase: "x" })).toEqual(["phase"]);
    // The recipe enum and the limit bounds.
    expect(await refused({ recipe: "comparison", input_id: runs.mem })).toEqual(["recipe"]);
    expect(await refused({ recipe: "memory", input_id: runs.mem, limit: 0 })).toEqual(["limit"]);
    expect(await refused({ recipe: "memory", input_id: runs.mem, unknown_field: 1 })).toEqual(["unknown_field"]);
  });

  test("the service refuses the same combinations when called directly (CLI path)", async () => {
    const error = await services.analysisRecords
      .record({ recipe: "pytorch", input_id: runs.torch, phase: "forward" })
      .catch((caught: unknown) => caught as any);
    expect(error.code).toBe("INVALID_ARGUMENTS");
    expect(error.details.fields).toEqual([
      { field: "phase", message: "only the accelerator_launches recipe takes a phase", type: "extra_forbidden" },
    ]);
    const missing = await services.analysisRecords
      .record({ recipe: "execution", comparison_input_id: runs.big })
      .catch((caught: unknown) => caught as any);
    expect(missing.details.fields).toEqual([{ field: "input_id", message: "required for recipe execution", type: "missing" }]);
  });

  test("a missing input is the read-only tool's error, and nothing is recorded", async () => {
    const count = () => services.workspace().state.database.query<{ n: number }, []>("SELECT count(*) AS n FROM evidence_records").get()!.n;
    const before = count();
    for (const [recipe, readOnlyTool] of [
      ["pytorch", "analyze_pytorch"],
      ["memory", "analyze_memory"],
    ] as const) {
      const input = recipe === "pytorch" ? runs.small : "no-such-run";
      const outcome = await tool("record_analysis", { recipe, input_id: input });
      const readOnly = await tool(readOnlyTool, { run_or_artifact: input, limit: 20 });
      expect(outcome.ok).toBe(false);
      expect(outcome.error.code).toBe(recipe === "pytorch" ? "CAPABILITY_UNAVAILABLE" : "RUN_NOT_FOUND");
      expect(outcome.error).toEqual(readOnly.error);
    }
    expect(count()).toBe(before);
  });
});
