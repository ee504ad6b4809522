/**
 * Task-shaped recipes over the pinned evidence tables: memory, execution (coverage), PyTorch
 * operators, accelerator launches, trace windows and measurements. Pure SQL over EvidenceQuery;
 * the services decide what an absence means and which tool to call next.
 */
import type { TraceEventRow } from "../domain/evidence.ts";
import { type EvidenceQuery, sqlString, toNullableNumber, toNumber, traceEventFromRow } from "./evidence-query.ts";

/** Keyset comparison `(columns) > (values)` with nulls folded so the order is total. */
export function keysetAfter(columns: string[], values: (string | number)[]): string {
  return `(${columns.join(", ")}) > (${values.map((value) => (typeof value === "number" ? String(value) : sqlString(value))).join(", ")})`;
}

// ---------------------------------------------------------------- memory

export type MemoryMeasurement = {
  name: string;
  value: number;
  unit: string;
  aggregation: string | null;
  run_id: string;
  artifact_id: string;
};

export async function memoryMeasurements(evidence: EvidenceQuery): Promise<MemoryMeasurement[]> {
  const rows = await evidence.rows<Record<string, unknown>>(
    `SELECT name, value, unit, aggregation, run_id, artifact_id FROM measurements
     WHERE NOT is_warmup AND (name LIKE 'memory.%' OR name LIKE '%rss_bytes' OR name LIKE '%max_rss')
     ORDER BY name, run_id, artifact_id, value DESC`,
  );
  return rows.map((row) => ({
    name: String(row.name),
    value: toNumber(row.value),
    unit: String(row.unit),
    aggregation: (row.aggregation as string | null) ?? null,
    run_id: String(row.run_id),
    artifact_id: String(row.artifact_id),
  }));
}

// ---------------------------------------------------------------- execution (coverage)

export type FileCoverage = { file: string; lines: number[]; arcs: string[]; contexts: string[] };

export async function coverageByFile(evidence: EvidenceQuery): Promise<FileCoverage[]> {
  const rows = await evidence.rows<Record<string, unknown>>(
    `SELECT file,
            list(DISTINCT TRY_CAST(lines AS BIGINT) ORDER BY TRY_CAST(lines AS BIGINT)) FILTER (WHERE kind = 'line_hit') AS lines,
            list(DISTINCT lines ORDER BY lines) FILTER (WHERE kind = 'branch_arc') AS arcs,
            list(DISTINCT context ORDER BY context) FILTER (WHERE context IS NOT NULL AND context <> '') AS contexts
     FROM observations WHERE kind IN ('line_hit', 'branch_arc') AND file IS NOT NULL
     GROUP BY file ORDER BY file`,
  );
  return rows.map((row) => ({
    file: String(row.file),
    lines: ((row.lines as unknown[] | null) ?? []).map(toNumber),
    arcs: ((row.arcs as unknown[] | null) ?? []).map(String),
    contexts: ((row.contexts as unknown[] | null) ?? []).map(String),
  }));
}

// ---------------------------------------------------------------- trace events

export type TraceCategoryCount = { category: string | null; events: number };

export async function traceCategories(evidence: EvidenceQuery): Promise<TraceCategoryCount[]> {
  const rows = await evidence.rows<Record<string, unknown>>(
    "SELECT category, count(*) AS events FROM trace_events GROUP BY category ORDER BY events DESC",
  );
  return rows.map((row) => ({ category: (row.category as string | null) ?? null, events: toNumber(row.events) }));
}

export const torchCategories = [
  "cpu_op",
  "python_function",
  "user_annotation",
  "cpu_instant_event",
  "kernel",
  "cuda_runtime",
  "gpu_memcpy",
  "gpu_memset",
  "ac2g",
  "cuda_driver",
];

export type TorchOperator = {
  rank: number;
  name: string;
  calls: number;
  self_ns: number;
  total_ns: number;
  self_share: number;
  shapes: string[];
};

