import { needsExtraction, comparisonInvalid, invalidInput, artifactNotFound } from "../domain/errors.ts";
import { acceleratorSummary, launchRegions, type AcceleratorSummary, type LaunchRegion } from "../analysis/recipes/accelerator.ts";
import {
  torchAllocations,
  torchCategories,
  torchOperators,
  torchTimeSplit,
  traceCategories,
  type TimeSplit,
  type TorchAllocations,
  type TorchOperator,
} from "../analysis/recipes/trace-events.ts";
import { traceWindow, traceWindowEventsThrough, type TraceWindowEvent, type TraceWindowKey } from "../analysis/recipes/trace-window.ts";
import type { WorkspaceHandle } from "../store/workspace-handle.ts";
import {
  available,
  type EvidenceStatus,
  maximumRows,
  missingEvidence,
  offsetPage,
  pageEvidence,
  queryCursors,
  registrationsOf,
  scopeRun,
} from "./evidence-needs.ts";
import { type EvidenceScope, limitWithin, pinEvidenceScope, scopeLimitations, withEvidence } from "./evidence-scope.ts";
import type { RunManifest } from "../store/run-store.ts";

export type PyTorchAnalysisResult = {
  schema_version: 1;
  run_or_artifact: string;
  corpus_commit_id: string;
  order_by: "self" | "total";
  operators: TorchOperator[];
  allocations: TorchAllocations;
  time_split: TimeSplit;
  total: number;
  returned: number;
  truncated: boolean;
  next_cursor: string | null;
  /** What the trace's extraction recorded (slices clamped, overlaps ended, values left out). */
  limitations: string[];
  evidence: EvidenceStatus;
};
export type AcceleratorLaunchAnalysisResult = {
  schema_version: 1;
  run_or_artifact: string;
  comparison_run_or_artifact: string | null;
  corpus_commit_id: string;
  phase: string | null;
  summary: AcceleratorSummary;
  launch_regions: LaunchRegion[];
  comparison: AcceleratorSummary | null;
  /** Which parts are missing when the result is partial: no_kernels, no_runtime_launches, correlation_missing, correlation_partial. */
  partial_reasons: string[];
  total: number;
  returned: number;
  truncated: boolean;
  /** What the trace's extraction recorded (rows clamped or left out, tables missing). */
  limitations: string[];
  evidence: EvidenceStatus;
};
export type TraceWindowResult = {
  schema_version: 1;
  artifact_id: string;
  corpus_commit_id: string;
  start_ns: number;
  end_ns: number;
  /** Each event without artifact_id: every one is of the window's artifact_id. */
  events: Omit<TraceWindowEvent, "artifact_id">[];
  total: number;
  returned: number;
  truncated: boolean;
  next_cursor: string | null;
  evidence: EvidenceStatus;
};

/** Trace events that are not torch.profiler's: analyze_pytorch cannot read them, so the caller needs another trace. */
function notTorch(runOrArtifact: string, categories: { category: string | null }[]) {
  return comparisonInvalid(
    `${runOrArtifact} holds trace events, but none from torch.profiler (categories: ${categories
      .slice(0, 6)
      .map((entry) => entry.category ?? "none")
      .join(", ")}).`,
    {
      details: { next_tool: "import_artifact", required_kind: "execution_trace", required_producer: "torch.profiler" },
      remediation: [
        "Import a torch.profiler Chrome trace with import_artifact(kind='execution_trace', producer='torch.profiler'), or capture with the torch.profiler adapter.",
      ],
      next: { tool: "import_artifact", arguments: { kind: "execution_trace", producer: "torch.profiler" }, callerSupplies: ["path"] },
    },
  );
}

/** Which parts of a launch analysis are missing, and whether the trace shows any accelerator activity at all. */
function launchEvidence(
  summary: AcceleratorSummary,
  phase: string | null,
  run: RunManifest | null,
): { partial: string[]; nothing: boolean; evidence: EvidenceStatus } {
  const partial: string[] = [];
  if (summary.kernels === 0) partial.push("no_kernels");
  if (summary.runtime_launches + summary.graph_launches === 0) partial.push("no_runtime_launches");
  if (summary.kernels > 0 && summary.correlation_coverage === 0) partial.push("correlation_missing");
  else if (summary.correlation_coverage !== null && summary.correlation_coverage < 1) partial.push("correlation_partial");
  const nothing = summary.kernels === 0 && summary.runtime_launches + summary.graph_launches === 0 && summary.memory_copies === 0;
  const evidence: EvidenceStatus = nothing
    ? {
        status: "empty",
        reason: phase
          ? `No accelerator activity inside phase '${phase}'.`
          : "The trace holds no accelerator activity (CPU-only trace: no runtime launches, kernels or copies).",
        next_tool: run?.workload_name ? "plan_capture" : null,
        next_arguments: run?.workload_name
          ? {
              workload_name: run.workload_name,
              adapter: "torch.profiler",
              parameters: run.parameters,
              adapter_options: { activities: ["cpu", "cuda"] },
            }
          : null,
      }
    : partial.length > 0
      ? { status: "partial", reason: `Partial: ${partial.join(", ")}.`, next_tool: null, next_arguments: null }
      : available("Runtime and graph launches, kernels, per-stream idle gaps and host→device correlation.");
  return { partial, nothing, evidence };
}

