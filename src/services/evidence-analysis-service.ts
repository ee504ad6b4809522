import { digestOf } from "../domain/canonical-json.ts";
import { decodeCursor, encodeCursor } from "../domain/cursor.ts";
import {
  artifactNotFound,
  capabilityUnavailable,
  comparisonInvalid,
  type FlameoxError,
  invalidInput,
  needsExtraction,
  notFound,
  runNotFound,
} from "../domain/errors.ts";
import { queryHotspots, stackUnits, type Hotspot } from "../analysis/hotspots.ts";
import {
  acceleratorSummary,
  coverageByFile,
  errorSignature,
  failedTests,
  launchRegions,
  memoryMeasurements,
  queryMeasurementRows,
  torchAllocations,
  torchCategories,
  torchOperators,
  torchTimeSplit,
  traceCategories,
  traceWindow,
  type AcceleratorSummary,
  type FileCoverage,
  type LaunchRegion,
  type MeasurementKey,
  type MeasurementRecord,
  type MemoryMeasurement,
  type TimeSplit,
  type TorchAllocations,
  type TorchOperator,
  type TraceWindowEvent,
  type TraceWindowKey,
} from "../analysis/evidence-recipes.ts";
import { corpusHead } from "../store/corpus.ts";
import { currentBundles } from "../store/evidence-registry.ts";
import { readRun, type RunManifest } from "../store/run-store.ts";
import type { EvidenceStatus } from "./analysis-service.ts";
import { limitWithin, pinEvidenceScope, withEvidence, type EvidenceScope } from "./evidence-scope.ts";
import type { RunFilter } from "./run-service.ts";
import { loadWorkspacePolicy } from "../config/workspace-policy.ts";
import type { Services } from "./services.ts";

export type MemoryAnalysisResult = {
  schema_version: 1;
  run_or_artifact: string;
  corpus_commit_id: string;
  peak_bytes: number | null;
  retained_bytes: number | null;
  total_allocated_bytes: number | null;
  allocation_count: number | null;
  process_peak_rss_bytes: number | null;
  measurements: MemoryMeasurement[];
  top_allocations: Hotspot[];
  total: number;
  returned: number;
  truncated: boolean;
  evidence: EvidenceStatus;
};

export type ExecutionFileSummary = {
  file: string;
  executed_lines: number[];
  executed_line_count: number;
  arcs: string[];
  arc_count: number;
  contexts: string[];
};
export type ExecutionFileDifference = {
  file: string;
  lines_only_in_base: number[];
  lines_only_in_comparison: number[];
  arcs_only_in_base: string[];
  arcs_only_in_comparison: string[];
};

export type ExecutionAnalysisResult = {
  schema_version: 1;
  run_or_artifact: string;
  comparison_run_or_artifact: string | null;
  corpus_commit_id: string;
  executed_line_count: number;
  arc_count: number;
  files: ExecutionFileSummary[];
  differences: ExecutionFileDifference[] | null;
  total: number;
  returned: number;
  truncated: boolean;
  evidence: EvidenceStatus;
};

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
  evidence: EvidenceStatus;
};

export type FailureCluster = {
  signature: string;
  source: "test" | "run";
  count: number;
  run_count: number;
  run_ids: string[];
  examples: { run_id: string; subject: string; message: string | null }[];
  first_seen_at: string | null;
  last_seen_at: string | null;
};

export type FailureAnalysisResult = {
  schema_version: 1;
  corpus_commit_id: string;
  runs_examined: number;
  failed_runs: number;
  clusters: FailureCluster[];
  total: number;
  returned: number;
  truncated: boolean;
  evidence: EvidenceStatus;
};

export type TraceWindowResult = {
  schema_version: 1;
  artifact_id: string;
  corpus_commit_id: string;
  start_ns: number;
  end_ns: number;
  events: TraceWindowEvent[];
  total: number;
  returned: number;
  truncated: boolean;
  next_cursor: string | null;
  evidence: EvidenceStatus;
};

export type MeasurementQueryResult = {
  schema_version: 1;
  corpus_commit_id: string;
  filters: { run_id: string | null; artifact_id: string | null; name_prefix: string | null; include_warmups: boolean };
  measurements: MeasurementRecord[];
  total: number;
  returned: number;
  truncated: boolean;
  next_cursor: string | null;
  evidence: EvidenceStatus;
};

export type EvidenceRefType = "analysis" | "artifact" | "comparison" | "generation" | "observation" | "run" | "run_set" | "trial";

export type EvidenceLookupResult = {
  schema_version: 1;
  corpus_commit_id: string;
  ref_type: EvidenceRefType;
  ref_id: string;
  data: Record<string, unknown>;
};

export type EvidenceSummaryRequest = {
  baseline_run_id?: string | null;
  candidate_run_id?: string | null;
  run_ids?: string[] | null;
  comparison_ids?: string[] | null;
  analysis_ids?: string[] | null;
  finding_ids?: string[] | null;
  output_excerpts?: "none" | "internal";
  sensitive_context?: "redact" | "include";
};

