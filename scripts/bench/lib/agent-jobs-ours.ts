/**
 * The eleven jobs of issue 13 as an agent drives flameox: the shortest path that the server's
 * instructions, tool descriptions and each result's next_tool/next_arguments lead to, from a fresh
 * project (no hand edits of flameox.toml: configure_workload and configure_experiment declare
 * everything). Each path returns what its answer says about the job's fact, read from the answer the
 * agent got (the text's JSON envelope, or structuredContent while the text is prose).
 * Not a benchmark module itself.
 */
import type { CountingAgent, ToolAnswer } from "./counting-agent.ts";
import { expectedFacts, python, scalingSizes } from "./agent-job-workloads.ts";

export type JobAnswer = {
  /** The fact as the answer states it (a function name, a verdict, an exception type…), or null when it does not. */
  fact: string | number | null;
  /** How the answer was reached or why it was not, in a few words. */
  note: string;
};

export type JobId =
  | "cpu_hotspots"
  | "callers"
  | "allocations"
  | "leak"
  | "pytest"
  | "coverage"
  | "benchmark_compare"
  | "scaling"
  | "torch_trace"
  | "crash"
  | "asan_log";

export type JobPath = (agent: CountingAgent) => Promise<JobAnswer>;

/** The envelope's result (flameox answers `{ok, result}` or `{ok:false, error}`). */
function result(answer: ToolAnswer): any {
  const json = answer.json;
  if (json && typeof json === "object" && "result" in json) return json.result;
  return json;
}

function failure(answer: ToolAnswer): string {
  const error = answer.json?.error;
  return error ? `${error.code}: ${error.message}` : answer.text.slice(0, 200);
}

/** The line numbers of "12-15, 40" (a "… +N more" tail is left out). */
function missedLines(ranges: string): number[] {
  return ranges
    .split(", ")
    .filter((range) => /^\d+(-\d+)?$/.test(range))
    .flatMap((range) => {
      const [first, last] = range.split("-").map(Number);
      return Array.from({ length: (last ?? first!) - first! + 1 }, (_, index) => first! + index);
    });
}

/** Calls the tool a result names next, with its exact arguments. */
async function followNext(agent: CountingAgent, answer: ToolAnswer): Promise<ToolAnswer> {
  const current = result(answer);
  if (!current?.next_tool) throw new Error(`${answer.tool} named no next tool: ${answer.text.slice(0, 300)}`);
  return agent.call(current.next_tool, current.next_arguments ?? {});
}

/** configure_workload → plan_capture → execute_capture_plan; returns the receipt. */
async function capture(
  agent: CountingAgent,
  workload: string,
  argv: string[],
  adapter: string,
): Promise<{ receipt: any; answer: ToolAnswer }> {
  const configured = await agent.call("configure_workload", { name: workload, operation: "create", argv });
  if (configured.isError) throw new Error(`configure_workload: ${failure(configured)}`);
  const plan = await agent.call("plan_capture", { workload_name: workload, adapter });
  if (plan.isError) throw new Error(`plan_capture: ${failure(plan)}`);
  const executed = await agent.call("execute_capture_plan", { plan_id: result(plan).plan_id });
  if (executed.isError) throw new Error(`execute_capture_plan: ${failure(executed)}`);
  return { receipt: result(executed), answer: executed };
}

/** The hotspot receipt, kept for the callers job (which asks one more question of the same run). */
let hotspotReceipt: ToolAnswer | null = null;