/** Trace-event analyses: PyTorch operators (analyze_pytorch), accelerator launches (analyze_accelerator_launches) and time windows (get_trace_window). */
export class TraceAnalysisService {
  constructor(private readonly workspace: WorkspaceHandle) {}

  async pytorch(request: {
    run_or_artifact: string;
    limit: number;
    order_by: "self" | "total";
    cursor: string | null;
  }): Promise<PyTorchAnalysisResult> {
    const limit = limitWithin(request.limit, maximumRows(this.workspace));
    const scope = pinEvidenceScope(this.workspace, request.run_or_artifact);
    const cursors = queryCursors(this.workspace, "analyze_pytorch", {
      run_or_artifact: request.run_or_artifact,
      order_by: request.order_by,
    });
    const offset = (cursors.decode(request.cursor, scope.snapshot) as number | null) ?? 0;
    const outcome = await withEvidence(this.workspace, scope, async (view) => {
      const categories = await traceCategories(view);
      if (categories.length === 0) return { kind: "unextracted" as const };
      const torchEvents = categories
        .filter((entry) => entry.category !== null && torchCategories.includes(entry.category))
        .reduce((sum, entry) => sum + entry.events, 0);
      if (torchEvents === 0) return { kind: "not_torch" as const, categories };
      const page = await torchOperators(view, { orderBy: request.order_by, offset, limit });
      const allocations = await torchAllocations(view);
      const split = await torchTimeSplit(view, page.selfTotal);
      return { kind: "ok" as const, page, allocations, split };
    });
    if (outcome.kind === "unextracted") throw this.unextractedTrace(scope);
    if (outcome.kind === "not_torch") throw notTorch(request.run_or_artifact, outcome.categories);
    const { page, allocations, split } = outcome;
    return {
      schema_version: 1,
      run_or_artifact: request.run_or_artifact,
      corpus_commit_id: scope.corpusCommitId,
      order_by: request.order_by,
      operators: page.operators,
      allocations,
      time_split: split,
      ...offsetPage(offset, page.operators.length, page.total, (position) => cursors.encode(position, scope.snapshot)),
      limitations: scopeLimitations(scope),
      evidence: pageEvidence(
        page.total,
        "The torch trace holds no cpu_op events (was the profiler active around the work?).",
        `Operators from ${page.total} distinct cpu_op names; self time excludes child operators, calls and total time count outermost calls; accelerator time is reported apart (time_split).`,
      ),
    };
  }

  /** An execution trace that is registered but not extracted names extract_perfetto; otherwise capture or import one. */
  private unextractedTrace(scope: EvidenceScope) {
    const run = scopeRun(this.workspace, scope);
    const traces = registrationsOf(this.workspace, run ? [run.run_id] : []).filter(
      (registration) => registration.kind === "execution_trace",
    );
    if (run && traces.length > 0) {
      return needsExtraction(
        "extract_perfetto",
        run.run_id,
        `The execution trace of run ${run.run_id} has not been normalized into trace events yet.`,
        {
          artifactId: traces[0]!.artifact_id,
          remediation: [`Call extract_perfetto with run_id='${run.run_id}', then repeat analyze_pytorch.`],
        },
      );
    }
    return missingEvidence(this.workspace, scope, {
      what: "a torch.profiler trace",
      kinds: ["execution_trace"],
      extractTool: "extract_perfetto",
      adapter: "torch.profiler",
      importKind: "execution_trace",
    });
  }