export type EvidenceSummaryBundle = {
  schema_version: 1;
  corpus_commit_id: string;
  summary_digest: string;
  summary: Record<string, unknown>;
  markdown: string;
};

const available = (
  reason: string,
  nextTool: string | null = null,
  nextArguments: Record<string, unknown> | null = null,
): EvidenceStatus => ({ status: "available", reason, next_tool: nextTool, next_arguments: nextArguments });

/** Analyses beyond hotspots: memory, execution, PyTorch, accelerators, failures, trace windows, measurements, evidence lookup. */
export class EvidenceAnalysisService {
  constructor(private readonly services: Services) {}

  private maximumRows(): number {
    return loadWorkspacePolicy(this.services.workspace().root).limits.max_row_limit;
  }

  private registrations(
    runIds: string[],
  ): { run_id: string; artifact_id: string; kind: string; producer: string | null; format: string | null }[] {
    if (runIds.length === 0) return [];
    return this.services
      .workspace()
      .state.database.query<
        { run_id: string; artifact_id: string; kind: string; producer: string | null; format: string | null },
        string[]
      >(
        `SELECT run_id, artifact_id, kind, producer, format FROM artifact_registrations WHERE run_id IN (${runIds.map(() => "?").join(", ")})`,
      )
      .all(...runIds);
  }

  /** The run (or the artifact's runs) behind a scope, for recovery arguments. */
  private scopeRun(scope: EvidenceScope): RunManifest | null {
    const database = this.services.workspace().state.database;
    if (scope.kind === "run") return readRun(database, scope.id);
    const row = database
      .query<{ run_id: string }, [string]>("SELECT run_id FROM artifact_registrations WHERE artifact_id = ? ORDER BY registered_at LIMIT 1")
      .get(scope.id);
    return row ? readRun(database, row.run_id) : null;
  }

  /** What to do when the evidence an analysis needs is absent: extract what is there, else capture or import. */
  private missing(
    scope: EvidenceScope,
    need: { what: string; kinds: string[]; extractTool: string; adapter: string; importKind: string },
  ): FlameoxError {
    const run = this.scopeRun(scope);
    const runIds = scope.kind === "run" ? [scope.id] : run ? [run.run_id] : [];
    const unextracted = this.registrations(runIds).find(
      (registration) => need.kinds.includes(registration.kind) && (scope.kind === "run" || registration.artifact_id === scope.id),
    );
    if (unextracted && run) {
      return needsExtraction(
        need.extractTool,
        run.run_id,
        `${scope.kind === "run" ? "Run" : "Artifact"} ${scope.id} holds a ${unextracted.kind} artifact that has not been normalized into ${need.what}.`,
        {
          artifactId: unextracted.artifact_id,
          remediation: [`Call ${need.extractTool} with run_id='${run.run_id}', then repeat this analysis.`],
        },
      );
    }
    if (run?.workload_name) {
      return capabilityUnavailable(`${scope.kind === "run" ? "Run" : "Artifact"} ${scope.id} has no ${need.what}.`, {
        details: { next_tool: "plan_capture", run_or_artifact: scope.id, adapter: need.adapter },
        remediation: [`Capture the workload with the ${need.adapter} adapter: call plan_capture with the arguments in recovery.`],
        next: { tool: "plan_capture", arguments: { workload_name: run.workload_name, adapter: need.adapter, parameters: run.parameters } },
      });
    }
    return capabilityUnavailable(`${scope.kind === "run" ? "Run" : "Artifact"} ${scope.id} has no ${need.what}.`, {
      details: { next_tool: "import_artifact", run_or_artifact: scope.id, required_kind: need.importKind },
      remediation: [
        `Import an artifact of kind ${need.importKind} with import_artifact (then ${need.extractTool}), or capture with the ${need.adapter} adapter.`,
      ],
      next: { tool: "import_artifact", arguments: { kind: need.importKind } },
    });
  }

  private cursorTools(query: string, request: Record<string, unknown>) {
    const secret = this.services.workspace().cursorSecret();
    const scope = digestOf({ query, ...request, cursor: null });
    return {
      decode: (cursor: string | null, snapshot: string): unknown => (cursor ? decodeCursor(secret, cursor, { scope, snapshot }) : null),
      encode: (position: unknown, snapshot: string): string =>
        encodeCursor(secret, { scope, snapshot, position } as Parameters<typeof encodeCursor>[1]),
    };
  }