/** Self time = duration minus the durations of direct children in the same run and artifact. */
export async function torchOperators(
  evidence: EvidenceQuery,
  options: { orderBy: "self" | "total"; offset: number; limit: number },
): Promise<{ operators: TorchOperator[]; total: number; selfTotal: number }> {
  const order = options.orderBy === "self" ? "self_ns DESC, total_ns DESC" : "total_ns DESC, self_ns DESC";
  const rows = await evidence.rows<Record<string, unknown>>(
    `WITH child AS (
       SELECT run_id, artifact_id, parent_id, sum(coalesce(dur_ns, 0)) AS child_ns FROM trace_events WHERE parent_id IS NOT NULL GROUP BY ALL
     ),
     ops AS (
       SELECT e.name, coalesce(e.dur_ns, 0) AS dur_ns, greatest(coalesce(e.dur_ns, 0) - coalesce(c.child_ns, 0), 0) AS self_ns,
              TRY(json_extract_string(e.args, '$."Input Dims"')) AS dims
       FROM trace_events e LEFT JOIN child c ON c.run_id = e.run_id AND c.artifact_id = e.artifact_id AND c.parent_id = e.event_id
       WHERE e.category = 'cpu_op'
     ),
     grouped AS (
       SELECT name, count(*) AS calls, sum(self_ns) AS self_ns, sum(dur_ns) AS total_ns,
              list(DISTINCT dims ORDER BY dims) FILTER (WHERE dims IS NOT NULL AND dims <> '[]') AS shapes
       FROM ops GROUP BY name
     )
     SELECT *, count(*) OVER () AS row_total, sum(self_ns) OVER () AS self_total FROM grouped
     ORDER BY ${order}, name LIMIT ${options.limit} OFFSET ${options.offset}`,
  );
  const selfTotal = rows.length > 0 ? toNumber(rows[0]!.self_total) : 0;
  return {
    total: rows.length > 0 ? toNumber(rows[0]!.row_total) : 0,
    selfTotal,
    operators: rows.map((row, index) => ({
      rank: options.offset + index + 1,
      name: String(row.name),
      calls: toNumber(row.calls),
      self_ns: toNumber(row.self_ns),
      total_ns: toNumber(row.total_ns),
      self_share: selfTotal > 0 ? toNumber(row.self_ns) / selfTotal : 0,
      shapes: ((row.shapes as unknown[] | null) ?? []).slice(0, 8).map(String),
    })),
  };
}

export type TorchAllocations = {
  memory_events: number;
  allocation_count: number;
  allocated_bytes: number;
  freed_bytes: number;
  peak_total_allocated_bytes: number | null;
  by_device: { device: string; allocated_bytes: number; allocation_count: number }[];
};

export async function torchAllocations(evidence: EvidenceQuery): Promise<TorchAllocations> {
  const rows = await evidence.rows<Record<string, unknown>>(
    `WITH mem AS (
       SELECT TRY_CAST(json_extract_string(args, '$.Bytes') AS DOUBLE) AS bytes,
              TRY_CAST(json_extract_string(args, '$."Total Allocated"') AS DOUBLE) AS total_allocated,
              coalesce(json_extract_string(args, '$."Device Type"'), '?') || ':' || coalesce(json_extract_string(args, '$."Device Id"'), '?') AS device
       FROM trace_events WHERE name = '[memory]'
     )
     SELECT device, count(*) AS events, count(*) FILTER (WHERE bytes > 0) AS allocations, coalesce(sum(bytes) FILTER (WHERE bytes > 0), 0) AS allocated,
            coalesce(-sum(bytes) FILTER (WHERE bytes < 0), 0) AS freed, max(total_allocated) AS peak
     FROM mem GROUP BY device ORDER BY allocated DESC`,
  );
  const peaks = rows.map((row) => toNullableNumber(row.peak)).filter((value): value is number => value !== null);
  return {
    memory_events: rows.reduce((sum, row) => sum + toNumber(row.events), 0),
    allocation_count: rows.reduce((sum, row) => sum + toNumber(row.allocations), 0),
    allocated_bytes: rows.reduce((sum, row) => sum + toNumber(row.allocated), 0),
    freed_bytes: rows.reduce((sum, row) => sum + toNumber(row.freed), 0),
    peak_total_allocated_bytes: peaks.length > 0 ? Math.max(...peaks) : null,
    by_device: rows.map((row) => ({
      device: String(row.device),
      allocated_bytes: toNumber(row.allocated),
      allocation_count: toNumber(row.allocations),
    })),
  };
}