  async acceleratorLaunches(request: {
    run_or_artifact: string;
    limit: number;
    comparison_run_or_artifact: string | null;
    phase: string | null;
  }): Promise<AcceleratorLaunchAnalysisResult> {
    const limit = limitWithin(request.limit, maximumRows(this.workspace));
    const scope = pinEvidenceScope(this.workspace, request.run_or_artifact);
    const need = {
      what: "trace events (torch.profiler with CUDA, or an Nsight Systems export)",
      kinds: ["execution_trace"],
      extractTool: "extract_perfetto",
      adapter: "torch.profiler",
      importKind: "execution_trace",
    };
    const run = scopeRun(this.workspace, scope);
    const base = await withEvidence(this.workspace, scope, async (view) => {
      const categories = await traceCategories(view);
      if (categories.length === 0) return null;
      return {
        summary: await acceleratorSummary(view, request.phase),
        page: await launchRegions(view, { phase: request.phase, offset: 0, limit }),
      };
    });
    if (!base) {
      const sqliteTrace = registrationsOf(this.workspace, run ? [run.run_id] : []).find(
        (registration) =>
          registration.kind === "execution_trace" && registration.format === null && registration.producer?.includes("nsight"),
      );
      throw missingEvidence(this.workspace, scope, sqliteTrace ? { ...need, extractTool: "extract_nsight_systems" } : need);
    }
    let comparison: AcceleratorSummary | null = null;
    if (request.comparison_run_or_artifact) {
      const comparisonScope = pinEvidenceScope(this.workspace, request.comparison_run_or_artifact);
      comparison = await withEvidence(this.workspace, comparisonScope, async (view) =>
        (await traceCategories(view)).length === 0 ? null : acceleratorSummary(view, request.phase),
      );
      if (!comparison) throw missingEvidence(this.workspace, comparisonScope, need);
    }
    const { summary, page } = base;
    const { partial, nothing, evidence } = launchEvidence(summary, request.phase, run);
    return {
      schema_version: 1,
      run_or_artifact: request.run_or_artifact,
      comparison_run_or_artifact: request.comparison_run_or_artifact,
      corpus_commit_id: scope.corpusCommitId,
      phase: request.phase,
      summary,
      launch_regions: page.regions,
      comparison,
      partial_reasons: nothing ? [] : partial,
      total: page.total,
      returned: page.regions.length,
      truncated: page.total > page.regions.length,
      limitations: scopeLimitations(scope),
      evidence,
    };
  }

  async window(request: {
    artifact_id: string;
    start_ns: number;
    end_ns: number;
    limit: number;
    cursor: string | null;
  }): Promise<TraceWindowResult> {
    if (request.end_ns <= request.start_ns) {
      throw invalidInput(
        "end_ns must be greater than start_ns.",
        [{ field: "end_ns", message: "must be greater than start_ns", type: "greater_than" }],
        {
          remediation: ["Pass end_ns greater than start_ns (nanoseconds on the trace's own clock)."],
        },
      );
    }
    const limit = limitWithin(request.limit, maximumRows(this.workspace));
    if (!request.artifact_id.startsWith("sha256:")) throw artifactNotFound(request.artifact_id);
    const scope = pinEvidenceScope(this.workspace, request.artifact_id);
    const cursors = queryCursors(this.workspace, "get_trace_window", {
      artifact_id: request.artifact_id,
      start_ns: request.start_ns,
      end_ns: request.end_ns,
    });
    const after = cursors.decode(request.cursor, scope.snapshot) as TraceWindowKey | null;
    const page = await withEvidence(this.workspace, scope, async (view) =>
      (await traceCategories(view)).length === 0
        ? null
        : traceWindow(view, { startNs: request.start_ns, endNs: request.end_ns, after, limit }),
    );
    if (!page)
      throw missingEvidence(this.workspace, scope, {
        what: "trace events",
        kinds: ["execution_trace"],
        extractTool: "extract_perfetto",
        adapter: "torch.profiler",
        importKind: "execution_trace",
      });
    const last = page.events[page.events.length - 1];
    const seen = (after ? await this.countBefore(scope, request, after) : 0) + page.events.length;
    const truncated = seen < page.total;
    return {
      schema_version: 1,
      artifact_id: request.artifact_id,
      corpus_commit_id: scope.corpusCommitId,
      start_ns: request.start_ns,
      end_ns: request.end_ns,
      events: page.events.map(({ artifact_id: _artifactId, ...event }) => event),
      total: page.total,
      returned: page.events.length,
      truncated,
      next_cursor:
        truncated && last ? cursors.encode({ ts_ns: last.ts_ns, event_id: last.event_id, run_id: last.run_id }, scope.snapshot) : null,
      evidence: pageEvidence(page.total, "No trace events overlap this window.", "Trace events overlapping the window, in time order."),
    };
  }

  private async countBefore(scope: EvidenceScope, request: { start_ns: number; end_ns: number }, after: TraceWindowKey): Promise<number> {
    return withEvidence(this.workspace, scope, (view) =>
      traceWindowEventsThrough(view, { startNs: request.start_ns, endNs: request.end_ns }, after),
    );
  }
}