  async memory(request: { run_or_artifact: string; limit: number }): Promise<MemoryAnalysisResult> {
    const limit = limitWithin(request.limit, this.maximumRows());
    const scope = pinEvidenceScope(this.services, request.run_or_artifact);
    const result = await withEvidence(this.services, scope, async (view) => {
      const measurements = await memoryMeasurements(view);
      const units = await stackUnits(view);
      const hasBytes = units.some((unit) => unit.unit === "bytes");
      const page = hasBytes
        ? await queryHotspots(
            view,
            { groupBy: "function", unit: "bytes", thread: null, perThread: false, orderBy: "self" },
            { offset: 0, limit },
          )
        : null;
      return { measurements, page };
    });
    const pick = (name: string) => {
      const values = result.measurements.filter((measurement) => measurement.name === name).map((measurement) => measurement.value);
      return values.length > 0 ? Math.max(...values) : null;
    };
    const allocatorEvidence = result.measurements.some((measurement) => measurement.name.startsWith("memory.")) || result.page !== null;
    const rss = result.measurements
      .filter((measurement) => measurement.name.endsWith("rss_bytes") || measurement.name.endsWith("max_rss"))
      .map((measurement) => measurement.value);
    if (!allocatorEvidence && rss.length === 0) {
      throw this.missing(scope, {
        what: "memory evidence (memray allocations or peak RSS)",
        kinds: ["memory_profile"],
        extractTool: "extract_memray",
        adapter: "memray",
        importKind: "memory_profile",
      });
    }
    const run = this.scopeRun(scope);
    const hotspots = result.page?.hotspots ?? [];
    return {
      schema_version: 1,
      run_or_artifact: request.run_or_artifact,
      corpus_commit_id: scope.corpusCommitId,
      peak_bytes: pick("memory.peak_bytes"),
      retained_bytes: pick("memory.leaked_bytes"),
      total_allocated_bytes: pick("memory.total_allocated_bytes"),
      allocation_count: pick("memory.allocation_count"),
      process_peak_rss_bytes: rss.length > 0 ? Math.max(...rss) : null,
      measurements: result.measurements.slice(0, limit),
      top_allocations: hotspots,
      total: result.measurements.length,
      returned: Math.min(limit, result.measurements.length),
      truncated: result.measurements.length > limit || (result.page ? result.page.total > hotspots.length : false),
      evidence: allocatorEvidence
        ? available(
            "From memray allocation evidence (peak, retained, stacks alive at the high-water mark).",
            hotspots[0] ? "get_stack_examples" : null,
            hotspots[0] ? { run_or_artifact: request.run_or_artifact, frame_id: hotspots[0].frame_id, unit: "bytes" } : null,
          )
        : {
            status: "partial",
            reason: "Only process peak RSS is known; there is no allocation evidence.",
            next_tool: run?.workload_name ? "plan_capture" : "import_artifact",
            next_arguments: run?.workload_name
              ? { workload_name: run.workload_name, adapter: "memray", parameters: run.parameters }
              : { kind: "memory_profile" },
          },
    };
  }

  async execution(request: {
    run_or_artifact: string;
    limit: number;
    comparison_run_or_artifact: string | null;
  }): Promise<ExecutionAnalysisResult> {
    const limit = limitWithin(request.limit, this.maximumRows());
    const scope = pinEvidenceScope(this.services, request.run_or_artifact);
    const base = await withEvidence(this.services, scope, (view) => coverageByFile(view));
    const need = {
      what: "execution coverage (line and arc observations)",
      kinds: ["execution_coverage"],
      extractTool: "extract_coverage",
      adapter: "coverage",
      importKind: "execution_coverage",
    };
    if (base.length === 0) throw this.missing(scope, need);
    let comparison: FileCoverage[] | null = null;
    if (request.comparison_run_or_artifact) {
      const comparisonScope = pinEvidenceScope(this.services, request.comparison_run_or_artifact);
      comparison = await withEvidence(this.services, comparisonScope, (view) => coverageByFile(view));
      if (comparison.length === 0) throw this.missing(comparisonScope, need);
    }
    const files = base.map((file) => ({
      file: file.file,
      executed_lines: file.lines,
      executed_line_count: file.lines.length,
      arcs: file.arcs,
      arc_count: file.arcs.length,
      contexts: file.contexts,
    }));
    let differences: ExecutionFileDifference[] | null = null;
    if (comparison) {
      const byFile = new Map(comparison.map((file) => [file.file, file]));
      const names = [...new Set([...base.map((file) => file.file), ...comparison.map((file) => file.file)])].sort();
      const baseByFile = new Map(base.map((file) => [file.file, file]));
      differences = names
        .map((name) => {
          const left = baseByFile.get(name) ?? { lines: [], arcs: [] };
          const right = byFile.get(name) ?? { lines: [], arcs: [] };
          const rightLines = new Set(right.lines);
          const leftLines = new Set(left.lines);
          const rightArcs = new Set(right.arcs);
          const leftArcs = new Set(left.arcs);
          return {
            file: name,
            lines_only_in_base: left.lines.filter((line) => !rightLines.has(line)),
            lines_only_in_comparison: right.lines.filter((line) => !leftLines.has(line)),
            arcs_only_in_base: left.arcs.filter((arc) => !rightArcs.has(arc)),
            arcs_only_in_comparison: right.arcs.filter((arc) => !leftArcs.has(arc)),
          };
        })
        .filter(
          (difference) =>
            difference.lines_only_in_base.length +
              difference.lines_only_in_comparison.length +
              difference.arcs_only_in_base.length +
              difference.arcs_only_in_comparison.length >
            0,
        )
        .slice(0, limit);
    }
    return {
      schema_version: 1,
      run_or_artifact: request.run_or_artifact,
      comparison_run_or_artifact: request.comparison_run_or_artifact,
      corpus_commit_id: scope.corpusCommitId,
      executed_line_count: files.reduce((sum, file) => sum + file.executed_line_count, 0),
      arc_count: files.reduce((sum, file) => sum + file.arc_count, 0),
      files: files.slice(0, limit),
      differences,
      total: files.length,
      returned: Math.min(limit, files.length),
      truncated: files.length > limit,
      evidence: available(
        comparison
          ? `Coverage of ${files.length} file(s) compared with ${request.comparison_run_or_artifact}; ${differences!.length} file(s) differ.`
          : `Executed lines and arcs of ${files.length} project file(s).`,
      ),
    };
  }

