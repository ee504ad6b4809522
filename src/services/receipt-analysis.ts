import type { DefaultAnalysisKind } from "../adapters/registry.ts";
import { toFlameoxError } from "../domain/errors.ts";
import { type AnalysisService, defaultHotspotRequest } from "./analysis-service.ts";
import { boundedProjection } from "./bounded-projection.ts";
import type { EvidenceStatus } from "./evidence-needs.ts";
import type { ExecutionAnalysisService } from "./execution-analysis-service.ts";
import type { FailureAnalysisService } from "./failure-analysis-service.ts";
import type { MeasurementService } from "./measurement-service.ts";
import type { MemoryAnalysisService } from "./memory-analysis-service.ts";
import { defaultAnalysisOf, defaultNextStep, type NextStep } from "./receipt-next-step.ts";
import type { RunService } from "./run-service.ts";
import type { StackRecording } from "./stack-recording.ts";
import type { TraceAnalysisService } from "./trace-analysis-service.ts";

/**
 * The first answer a capture comes back with. Each adapter declares its default analysis in the
 * adapter registry; this runs it over the new run through the analysis service that owns it, with
 * a small limit, and cuts the result to fit beside the receipt in one tool result. An analysis that
 * fails never fails the capture: the receipt says why and names the next tool instead.
 */

export type ReceiptAnalysis = {
  kind: DefaultAnalysisKind;
  status: EvidenceStatus["status"];
  reason: string;
  /** The analysis service's own result, bounded: lists cut to their first items, with `omitted` saying where. */
  summary: Record<string, unknown> | null;
  omitted: string[];
  error: { code: string; message: string } | null;
};

/** What the receipt of a run needs to pick its analysis and next step. */
export type AnalyzedRun = {
  run_id: string;
  adapter: string | null;
  workload_name: string | null;
  execution_status: string;
  exception?: unknown;
};

type Answer = { result: Record<string, unknown> & { evidence: EvidenceStatus }; drop?: string[]; next?: NextStep | null };

export type ReceiptAnalysisDependencies = {
  hotspots: AnalysisService;
  memory: MemoryAnalysisService;
  execution: ExecutionAnalysisService;
  traces: TraceAnalysisService;
  failures: FailureAnalysisService;
  measurements: MeasurementService;
  runs: RunService;
};

/** Items per list in the receipt's answer, and the characters it may take (the receipt itself stays under 8,000 with it). */
const receiptItems = 5;
const receiptCharacters = 3_500;
/** Fields the receipt already carries, or that only make sense in a paged call. */
const alwaysDropped = ["schema_version", "run_or_artifact", "run_id", "corpus_commit_id", "next_cursor", "evidence", "flamegraph_uri"];

/** The evidence's own drill-down (a frame to ask callers of), when it names one. */
function drillDown(evidence: EvidenceStatus): NextStep | null {
  return evidence.status === "available" && evidence.next_tool && evidence.next_arguments
    ? { tool: evidence.next_tool, arguments: evidence.next_arguments }
    : null;
}

export class ReceiptAnalysisService {
  constructor(private readonly services: ReceiptAnalysisDependencies) {}

  /**
   * The default analysis of a finished run and the step after it. `recorded` hands over the rows the
   * run's extractions still hold in this process (a capture that just published them), when any.
   */
  async analyze(run: AnalyzedRun, recorded?: StackRecording): Promise<{ analysis: ReceiptAnalysis; next: NextStep }> {
    const kind = defaultAnalysisOf(run.adapter).kind;
    const fallback = defaultNextStep(run.adapter, run.run_id, run.workload_name);
    // A run that did not succeed (or whose workload crashed under a profiler that exited 0) is explained by
    // get_run, with its output tail and exception, before anything else.
    const failed = run.execution_status !== "succeeded" || (run.exception !== undefined && run.exception !== null);
    const failedNext: NextStep | null = failed ? { tool: "get_run", arguments: { run_id: run.run_id } } : null;
    try {
      const answer = await this.answer(kind, run, recorded);
      const projection = boundedProjection(answer.result, {
        items: receiptItems,
        characters: receiptCharacters,
        drop: new Set([...alwaysDropped, ...(answer.drop ?? [])]),
      });
      const evidence = answer.result.evidence;
      return {
        analysis: {
          kind,
          status: evidence.status,
          reason: evidence.reason,
          summary: projection.value,
          omitted: projection.omitted,
          error: null,
        },
        next: (evidence.status === "available" ? null : failedNext) ?? answer.next ?? drillDown(evidence) ?? fallback,
      };
    } catch (error) {
      const typed = toFlameoxError(error);
      return {
        analysis: {
          kind,
          status: "unavailable",
          reason: typed.message,
          summary: null,
          omitted: [],
          error: { code: typed.code, message: typed.message },
        },
        next: failedNext ?? fallback,
      };
    }
  }

