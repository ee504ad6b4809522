/** Accelerator launches: runtime and graph launches, kernels and copies, per-stream idle gaps, host→device correlation. Pure SQL over EvidenceQuery; services decide what an absence means. */
import { type EvidenceQuery, sqlString, toNumber } from "../evidence-query.ts";

export type LaunchRegion = {
  kind: "runtime_launch" | "graph_launch" | "kernel" | "memory_copy";
  name: string;
  count: number;
  total_ns: number;
};
export type StreamIdle = {
  device: string | null;
  stream: string | null;
  kernels: number;
  busy_ns: number;
  span_ns: number;
  idle_ns: number;
  max_gap_ns: number;
  gaps: number;
};
export type AcceleratorSummary = {
  runtime_launches: number;
  graph_launches: number;
  kernels: number;
  memory_copies: number;
  correlated_kernels: number;
  correlation_coverage: number | null;
  streams: StreamIdle[];
};

const launchPredicate = `(category IN ('cuda_runtime', 'cuda_driver') AND (lower(name) LIKE '%launchkernel%' OR lower(name) LIKE '%launchcooperativekernel%' OR lower(name) LIKE '%graphlaunch%' OR lower(name) LIKE 'cudalaunch%' OR lower(name) LIKE 'culaunch%'))`;

function phaseFilter(phase: string | null): string {
  if (phase === null) return "TRUE";
  const names = [sqlString(phase), sqlString(`flameox.phase:${phase}`)].join(", ");
  return `EXISTS (SELECT 1 FROM trace_events w WHERE w.name IN (${names}) AND w.run_id = t.run_id AND w.artifact_id = t.artifact_id AND t.ts_ns >= w.ts_ns AND t.ts_ns <= w.ts_ns + coalesce(w.dur_ns, 0))`;
}

export async function launchRegions(
  evidence: EvidenceQuery,
  options: { phase: string | null; offset: number; limit: number },
): Promise<{ regions: LaunchRegion[]; total: number }> {
  const rows = await evidence.rows<Record<string, unknown>>(
    `WITH t AS (SELECT * FROM trace_events),
     classified AS (
       SELECT CASE
                WHEN category = 'cuda_graph' OR (${launchPredicate} AND lower(name) LIKE '%graphlaunch%') THEN 'graph_launch'
                WHEN ${launchPredicate} THEN 'runtime_launch'
                WHEN category = 'kernel' THEN 'kernel'
                WHEN category IN ('gpu_memcpy', 'gpu_memset', 'cuda_memcpy', 'cuda_memset') THEN 'memory_copy'
              END AS kind, name, coalesce(dur_ns, 0) AS dur_ns
       FROM t WHERE ${phaseFilter(options.phase)}
     )
     SELECT kind, name, count(*) AS count, sum(dur_ns) AS total_ns, count(*) OVER () AS row_total
     FROM classified WHERE kind IS NOT NULL GROUP BY kind, name
     ORDER BY total_ns DESC, count DESC, kind, name LIMIT ${options.limit} OFFSET ${options.offset}`,
  );
  return {
    total: rows.length > 0 ? toNumber(rows[0]!.row_total) : 0,
    regions: rows.map((row) => ({
      kind: row.kind as LaunchRegion["kind"],
      name: String(row.name),
      count: toNumber(row.count),
      total_ns: toNumber(row.total_ns),
    })),
  };
}

export async function acceleratorSummary(evidence: EvidenceQuery, phase: string | null): Promise<AcceleratorSummary> {
  const counts = await evidence.rows<Record<string, unknown>>(
    `WITH t AS (SELECT * FROM trace_events), f AS (SELECT * FROM t WHERE ${phaseFilter(phase)}),
     launches AS (SELECT DISTINCT run_id, artifact_id, correlation FROM trace_events WHERE category IN ('cuda_runtime', 'cuda_driver') AND correlation IS NOT NULL)
     SELECT
       count(*) FILTER (WHERE ${launchPredicate} AND lower(name) NOT LIKE '%graphlaunch%') AS runtime_launches,
       count(*) FILTER (WHERE category = 'cuda_graph' OR (${launchPredicate} AND lower(name) LIKE '%graphlaunch%')) AS graph_launches,
       count(*) FILTER (WHERE category = 'kernel') AS kernels,
       count(*) FILTER (WHERE category IN ('gpu_memcpy', 'gpu_memset', 'cuda_memcpy', 'cuda_memset')) AS memory_copies,
       count(*) FILTER (WHERE category = 'kernel' AND EXISTS (SELECT 1 FROM launches l WHERE l.run_id = f.run_id AND l.artifact_id = f.artifact_id AND l.correlation = f.correlation)) AS correlated
     FROM f`,
  );
  const streams = await evidence.rows<Record<string, unknown>>(
    `WITH t AS (SELECT * FROM trace_events),
     k AS (
       SELECT run_id, artifact_id, device, stream, ts_ns, coalesce(dur_ns, 0) AS dur_ns,
              ts_ns - max(ts_ns + coalesce(dur_ns, 0)) OVER (PARTITION BY run_id, artifact_id, device, stream ORDER BY ts_ns, event_id ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS gap
       FROM t WHERE category IN ('kernel', 'gpu_memcpy', 'gpu_memset', 'cuda_memcpy', 'cuda_memset') AND ${phaseFilter(phase)}
     )
     SELECT device, stream, count(*) AS kernels, sum(dur_ns) AS busy_ns, max(ts_ns + dur_ns) - min(ts_ns) AS span_ns,
            coalesce(sum(gap) FILTER (WHERE gap > 0), 0) AS idle_ns, coalesce(max(gap) FILTER (WHERE gap > 0), 0) AS max_gap_ns, count(*) FILTER (WHERE gap > 0) AS gaps
     FROM k GROUP BY device, stream ORDER BY idle_ns DESC, device, stream LIMIT 64`,
  );
  const row = counts[0] ?? {};
  const kernels = toNumber(row.kernels);
  return {
    runtime_launches: toNumber(row.runtime_launches),
    graph_launches: toNumber(row.graph_launches),
    kernels,
    memory_copies: toNumber(row.memory_copies),
    correlated_kernels: toNumber(row.correlated),
    correlation_coverage: kernels > 0 ? toNumber(row.correlated) / kernels : null,
    streams: streams.map((stream) => ({
      device: (stream.device as string | null) ?? null,
      stream: (stream.stream as string | null) ?? null,
      kernels: toNumber(stream.kernels),
      busy_ns: toNumber(stream.busy_ns),
      span_ns: toNumber(stream.span_ns),
      idle_ns: toNumber(stream.idle_ns),
      max_gap_ns: toNumber(stream.max_gap_ns),
      gaps: toNumber(stream.gaps),
    })),
  };
}