export const oursJobs: Record<JobId, JobPath> = {
  async cpu_hotspots(agent) {
    const status = await agent.call("workspace_status");
    const found = result(status) ?? status.json?.error;
    if (found?.workspace_found === false || status.isError) await followNext(agent, status);
    const { receipt, answer } = await capture(agent, "hot", [python, "hot.py", "1.5"], "py-spy");
    hotspotReceipt = answer;
    const top = receipt.analysis?.summary?.hotspots?.[0];
    return { fact: top?.function ?? null, note: "receipt analysis: top self-time hotspot" };
  },

  async callers(agent) {
    if (!hotspotReceipt) throw new Error("the callers job needs the hotspot job's receipt");
    const callers = await followNext(agent, hotspotReceipt);
    return { fact: result(callers)?.edges?.[0]?.function ?? null, note: `${callers.tool} from the receipt's next_tool` };
  },

  async allocations(agent) {
    const { receipt } = await capture(agent, "allocate", [python, "allocate.py"], "memray");
    return { fact: receipt.analysis?.summary?.top_allocations?.[0]?.function ?? null, note: "receipt analysis: top allocation at peak" };
  },

  async leak(agent) {
    const { receipt } = await capture(agent, "leak", [python, "leak.py"], "memray");
    const summary = receipt.analysis?.summary ?? {};
    const retained: any[] = summary.retained_allocations ?? [];
    return { fact: retained[0]?.function ?? null, note: "receipt analysis: retained at exit" };
  },

  async pytest(agent) {
    const { receipt } = await capture(agent, "tests", [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "suite"], "pytest");
    return { fact: receipt.analysis?.summary?.failures?.[0]?.nodeid ?? null, note: "receipt analysis: failing tests" };
  },

  async coverage(agent) {
    const { receipt } = await capture(agent, "branches", [python, "branches.py"], "coverage");
    const files: any[] = receipt.analysis?.summary?.files ?? [];
    const file = files.find((entry) => String(entry.file ?? entry.path).endsWith("branches.py"));
    const ranges: string | undefined = file?.missed_line_ranges ?? undefined;
    return {
      fact: ranges && missedLines(ranges).includes(expectedFacts.missed_line) ? expectedFacts.missed_line : null,
      note: ranges
        ? `receipt analysis: missed lines ${ranges} (${file.covered_line_count} of ${file.statement_count} statements ran)`
        : `receipt analysis names no missed line: ${JSON.stringify(file)}`,
    };
  },

  async benchmark_compare(agent) {
    const configured = await agent.call("configure_workload", {
      name: "bench",
      operation: "create",
      argv: [python, "bench.py", "{variant}"],
      parameters: { variant: ["base", "candidate"] },
    });
    if (configured.isError) throw new Error(`configure_workload: ${failure(configured)}`);
    const declared = await agent.call("configure_experiment", {
      name: "candidate-vs-base",
      operation: "create",
      workload: "bench",
      factors: { variant: ["base", "candidate"] },
    });
    if (declared.isError) throw new Error(`configure_experiment: ${failure(declared)}`);
    const plan = await agent.call("plan_experiment", { experiment_name: "candidate-vs-base", adapter: "pyperf" });
    if (plan.isError) throw new Error(`plan_experiment: ${failure(plan)}`);
    const ran = await agent.call("run_experiment", { plan_id: result(plan).plan_id });
    if (ran.isError) throw new Error(`run_experiment: ${failure(ran)}`);
    const comparison = result(ran).comparison;
    const interval = comparison?.ci ? `CI [${comparison.ci.lower}, ${comparison.ci.upper}]` : "no CI";
    return {
      fact: comparison?.decision ?? null,
      note: `run_experiment receipt: ${comparison?.metric}, ratio ${comparison?.estimate}, ${interval}`,
    };
  },

  async scaling(agent) {
    const configured = await agent.call("configure_workload", {
      name: "pairs",
      operation: "create",
      argv: [python, "scale.py", "{n}"],
      parameters: { n: scalingSizes },
    });
    if (configured.isError) throw new Error(`configure_workload: ${failure(configured)}`);
    const declared = await agent.call("configure_experiment", {
      name: "pairs-sweep",
      operation: "create",
      workload: "pairs",
      factors: { n: scalingSizes },
    });
    if (declared.isError) throw new Error(`configure_experiment: ${failure(declared)}`);
    const plan = await agent.call("plan_experiment", { experiment_name: "pairs-sweep" });
    if (plan.isError) throw new Error(`plan_experiment: ${failure(plan)}`);
    const ran = await agent.call("run_experiment", { plan_id: result(plan).plan_id });
    if (ran.isError) throw new Error(`run_experiment: ${failure(ran)}`);
    const receipt = result(ran);
    const scaling =
      receipt.next_tool === "analyze_scaling" && receipt.next_arguments
        ? await followNext(agent, ran)
        : await agent.call("analyze_scaling", { experiment_id: receipt.experiment_id, size_parameter: "n" });
    if (scaling.isError) throw new Error(`analyze_scaling: ${failure(scaling)}`);
    const fit = result(scaling)?.series?.[0]?.fit;
    const exponent = fit?.exponent_estimate;
    return {
      fact: fit?.best_model ?? null,
      note: `analyze_scaling: best model ${fit?.best_model}, log-log exponent ${exponent?.value?.toFixed(2)} [${exponent?.lower?.toFixed(2)}, ${exponent?.upper?.toFixed(2)}]`,
    };
  },

  async torch_trace(agent) {
    const { receipt } = await capture(agent, "matmul", [python, "matmul.py"], "torch.profiler");
    const operators: any[] = receipt.analysis?.summary?.operators ?? [];
    return { fact: operators[0]?.name ?? operators[0]?.operator ?? null, note: "receipt analysis: top operator by self time" };
  },

  async crash(agent) {
    const { receipt } = await capture(agent, "crash", [python, "crash.py"], "command");
    const exception = receipt.exception;
    return {
      fact: exception?.exception_type ?? null,
      note: `receipt: ${exception?.exception_type}: ${exception?.message}`,
    };
  },

  async asan_log(agent) {
    const imported = await agent.call("import_artifact", { path: "asan.log" });
    if (imported.isError) throw new Error(`import_artifact: ${failure(imported)}`);
    const evidence = result(imported).evidence;
    const failures = await agent.call(evidence.next_tool, evidence.next_arguments ?? {});
    const cluster = (result(failures)?.clusters ?? []).find((entry: any) => entry.source === "report");
    return { fact: cluster?.examples?.[0]?.error_kind ?? null, note: `${failures.tool}: ${cluster?.signature}` };
  },
};