  private async answer(kind: DefaultAnalysisKind, run: AnalyzedRun, recorded: StackRecording | undefined): Promise<Answer> {
    const runId = run.run_id;
    const { services } = this;
    switch (kind) {
      case "hotspots": {
        const result = await services.hotspots.hotspots(
          defaultHotspotRequest(runId, receiptItems),
          recorded ? (bundleIds) => recorded.rowsOf(bundleIds) : undefined,
        );
        return { result, drop: ["per_thread", "thread"] };
      }
      case "memory":
        return {
          result: await services.memory.analyze({ run_or_artifact: runId, limit: receiptItems, cursor: null }),
          drop: ["measurements"],
        };
      case "coverage": {
        const result = await services.execution.analyze({ run_or_artifact: runId, limit: receiptItems, comparison_run_or_artifact: null });
        return {
          result,
          drop: ["executed_line_ranges", "arc_count", "contexts", "differences", "comparison_run_or_artifact", "excluded_line_count"],
        };
      }
      case "operators":
        return { result: await services.traces.pytorch({ run_or_artifact: runId, limit: receiptItems, order_by: "self", cursor: null }) };
      case "test_outcomes": {
        const result = await services.failures.testOutcomes({ run_id: runId, limit: receiptItems });
        const next: NextStep =
          result.failure_total > 0
            ? { tool: "analyze_failures", arguments: run.workload_name ? { filter: { workload_name: run.workload_name } } : {} }
            : { tool: "query_measurements", arguments: { run_id: runId, name_prefix: "test.duration_ns" } };
        return { result, next };
      }
      case "benchmark": {
        const result = await services.measurements.summarize({
          run_id: runId,
          name_prefix: "pyperf.",
          groupBy: null,
          orderBy: "name",
          limit: receiptItems,
        });
        return { result, drop: ["group_by", "name_prefix"] };
      }
      case "imports":
        return this.imports(runId);
      case "runtime":
        return this.runtime(runId);
    }
  }

  /** python-startup: the startup samples, and the packages whose imports took longest. */
  private async imports(runId: string): Promise<Answer> {
    const startup = await this.services.measurements.summarize({
      run_id: runId,
      name_prefix: "startup.",
      groupBy: null,
      orderBy: "name",
      limit: receiptItems,
    });
    const imports = await this.services.measurements.summarize({
      run_id: runId,
      name_prefix: "import.package_self_us",
      groupBy: "package",
      orderBy: "sum",
      limit: receiptItems,
    });
    return {
      result: { startup: startup.groups, imports: imports.groups, import_total: imports.total, evidence: imports.evidence },
    };
  }

  /** command: how the process ended and what it used (wall, CPU, peak RSS), from the run itself. */
  private runtime(runId: string): Answer {
    const run = this.services.runs.getRun(runId);
    const process = (run.process ?? {}) as Record<string, unknown>;
    return {
      result: {
        exit_code: process.exit_code ?? null,
        terminating_signal: process.terminating_signal ?? null,
        measurements: run.measurements,
        unavailable_measurements: run.unavailable_measurements,
        evidence: {
          status: run.measurements.length > 0 ? "available" : "unavailable",
          reason: "Runtime measurements of the process tree.",
          next_tool: null,
          next_arguments: null,
        },
      },
    };
  }
}