  async pytorch(request: {
    run_or_artifact: string;
    limit: number;
    order_by: "self" | "total";
    cursor: string | null;
  }): Promise<PyTorchAnalysisResult> {
    const limit = limitWithin(request.limit, this.maximumRows());
    const scope = pinEvidenceScope(this.services, request.run_or_artifact);
    const cursors = this.cursorTools("analyze_pytorch", { run_or_artifact: request.run_or_artifact, order_by: request.order_by });
    const offset = (cursors.decode(request.cursor, scope.snapshot) as number | null) ?? 0;
    const outcome = await withEvidence(this.services, scope, async (view) => {
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
    const run = this.scopeRun(scope);
    if (outcome.kind === "unextracted") {
      const traces = this.registrations(run ? [run.run_id] : []).filter((registration) => registration.kind === "execution_trace");
      if (run && traces.length > 0) {
        throw needsExtraction(
          "extract_perfetto",
          run.run_id,
          `The execution trace of run ${run.run_id} has not been normalized into trace events yet.`,
          {
            artifactId: traces[0]!.artifact_id,
            remediation: [`Call extract_perfetto with run_id='${run.run_id}', then repeat analyze_pytorch.`],
          },
        );
      }
      throw this.missing(scope, {
        what: "a torch.profiler trace",
        kinds: ["execution_trace"],
        extractTool: "extract_perfetto",
        adapter: "torch.profiler",
        importKind: "execution_trace",
      });
    }
    if (outcome.kind === "not_torch") {
      throw comparisonInvalid(
        `${request.run_or_artifact} holds trace events, but none from torch.profiler (categories: ${outcome.categories
          .slice(0, 6)
          .map((entry) => entry.category ?? "none")
          .join(", ")}).`,
        {
          details: { next_tool: "import_artifact", required_kind: "execution_trace", required_producer: "torch.profiler" },
          remediation: [
            "Import a torch.profiler Chrome trace with import_artifact(kind='execution_trace', producer='torch.profiler'), or capture with the torch.profiler adapter.",
          ],
          next: { tool: "import_artifact", arguments: { kind: "execution_trace", producer: "torch.profiler" } },
        },
      );
    }
    const { page, allocations, split } = outcome;
    const truncated = offset + page.operators.length < page.total;
    return {
      schema_version: 1,
      run_or_artifact: request.run_or_artifact,
      corpus_commit_id: scope.corpusCommitId,
      order_by: request.order_by,
      operators: page.operators,
      allocations,
      time_split: split,
      total: page.total,
      returned: page.operators.length,
      truncated,
      next_cursor: truncated ? cursors.encode(offset + page.operators.length, scope.snapshot) : null,
      evidence:
        page.total === 0
          ? {
              status: "empty",
              reason: "The torch trace holds no cpu_op events (was the profiler active around the work?).",
              next_tool: null,
              next_arguments: null,
            }
          : available(`Operators from ${page.total} distinct cpu_op names; self time excludes child operators.`),
    };
  }

  async acceleratorLaunches(request: {
    run_or_artifact: string;
    limit: number;
    comparison_run_or_artifact: string | null;
    phase: string | null;
  }): Promise<AcceleratorLaunchAnalysisResult> {
    const limit = limitWithin(request.limit, this.maximumRows());
    const scope = pinEvidenceScope(this.services, request.run_or_artifact);
    const need = {
      what: "trace events (torch.profiler with CUDA, or an Nsight Systems export)",
      kinds: ["execution_trace"],
      extractTool: "extract_perfetto",
      adapter: "torch.profiler",
      importKind: "execution_trace",
    };
    const run = this.scopeRun(scope);
    const base = await withEvidence(this.services, scope, async (view) => {
      const categories = await traceCategories(view);
      if (categories.length === 0) return null;
      return {
        summary: await acceleratorSummary(view, request.phase),
        page: await launchRegions(view, { phase: request.phase, offset: 0, limit }),
      };
    });
    if (!base) {
      const sqliteTrace = this.registrations(run ? [run.run_id] : []).find(
        (registration) =>
          registration.kind === "execution_trace" && registration.format === null && registration.producer?.includes("nsight"),
      );
      throw this.missing(scope, sqliteTrace ? { ...need, extractTool: "extract_nsight_systems" } : need);
    }
    let comparison: AcceleratorSummary | null = null;
    if (request.comparison_run_or_artifact) {
      const comparisonScope = pinEvidenceScope(this.services, request.comparison_run_or_artifact);
      comparison = await withEvidence(this.services, comparisonScope, async (view) =>
        (await traceCategories(view)).length === 0 ? null : acceleratorSummary(view, request.phase),
      );
      if (!comparison) throw this.missing(comparisonScope, need);
    }
    const { summary, page } = base;
    const partial: string[] = [];
    if (summary.kernels === 0) partial.push("no_kernels");
    if (summary.runtime_launches + summary.graph_launches === 0) partial.push("no_runtime_launches");
    if (summary.kernels > 0 && summary.correlation_coverage === 0) partial.push("correlation_missing");
    else if (summary.correlation_coverage !== null && summary.correlation_coverage < 1) partial.push("correlation_partial");
    const nothing = summary.kernels === 0 && summary.runtime_launches + summary.graph_launches === 0 && summary.memory_copies === 0;
    const evidence: EvidenceStatus = nothing
      ? {
          status: "empty",
          reason: request.phase
            ? `No accelerator activity inside phase '${request.phase}'.`
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
      evidence,
    };
  }

  async failures(
    request: { limit: number; filter: RunFilter | null },
    progress?: (step: number, message: string) => Promise<void>,
  ): Promise<FailureAnalysisResult> {
    const limit = limitWithin(request.limit, this.maximumRows());
    const database = this.services.workspace().state.database;
    const head = corpusHead(database);
    const runIds: string[] = [];
    let cursor: string | null = null;
    do {
      const page = this.services.runs.listRuns({ limit: 1000, filter: request.filter, cursor });
      runIds.push(...page.runs.map((run) => run.run_id));
      cursor = page.next_cursor;
    } while (cursor && runIds.length < 10_000);
    await progress?.(1, `Examined ${runIds.length} runs`);
    const manifests = runIds.map((runId) => readRun(database, runId)).filter((run): run is RunManifest => run !== null);
    const clusters = new Map<string, FailureCluster>();
    const add = (
      key: string,
      source: "test" | "run",
      signature: string,
      runId: string,
      subject: string,
      message: string | null,
      at: string | null,
    ) => {
      const cluster = clusters.get(key) ?? {
        signature,
        source,
        count: 0,
        run_count: 0,
        run_ids: [],
        examples: [],
        first_seen_at: at,
        last_seen_at: at,
      };
      cluster.count += 1;
      if (!cluster.run_ids.includes(runId)) cluster.run_ids.push(runId);
      cluster.run_count = cluster.run_ids.length;
      if (cluster.examples.length < 5) cluster.examples.push({ run_id: runId, subject, message: message?.slice(0, 500) ?? null });
      if (at && (!cluster.first_seen_at || at < cluster.first_seen_at)) cluster.first_seen_at = at;
      if (at && (!cluster.last_seen_at || at > cluster.last_seen_at)) cluster.last_seen_at = at;
      clusters.set(key, cluster);
    };
    let failedRuns = 0;
    const createdAt = new Map(manifests.map((run) => [run.run_id, run.created_at]));
    for (const run of manifests) {
      if (!["failed", "timed_out", "cancelled"].includes(run.execution_status) && run.capture_status !== "failed") continue;
      failedRuns += 1;
      const process = (run.process ?? {}) as Record<string, unknown>;
      const signature =
        run.execution_status === "timed_out"
          ? "timed out"
          : run.execution_status === "cancelled"
            ? "cancelled"
            : run.failure
              ? `${run.failure.code}: ${errorSignature(run.failure.message)}`
              : process.terminating_signal
                ? `killed by ${String(process.terminating_signal)}`
                : process.exit_code !== undefined && process.exit_code !== null
                  ? `exit ${String(process.exit_code)}`
                  : `capture ${run.capture_status}`;
      add(
        `run\u0000${run.workload_name ?? ""}\u0000${run.adapter ?? ""}\u0000${signature}`,
        "run",
        `${run.workload_name ?? "import"}${run.adapter ? ` (${run.adapter})` : ""}: ${signature}`,
        run.run_id,
        run.workload_name ?? run.run_id,
        run.failure?.message ?? null,
        run.created_at,
      );
    }
    const bundles = currentBundles(database, { maxSequence: head.sequence }).filter(
      (bundle) => createdAt.has(bundle.run_id) && (bundle.tables.observations ?? 0) > 0,
    );
    if (bundles.length > 0) {
      const { EvidenceView } = await import("../store/evidence-query.ts");
      const view = await EvidenceView.open(
        this.services.workspace(),
        bundles.map((bundle) => bundle.bundle_id),
      );
      try {
        for (const failure of await failedTests(view)) {
          const signature = `${failure.outcome}: ${errorSignature(failure.message)}`;
          add(
            `test\u0000${signature}`,
            "test",
            signature,
            failure.run_id,
            failure.nodeid,
            failure.message,
            createdAt.get(failure.run_id) ?? null,
          );
        }
      } finally {
        view.close();
      }
    }
    const ordered = [...clusters.values()].sort(
      (left, right) => right.count - left.count || right.run_count - left.run_count || left.signature.localeCompare(right.signature),
    );
    return {
      schema_version: 1,
      corpus_commit_id: head.commit_id,
      runs_examined: manifests.length,
      failed_runs: failedRuns,
      clusters: ordered.slice(0, limit),
      total: ordered.length,
      returned: Math.min(limit, ordered.length),
      truncated: ordered.length > limit,
      evidence:
        manifests.length === 0
          ? { status: "empty", reason: "No runs match the filter.", next_tool: "list_runs", next_arguments: { limit: 20 } }
          : ordered.length === 0
            ? {
                status: "empty",
                reason: `None of ${manifests.length} run(s) failed and no extracted test outcome failed.`,
                next_tool: null,
                next_arguments: null,
              }
            : available(`Clustered by error signature across ${manifests.length} run(s) and their extracted test outcomes.`),
    };
  }

  async traceWindow(request: {
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
    const limit = limitWithin(request.limit, this.maximumRows());
    if (!request.artifact_id.startsWith("sha256:")) throw artifactNotFound(request.artifact_id);
    const scope = pinEvidenceScope(this.services, request.artifact_id);
    const cursors = this.cursorTools("get_trace_window", {
      artifact_id: request.artifact_id,
      start_ns: request.start_ns,
      end_ns: request.end_ns,
    });
    const after = cursors.decode(request.cursor, scope.snapshot) as TraceWindowKey | null;
    const page = await withEvidence(this.services, scope, async (view) =>
      (await traceCategories(view)).length === 0
        ? null
        : traceWindow(view, { startNs: request.start_ns, endNs: request.end_ns, after, limit }),
    );
    if (!page)
      throw this.missing(scope, {
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
      events: page.events,
      total: page.total,
      returned: page.events.length,
      truncated,
      next_cursor:
        truncated && last ? cursors.encode({ ts_ns: last.ts_ns, event_id: last.event_id, run_id: last.run_id }, scope.snapshot) : null,
      evidence:
        page.total === 0
          ? { status: "empty", reason: "No trace events overlap this window.", next_tool: null, next_arguments: null }
          : available("Trace events overlapping the window, in time order."),
    };
  }

  private async countBefore(scope: EvidenceScope, request: { start_ns: number; end_ns: number }, after: TraceWindowKey): Promise<number> {
    return withEvidence(this.services, scope, async (view) => {
      const rows = await view.rows<{ n: unknown }>(
        `SELECT count(*) AS n FROM trace_events WHERE ts_ns < ${Math.trunc(request.end_ns)} AND ts_ns + coalesce(dur_ns, 0) >= ${Math.trunc(request.start_ns)} AND (ts_ns, event_id, run_id) <= (${after.ts_ns}, ${after.event_id}, '${after.run_id.replaceAll("'", "''")}')`,
      );
      return Number(rows[0]?.n ?? 0);
    });
  }

  async queryMeasurements(request: {
    run_id: string | null;
    artifact_id: string | null;
    name_prefix: string | null;
    include_warmups: boolean;
    limit: number;
    cursor: string | null;
  }): Promise<MeasurementQueryResult> {
    const limit = limitWithin(request.limit, this.maximumRows());
    const database = this.services.workspace().state.database;
    let scope: EvidenceScope;
    if (request.artifact_id) {
      if (!request.artifact_id.startsWith("sha256:")) throw artifactNotFound(request.artifact_id);
      scope = pinEvidenceScope(this.services, request.artifact_id);
      if (request.run_id)
        scope = { ...scope, bundles: scope.bundles.filter((bundle) => bundle.run_id === request.run_id), runIds: [request.run_id] };
    } else if (request.run_id) {
      scope = pinEvidenceScope(this.services, request.run_id);
    } else {
      const head = corpusHead(database);
      const bundles = currentBundles(database, { maxSequence: head.sequence });
      scope = {
        kind: "run",
        id: "*",
        runIds: [...new Set(bundles.map((bundle) => bundle.run_id))],
        bundles,
        snapshot: digestOf(bundles.map((bundle) => bundle.bundle_id)),
        corpusCommitId: head.commit_id,
      };
    }
    scope = { ...scope, bundles: scope.bundles.filter((bundle) => (bundle.tables.measurements ?? 0) > 0) };
    const filters = {
      run_id: request.run_id,
      artifact_id: request.artifact_id,
      name_prefix: request.name_prefix,
      include_warmups: request.include_warmups,
    };
    const cursors = this.cursorTools("query_measurements", { ...filters });
    const after = cursors.decode(request.cursor, scope.snapshot) as { key: MeasurementKey; seen: number } | null;
    const page = await withEvidence(this.services, scope, (view) =>
      queryMeasurementRows(view, {
        namePrefix: request.name_prefix,
        includeWarmups: request.include_warmups,
        after: after?.key ?? null,
        limit,
      }),
    );
    const seen = (after?.seen ?? 0) + page.rows.length;
    const truncated = seen < page.total;
    let evidence: EvidenceStatus;
    if (page.total > 0) evidence = available("Measurements from extracted evidence.");
    else if (scope.bundles.length === 0 && request.run_id) {
      const kinds = this.registrations([request.run_id]).map((registration) => registration.kind);
      const extractTool = kinds.includes("benchmark_samples")
        ? "extract_pyperf"
        : kinds.includes("test_execution")
          ? "extract_pytest"
          : kinds.includes("python_startup")
            ? "extract_python_startup"
            : null;
      evidence = extractTool
        ? {
            status: "unavailable",
            reason: "The run's artifacts have not been extracted into measurements.",
            next_tool: extractTool,
            next_arguments: { run_id: request.run_id },
          }
        : {
            status: "unavailable",
            reason: "The run has no measurement evidence.",
            next_tool: "get_run",
            next_arguments: { run_id: request.run_id },
          };
    } else
      evidence = {
        status: "empty",
        reason: request.name_prefix
          ? `No measurement name starts with '${request.name_prefix}'${request.include_warmups ? "" : " (warm-ups excluded)"}.`
          : "No measurements match.",
        next_tool: null,
        next_arguments: null,
      };
    if (evidence.status === "unavailable" && evidence.next_tool?.startsWith("extract_")) {
      throw needsExtraction(
        evidence.next_tool,
        request.run_id!,
        `Run ${request.run_id} has artifacts that are not extracted into measurements yet.`,
        { remediation: [`Call ${evidence.next_tool} with run_id='${request.run_id}', then query again.`] },
      );
    }
    return {
      schema_version: 1,
      corpus_commit_id: scope.corpusCommitId,
      filters,
      measurements: page.rows,
      total: page.total,
      returned: page.rows.length,
      truncated,
      next_cursor: truncated && page.lastKey ? cursors.encode({ key: page.lastKey, seen }, scope.snapshot) : null,
      evidence,
    };
  }

  getEvidence(request: { ref_type: EvidenceRefType; ref_id: string }): EvidenceLookupResult {
    const database = this.services.workspace().state.database;
    const head = corpusHead(database);
    const tableExists = (name: string) =>
      database.query("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(name) !== null;
    const missing = (entity: Exclude<EvidenceRefType, "run">) =>
      notFound(entity, request.ref_id, {
        field: "ref_id",
        message: `No ${request.ref_type} evidence with id ${request.ref_id} exists in this workspace.`,
        details: { ref_type: request.ref_type },
        remediation: [
          entity === "artifact"
            ? "Call list_artifacts to choose an existing artifact."
            : `Pass the ${request.ref_type} id exactly as a receipt returned it.`,
        ],
        list: entity === "artifact" ? { tool: "list_artifacts" } : null,
      });
    let data: Record<string, unknown> | null = null;
    switch (request.ref_type) {
      case "run": {
        const run = readRun(database, request.ref_id);
        if (!run) throw runNotFound(request.ref_id);
        data = { ...run, evidence_bundles: currentBundles(database, { runId: request.ref_id }) };
        break;
      }
      case "artifact":
        try {
          data = this.services.runs.getArtifact(request.ref_id) as unknown as Record<string, unknown>;
        } catch {
          throw missing("artifact");
        }
        break;
      case "generation": {
        const row = database
          .query<Record<string, unknown>, [string]>("SELECT * FROM evidence_bundles WHERE bundle_id = ?")
          .get(request.ref_id);
        if (row) data = { ...row, tables: JSON.parse(String(row.tables)) };
        break;
      }
      case "analysis":
      case "comparison": {
        if (tableExists("evidence_records")) {
          const row = database
            .query<
              { record: string; recipe: string; corpus_commit_id: string; result_digest: string; created_at: string },
              [string, string]
            >("SELECT record, recipe, corpus_commit_id, result_digest, created_at FROM evidence_records WHERE ref_type = ? AND ref_id = ?")
            .get(request.ref_type, request.ref_id);
          if (row)
            data = {
              recipe: row.recipe,
              corpus_commit_id: row.corpus_commit_id,
              result_digest: row.result_digest,
              created_at: row.created_at,
              record: JSON.parse(row.record),
            };
        }
        break;
      }
      case "run_set":
      case "trial": {
        const table = request.ref_type === "run_set" ? "run_sets" : "trials";
        if (tableExists(table)) {
          const row = database
            .query<{ record: string }, [string]>(`SELECT record FROM ${table} WHERE ${request.ref_type}_id = ?`)
            .get(request.ref_id);
          if (row) data = JSON.parse(row.record) as Record<string, unknown>;
        }
        break;
      }
      case "observation":
        break;
    }
    if (!data) throw request.ref_type === "run" ? runNotFound(request.ref_id) : missing(request.ref_type);
    return { schema_version: 1, corpus_commit_id: head.commit_id, ref_type: request.ref_type, ref_id: request.ref_id, data };
  }

  async summarize(request: EvidenceSummaryRequest): Promise<EvidenceSummaryBundle> {
    const runIds = [
      ...new Set(
        [request.baseline_run_id, request.candidate_run_id, ...(request.run_ids ?? [])].filter(
          (id): id is string => typeof id === "string" && id.length > 0,
        ),
      ),
    ];
    const references =
      runIds.length + (request.comparison_ids?.length ?? 0) + (request.analysis_ids?.length ?? 0) + (request.finding_ids?.length ?? 0);
    if (references === 0 || references > 50) {
      throw invalidInput(
        references === 0
          ? "Name at least one run, comparison, analysis or finding to summarize."
          : "At most 50 references can be summarized at once.",
        [
          {
            field: "request",
            message: references === 0 ? "at least one reference is required" : "at most 50 references",
            type: "value_error",
          },
        ],
        { remediation: ["Pass run_ids (≤20), comparison_ids (≤10), analysis_ids (≤20) or finding_ids (≤20)."] },
      );
    }
    const database = this.services.workspace().state.database;
    const head = corpusHead(database);
    const runs: Record<string, unknown>[] = [];
    for (const runId of runIds) {
      const run = readRun(database, runId);
      if (!run) throw runNotFound(runId);
      const bundles = currentBundles(database, { runId, maxSequence: head.sequence });
      const tables: Record<string, number> = {};
      for (const bundle of bundles)
        for (const [table, count] of Object.entries(bundle.tables)) tables[table] = (tables[table] ?? 0) + count;
      const process = (run.process ?? {}) as Record<string, unknown>;
      runs.push({
        run_id: run.run_id,
        role: run.run_id === request.baseline_run_id ? "baseline" : run.run_id === request.candidate_run_id ? "candidate" : "run",
        run_type: run.run_type,
        workload_name: run.workload_name,
        adapter: run.adapter,
        created_at: run.created_at,
        execution_status: run.execution_status,
        capture_status: run.capture_status,
        validation_status: run.validation_status,
        exit_code: process.exit_code ?? null,
        wall_time_ns: process.wall_time_ns ?? null,
        measurements: run.measurements.slice(0, 10),
        artifact_kinds: [...new Set(run.artifacts.map((artifact) => artifact.kind))].sort(),
        evidence_tables: tables,
        extractors: [...new Set(bundles.map((bundle) => bundle.extractor))].sort(),
        limitations:
          request.sensitive_context === "include" ? run.limitations : run.limitations.map((limitation) => limitation.slice(0, 200)),
      });
    }
    const records: Record<string, unknown>[] = [];
    for (const [type, ids] of [
      ["comparison", request.comparison_ids ?? []],
      ["analysis", request.analysis_ids ?? []],
    ] as const) {
      for (const id of ids) records.push({ ref_type: type, ref_id: id, ...this.getEvidence({ ref_type: type, ref_id: id }).data });
    }
    const findings: Record<string, unknown>[] = [];
    for (const id of request.finding_ids ?? []) {
      const exists = database.query("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'findings'").get() !== null;
      const row = exists
        ? database
            .query<{ record: string }, [string]>("SELECT record FROM findings WHERE finding_id = ? ORDER BY revision DESC LIMIT 1")
            .get(id)
        : null;
      if (!row)
        throw notFound("finding", id, {
          message: `No finding ${id} exists.`,
          remediation: ["Call list_findings to choose an existing finding."],
          list: { tool: "list_findings", arguments: { limit: 100 } },
        });
      findings.push(JSON.parse(row.record) as Record<string, unknown>);
    }
    const summary = { corpus_commit_id: head.commit_id, runs, records, findings };
    const summaryDigest = digestOf(summary);
    const lines = [`# Evidence summary`, "", `Corpus commit \`${head.commit_id}\` · digest \`${summaryDigest}\``, ""];
    if (runs.length > 0) {
      lines.push(
        "## Runs",
        "",
        "| run | role | workload | adapter | status | exit | wall (ms) | evidence |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
      );
      for (const run of runs) {
        const wall = typeof run.wall_time_ns === "number" ? (run.wall_time_ns / 1e6).toFixed(1) : "–";
        const evidence =
          Object.entries(run.evidence_tables as Record<string, number>)
            .map(([table, count]) => `${table} ${count}`)
            .join(", ") || "none";
        lines.push(
          `| \`${String(run.run_id)}\` | ${String(run.role)} | ${String(run.workload_name ?? "import")} | ${String(run.adapter ?? "–")} | ${String(run.execution_status)} / ${String(run.validation_status)} | ${String(run.exit_code ?? "–")} | ${wall} | ${evidence} |`,
        );
      }
      lines.push("");
    }
    for (const record of records)
      lines.push(
        `- ${String(record.ref_type)} \`${String(record.ref_id)}\`: ${String(record.recipe ?? "")} (result ${String(record.result_digest ?? "")})`,
      );
    for (const finding of findings)
      lines.push(
        `- finding \`${String(finding.finding_id ?? "")}\`: ${String(finding.claim ?? finding.title ?? "")} — ${String(finding.assessment ?? "")}`,
      );
    return {
      schema_version: 1,
      corpus_commit_id: head.commit_id,
      summary_digest: summaryDigest,
      summary,
      markdown: `${lines.join("\n").trimEnd()}\n`,
    };
  }
}