export type TimeSplit = { cpu_operator_self_ns: number; accelerator_ns: number; accelerator_share: number; kernel_count: number };

export async function torchTimeSplit(evidence: EvidenceQuery, cpuSelfNs: number): Promise<TimeSplit> {
  const rows = await evidence.rows<Record<string, unknown>>(
    "SELECT coalesce(sum(dur_ns), 0) AS accelerator_ns, count(*) FILTER (WHERE category = 'kernel') AS kernels FROM trace_events WHERE category IN ('kernel', 'gpu_memcpy', 'gpu_memset', 'cuda_memcpy', 'cuda_memset')",
  );
  const accelerator = toNumber(rows[0]?.accelerator_ns);
  return {
    cpu_operator_self_ns: cpuSelfNs,
    accelerator_ns: accelerator,
    accelerator_share: cpuSelfNs + accelerator > 0 ? accelerator / (cpuSelfNs + accelerator) : 0,
    kernel_count: toNumber(rows[0]?.kernels),
  };
}

// ---------------------------------------------------------------- accelerator launches

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

// ---------------------------------------------------------------- trace window

export type TraceWindowEvent = TraceEventRow & { run_id: string; artifact_id: string };

export type TraceWindowKey = { ts_ns: number; event_id: number; run_id: string };

/** Events overlapping [start, end), ordered by (ts_ns, event_id, run_id); keyset after `after`. */
export async function traceWindow(
  evidence: EvidenceQuery,
  window: { startNs: number; endNs: number; after: TraceWindowKey | null; limit: number },
): Promise<{ events: TraceWindowEvent[]; total: number }> {
  const overlap = `ts_ns < ${Math.trunc(window.endNs)} AND ts_ns + coalesce(dur_ns, 0) >= ${Math.trunc(window.startNs)}`;
  const totalRows = await evidence.rows<{ total: unknown }>(`SELECT count(*) AS total FROM trace_events WHERE ${overlap}`);
  const after = window.after
    ? ` AND ${keysetAfter(["ts_ns", "event_id", "run_id"], [window.after.ts_ns, window.after.event_id, window.after.run_id])}`
    : "";
  const rows = await evidence.rows<Record<string, unknown>>(
    `SELECT * FROM trace_events WHERE ${overlap}${after} ORDER BY ts_ns, event_id, run_id LIMIT ${window.limit}`,
  );
  return {
    total: toNumber(totalRows[0]?.total),
    events: rows.map((row) => ({ run_id: String(row.run_id), artifact_id: String(row.artifact_id), ...traceEventFromRow(row) })),
  };
}

// ---------------------------------------------------------------- measurements

export type MeasurementRecord = {
  run_id: string;
  artifact_id: string;
  name: string;
  value: number;
  unit: string;
  aggregation: string | null;
  is_warmup: boolean;
  worker: string | null;
  run_index: number | null;
  value_index: number | null;
  phase: string | null;
  dimensions: Record<string, unknown> | null;
};

const measurementKey = [
  "run_id",
  "artifact_id",
  "name",
  "coalesce(run_index, -1)",
  "coalesce(value_index, -1)",
  "is_warmup::INTEGER",
  "coalesce(phase, '')",
  "coalesce(worker, '')",
  "coalesce(dimensions, '')",
  "value",
];
export type MeasurementKey = (string | number)[];

