import { adapterDescriptor, type DefaultAnalysis } from "../adapters/registry.ts";

/**
 * Where a capture's receipt sends an agent: the tool its adapter declares for the whole answer
 * (adapters/registry.ts, defaultAnalysis), with the run filled in under the name that tool uses.
 * A pytest or coverage capture therefore never points at analyze_hotspots.
 */

export type NextStep = { tool: string; arguments: Record<string, unknown> };

const fallback: DefaultAnalysis = { kind: "runtime", tool: "get_run" };

/** How each tool a default analysis may name refers to one run. */
function runArguments(tool: string, runId: string, workloadName: string | null): Record<string, unknown> {
  if (tool === "get_run" || tool === "query_measurements") return { run_id: runId };
  // analyze_failures clusters across runs; the workload's runs are the ones this capture joins.
  if (tool === "analyze_failures") return workloadName ? { filter: { workload_name: workloadName } } : {};
  return { run_or_artifact: runId };
}

export function defaultAnalysisOf(adapter: string | null): DefaultAnalysis {
  return (adapter ? adapterDescriptor(adapter)?.defaultAnalysis : undefined) ?? fallback;
}

export function defaultNextStep(adapter: string | null, runId: string, workloadName: string | null): NextStep {
  const analysis = defaultAnalysisOf(adapter);
  return { tool: analysis.tool, arguments: { ...runArguments(analysis.tool, runId, workloadName), ...analysis.arguments } };
}
