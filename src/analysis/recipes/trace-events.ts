/** Trace categories and the PyTorch view of a torch.profiler trace: operators, allocations, CPU versus accelerator time. Pure SQL over EvidenceQuery; services decide what an absence means. */
import { acceleratorWorkCategories } from "../../domain/trace-categories.ts";
import { type EvidenceQuery, sqlString, toNullableNumber, toNumber } from "../evidence-query.ts";

export type TraceCategoryCount = { category: string | null; events: number };

export async function traceCategories(evidence: EvidenceQuery): Promise<TraceCategoryCount[]> {
  const rows = await evidence.fixedRowsFrom<Record<string, unknown>>(
    "SELECT category, count(*) AS events FROM trace_events GROUP BY category",
    (counts) => `SELECT category, events FROM ${counts} ORDER BY events DESC`,
  );
  return rows.map((row) => ({ category: (row.category as string | null) ?? null, events: toNumber(row.events) }));
}

export { torchTraceCategories as torchCategories } from "../../domain/trace-categories.ts";

export type TorchOperator = {
  rank: number;
  name: string;
  /** Outermost calls: a call nested (at any depth) inside a slice of the same name is part of that call, not another. */
  calls: number;
  /** Calls nested inside a slice of the same name (counted in their outermost call's time). */
  nested_calls: number;
  self_ns: number;
  /** Summed over outermost calls, so recursion and wrappers of the same name are not counted twice. */
  total_ns: number;
  self_share: number;
  shapes: string[];
};

/**
 * Per cpu_op name: self time (duration minus direct children, over every call) and calls and total
 * time over outermost calls only — a call is nested when some ancestor slice has its name (the
 * climb stops at the first such ancestor, so it costs the depth of the nesting, at most). The
 * per-name table is computed once per pinned trace (seconds on millions of events) and each page,
 * in either order, is read from it.
 */
export async function torchOperators(
  evidence: EvidenceQuery,
  options: { orderBy: "self" | "total"; offset: number; limit: number },
): Promise<{ operators: TorchOperator[]; total: number; selfTotal: number }> {
  const order = options.orderBy === "self" ? "self_ns DESC, total_ns DESC" : "total_ns DESC, self_ns DESC";
  const rows = await evidence.rowsFrom<Record<string, unknown>>(
    `WITH RECURSIVE child AS (
       SELECT run_id, artifact_id, parent_id, sum(coalesce(dur_ns, 0)) AS child_ns FROM trace_events WHERE parent_id IS NOT NULL GROUP BY ALL
     ),
     climb(run_id, artifact_id, event_id, name, ancestor, nested) AS (
       SELECT run_id, artifact_id, event_id, name, parent_id, false FROM trace_events WHERE category = 'cpu_op' AND parent_id IS NOT NULL
       UNION ALL
       SELECT c.run_id, c.artifact_id, c.event_id, c.name, p.parent_id, p.name = c.name
       FROM climb c JOIN trace_events p ON p.run_id = c.run_id AND p.artifact_id = c.artifact_id AND p.event_id = c.ancestor
       WHERE NOT c.nested
     ),
     nested AS (SELECT DISTINCT run_id, artifact_id, event_id FROM climb WHERE nested),
     ops AS (
       SELECT e.name, coalesce(e.dur_ns, 0) AS dur_ns, greatest(coalesce(e.dur_ns, 0) - coalesce(c.child_ns, 0), 0) AS self_ns,
              n.event_id IS NOT NULL AS is_nested, TRY(json_extract_string(e.args, '$."Input Dims"')) AS dims
       FROM trace_events e
       LEFT JOIN child c ON c.run_id = e.run_id AND c.artifact_id = e.artifact_id AND c.parent_id = e.event_id
       LEFT JOIN nested n ON n.run_id = e.run_id AND n.artifact_id = e.artifact_id AND n.event_id = e.event_id
       WHERE e.category = 'cpu_op'
     ),
     grouped AS (
       SELECT name, count(*) FILTER (WHERE NOT is_nested) AS calls, count(*) FILTER (WHERE is_nested) AS nested_calls,
              sum(self_ns) AS self_ns, coalesce(sum(dur_ns) FILTER (WHERE NOT is_nested), 0) AS total_ns,
              list(DISTINCT dims ORDER BY dims) FILTER (WHERE dims IS NOT NULL AND dims <> '[]') AS shapes
       FROM ops GROUP BY name
     )
     SELECT *, count(*) OVER () AS row_total, sum(self_ns) OVER () AS self_total FROM grouped`,
    (operators) => `SELECT * FROM ${operators} ORDER BY ${order}, name LIMIT $1 OFFSET $2`,
    [options.limit, options.offset],
  );
  const selfTotal = rows.length > 0 ? toNumber(rows[0]!.self_total) : 0;
  return {
    total: rows.length > 0 ? toNumber(rows[0]!.row_total) : 0,
    selfTotal,
    operators: rows.map((row, index) => ({
      rank: options.offset + index + 1,
      name: String(row.name),
      calls: toNumber(row.calls),
      nested_calls: toNumber(row.nested_calls),
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
  const rows = await evidence.fixedRowsFrom<Record<string, unknown>>(
    `WITH mem AS (
       SELECT TRY_CAST(json_extract_string(args, '$.Bytes') AS DOUBLE) AS bytes,
              TRY_CAST(json_extract_string(args, '$."Total Allocated"') AS DOUBLE) AS total_allocated,
              coalesce(json_extract_string(args, '$."Device Type"'), '?') || ':' || coalesce(json_extract_string(args, '$."Device Id"'), '?') AS device
       FROM trace_events WHERE name = '[memory]'
     )
     SELECT device, count(*) AS events, count(*) FILTER (WHERE bytes > 0) AS allocations, coalesce(sum(bytes) FILTER (WHERE bytes > 0), 0) AS allocated,
            coalesce(-sum(bytes) FILTER (WHERE bytes < 0), 0) AS freed, max(total_allocated) AS peak
     FROM mem GROUP BY device`,
    (devices) => `SELECT * FROM ${devices} ORDER BY allocated DESC`,
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

/**
 * CPU and accelerator time side by side, each on its own denominator: operators' self_share divides
 * by cpu_operator_self_ns, the accelerator categories' shares by accelerator_ns. The two are not
 * added (they run on different clocks at the same time, so a sum has no meaning).
 */
export type TimeSplit = {
  cpu_operator_self_ns: number;
  accelerator_ns: number;
  kernel_count: number;
  accelerator_by_category: { category: string; duration_ns: number; events: number; share: number }[];
};

export async function torchTimeSplit(evidence: EvidenceQuery, cpuSelfNs: number): Promise<TimeSplit> {
  const rows = await evidence.fixedRowsFrom<Record<string, unknown>>(
    `SELECT category, coalesce(sum(dur_ns), 0) AS duration_ns, count(*) AS events FROM trace_events
     WHERE category IN (${acceleratorWorkCategories.map(sqlString).join(", ")}) GROUP BY category`,
    (categories) => `SELECT * FROM ${categories} ORDER BY duration_ns DESC, category`,
  );
  const accelerator = rows.reduce((sum, row) => sum + toNumber(row.duration_ns), 0);
  return {
    cpu_operator_self_ns: cpuSelfNs,
    accelerator_ns: accelerator,
    kernel_count: toNumber(rows.find((row) => row.category === "kernel")?.events),
    accelerator_by_category: rows.map((row) => ({
      category: String(row.category),
      duration_ns: toNumber(row.duration_ns),
      events: toNumber(row.events),
      share: accelerator > 0 ? toNumber(row.duration_ns) / accelerator : 0,
    })),
  };
}