export async function queryMeasurementRows(
  evidence: EvidenceQuery,
  query: { namePrefix: string | null; includeWarmups: boolean; after: MeasurementKey | null; limit: number },
): Promise<{ rows: MeasurementRecord[]; total: number; lastKey: MeasurementKey | null }> {
  const clauses = ["TRUE"];
  if (query.namePrefix) clauses.push(`starts_with(name, ${sqlString(query.namePrefix)})`);
  if (!query.includeWarmups) clauses.push("NOT is_warmup");
  const where = clauses.join(" AND ");
  const totalRows = await evidence.rows<{ total: unknown }>(`SELECT count(*) AS total FROM measurements WHERE ${where}`);
  const after = query.after ? ` AND ${keysetAfter(measurementKey, query.after)}` : "";
  const rows = await evidence.rows<Record<string, unknown>>(
    `SELECT *, ${measurementKey.map((column, index) => `${column} AS k${index}`).join(", ")} FROM measurements WHERE ${where}${after}
     ORDER BY ${measurementKey.join(", ")} LIMIT ${query.limit}`,
  );
  const last = rows[rows.length - 1];
  return {
    total: toNumber(totalRows[0]?.total),
    lastKey: last
      ? measurementKey.map((_, index) => {
          const value = last[`k${index}`];
          return typeof value === "string" ? value : toNumber(value);
        })
      : null,
    rows: rows.map((row) => {
      let dimensions: Record<string, unknown> | null = null;
      if (typeof row.dimensions === "string") {
        try {
          dimensions = JSON.parse(row.dimensions) as Record<string, unknown>;
        } catch {
          dimensions = { raw: row.dimensions };
        }
      }
      return {
        run_id: String(row.run_id),
        artifact_id: String(row.artifact_id),
        name: String(row.name),
        value: toNumber(row.value),
        unit: String(row.unit),
        aggregation: (row.aggregation as string | null) ?? null,
        is_warmup: Boolean(row.is_warmup),
        worker: (row.worker as string | null) ?? null,
        run_index: toNullableNumber(row.run_index),
        value_index: toNullableNumber(row.value_index),
        phase: (row.phase as string | null) ?? null,
        dimensions,
      };
    }),
  };
}

// ---------------------------------------------------------------- failures

export type TestFailure = { run_id: string; nodeid: string; outcome: string; message: string | null };

export async function failedTests(evidence: EvidenceQuery): Promise<TestFailure[]> {
  const rows = await evidence.rows<Record<string, unknown>>(
    `SELECT run_id, name, json_extract_string(value, '$.outcome') AS outcome, json_extract_string(value, '$.message') AS message
     FROM observations WHERE kind = 'test_outcome' AND json_extract_string(value, '$.outcome') IN ('failed', 'error', 'crashed')
     ORDER BY run_id, name`,
  );
  const crashed = await evidence.rows<Record<string, unknown>>(
    `SELECT run_id, context, json_extract_string(value, '$.error') AS error, json_extract(value, '$.nodeids') AS nodeids FROM observations WHERE kind = 'annotation' AND name = 'pytest.worker_crashed'`,
  );
  const failures: TestFailure[] = rows.map((row) => ({
    run_id: String(row.run_id),
    nodeid: String(row.name),
    outcome: String(row.outcome),
    message: (row.message as string | null) ?? null,
  }));
  for (const row of crashed) {
    let nodeids: string[] = [];
    try {
      nodeids = JSON.parse(String(row.nodeids ?? "[]")) as string[];
    } catch {
      nodeids = [];
    }
    for (const nodeid of nodeids.length > 0 ? nodeids : [`<worker ${String(row.context)}>`]) {
      if (failures.some((failure) => failure.run_id === row.run_id && failure.nodeid === nodeid)) continue;
      failures.push({
        run_id: String(row.run_id),
        nodeid,
        outcome: "crashed",
        message: `worker ${String(row.context)} crashed${row.error ? `: ${String(row.error)}` : ""}`,
      });
    }
  }
  return failures;
}

/** A message's stable shape: numbers, addresses, quoted text and paths normalized away. */
export function errorSignature(message: string | null): string {
  if (!message) return "<no message>";
  const lines = message.split("\n").map((text) => text.trim());
  // pytest marks the failing statement's explanation with "E"; else the first line naming an error.
  const line =
    lines.find((text) => /^E\s+\S/.test(text))?.replace(/^E\s+/, "") ??
    lines.find((text) => /\b(\w*Error|\w*Exception|assert|crashed|killed|timed? ?out)\b/i.test(text)) ??
    lines[0] ??
    "";
  return line
    .replace(/0x[0-9a-f]+/gi, "0x…")
    .replace(/(["'])(?:(?!\1).){0,200}\1/g, "$1…$1")
    .replace(/\b\d+(\.\d+)?\b/g, "N")
    .replace(/\/[^\s:]+/g, "<path>")
    .slice(0, 200);
}
