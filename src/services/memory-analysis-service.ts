import { queryHotspots, stackUnits, type Hotspot } from "../analysis/hotspots.ts";
import { memoryMeasurements, type MemoryMeasurement } from "../analysis/recipes/memory.ts";
import type { WorkspaceHandle } from "../store/workspace-handle.ts";
import { available, type EvidenceStatus, maximumRows, missingEvidence, offsetPage, queryCursors, scopeRun } from "./evidence-needs.ts";
import { limitWithin, pinEvidenceScope, scopeLimitations, withEvidence } from "./evidence-scope.ts";

export type MemoryAnalysisResult = {
  schema_version: 1;
  run_or_artifact: string;
  corpus_commit_id: string;
  peak_bytes: number | null;
  retained_bytes: number | null;
  total_allocated_bytes: number | null;
  allocation_count: number | null;
  process_peak_rss_bytes: number | null;
  /** The memory measurements behind the figures above, at most `measurementLimit`. */
  measurements: MemoryMeasurement[];
  measurements_truncated: boolean;
  /**
   * Which ranking the answer leads with and its next step drills into: retained_at_exit when what was
   * still held at exit is a leak (see `leakOf`), else peak.
   */
  leading_ranking: "peak" | "retained_at_exit";
  /** One page of the functions holding the most bytes; total, returned, truncated and next_cursor describe this list. */
  top_allocations: Hotspot[];
  /** The functions whose allocations were still held when tracking ended (memray unit retained_bytes: the leaks), largest first; the first `limit`, on every page. */
  retained_allocations: Hotspot[];
  retained_truncated: boolean;
  total: number;
  returned: number;
  truncated: boolean;
  next_cursor: string | null;
  /** What the extraction of the memory evidence recorded. */
  limitations: string[];
  evidence: EvidenceStatus;
};

/** Memory measurements are a handful of names per run; more than this is cut and said so. */
const measurementLimit = 50;

/**
 * A run leaks, for the answer's purpose, when it still held at exit at least a quarter of its peak and
 * at least 1 MiB: a small script's own leftovers at exit (compiled modules, arenas) are tens of KiB, far
 * below both, so a run that frees what it allocates keeps leading with its peak.
 */
const leakShareOfPeak = 0.25;
const leakMinimumBytes = 1024 * 1024;

function leakOf(retainedBytes: number | null, peakBytes: number | null): boolean {
  if (retainedBytes === null || retainedBytes < leakMinimumBytes) return false;
  return peakBytes === null || retainedBytes >= peakBytes * leakShareOfPeak;
}

/** analyze_memory: memray peaks and allocations, and process RSS, of one run or artifact. */
export class MemoryAnalysisService {
  constructor(private readonly workspace: WorkspaceHandle) {}

  async analyze(request: { run_or_artifact: string; limit: number; cursor?: string | null }): Promise<MemoryAnalysisResult> {
    const limit = limitWithin(request.limit, maximumRows(this.workspace));
    const scope = pinEvidenceScope(this.workspace, request.run_or_artifact);
    const cursors = queryCursors(this.workspace, "analyze_memory", { run_or_artifact: request.run_or_artifact });
    const offset = (cursors.decode(request.cursor ?? null, scope.snapshot) as number | null) ?? 0;
    const result = await withEvidence(this.workspace, scope, async (view) => {
      const measurements = await memoryMeasurements(view);
      const units = await stackUnits(view);
      const ranking = async (unit: "bytes" | "retained_bytes", from: number) =>
        units.some((entry) => entry.unit === unit)
          ? await queryHotspots(
              view,
              { groupBy: "function", unit, thread: null, perThread: false, orderBy: "self" },
              { offset: from, limit },
            )
          : null;
      return { measurements, page: await ranking("bytes", offset), retained: await ranking("retained_bytes", 0) };
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
      throw missingEvidence(this.workspace, scope, {
        what: "memory evidence (memray allocations or peak RSS)",
        kinds: ["memory_profile"],
        extractTool: "extract_memray",
        adapter: "memray",
        importKind: "memory_profile",
      });
    }
    const run = scopeRun(this.workspace, scope);
    const hotspots = result.page?.hotspots ?? [];
    const retained = result.retained?.hotspots ?? [];
    const total = result.page?.total ?? 0;
    const peakBytes = pick("memory.peak_bytes");
    const retainedBytes = pick("memory.leaked_bytes");
    const leading = leakOf(retainedBytes, peakBytes) && retained[0] ? "retained_at_exit" : "peak";
    const drill = leading === "retained_at_exit" ? { frame: retained[0], unit: "retained_bytes" } : { frame: hotspots[0], unit: "bytes" };
    return {
      schema_version: 1,
      run_or_artifact: request.run_or_artifact,
      corpus_commit_id: scope.corpusCommitId,
      peak_bytes: peakBytes,
      retained_bytes: retainedBytes,
      total_allocated_bytes: pick("memory.total_allocated_bytes"),
      allocation_count: pick("memory.allocation_count"),
      process_peak_rss_bytes: rss.length > 0 ? Math.max(...rss) : null,
      measurements: result.measurements.slice(0, measurementLimit),
      measurements_truncated: result.measurements.length > measurementLimit,
      leading_ranking: leading,
      top_allocations: hotspots,
      retained_allocations: retained,
      retained_truncated: (result.retained?.total ?? 0) > retained.length,
      ...offsetPage(offset, hotspots.length, total, (position) => cursors.encode(position, scope.snapshot)),
      limitations: scopeLimitations(scope),
      evidence: allocatorEvidence
        ? available(
            leading === "retained_at_exit"
              ? `A leak: ${retainedBytes} bytes were still held at exit (peak ${peakBytes ?? "unknown"}); retained_allocations ranks who held them.`
              : "From memray allocation evidence (peak, retained, stacks alive at the high-water mark, stacks still allocated at exit).",
            drill.frame ? "get_stack_examples" : null,
            drill.frame ? { run_or_artifact: request.run_or_artifact, frame_id: drill.frame.frame_id, unit: drill.unit } : null,
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
}
