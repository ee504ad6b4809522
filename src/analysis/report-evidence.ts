/**
 * The evidence the report, flame graph and export files draw from, read from the pinned tables:
 * merged stacks, frames, bounded trace events, the slowest tests and the top allocators.
 */
import type { FrameRow, StackRow, StackUnit, TraceEventRow } from "../domain/evidence.ts";
import { type EvidenceQuery, sqlString, toNullableNumber, toNumber, traceEventFromRow } from "./evidence-query.ts";

export type SlowTestRow = { name: string; duration_ns: number; outcome: string | null; file: string | null };

export type AllocatorRow = { function: string; file: string | null; line: number | null; bytes: number; allocations: number | null };

/**
 * Profilers such as py-spy key frames by the line executing, so one function shows as several
 * siblings; pictures usually want one box per function (its first line), as hotspots rank them.
 */
export function regroup(
  frames: Map<string, FrameRow>,
  stacks: StackRow[],
  groupBy: "function" | "line",
): { frames: Map<string, FrameRow>; stacks: StackRow[] } {
  if (groupBy === "line") return { frames, stacks };
  const keyOf = new Map<string, string>();
  const grouped = new Map<string, FrameRow>();
  const functionKey = (key: string): string => {
    let mapped = keyOf.get(key);
    if (mapped !== undefined) return mapped;
    const frame = frames.get(key);
    mapped = frame ? `fn\u0000${frame.language}\u0000${frame.function}\u0000${frame.file ?? ""}` : key;
    keyOf.set(key, mapped);
    const known = grouped.get(mapped);
    if (!known)
      grouped.set(
        mapped,
        frame
          ? { ...frame, frame_key: mapped }
          : { frame_key: key, function: key, file: null, line: null, module: null, language: "unknown" },
      );
    else if (frame && frame.line !== null && (known.line === null || frame.line < known.line)) known.line = frame.line;
    return mapped;
  };
  const merged = new Map<string, StackRow>();
  for (const stack of stacks) {
    const keys = stack.frame_keys.map(functionKey);
    const path = `${stack.process ?? ""}\u0001${stack.thread ?? ""}\u0001${stack.unit}\u0001${keys.join("\u0001")}`;
    const existing = merged.get(path);
    if (existing) {
      existing.weight += stack.weight;
      existing.sample_count += stack.sample_count;
    } else merged.set(path, { ...stack, frame_keys: keys });
  }
  return { frames: grouped, stacks: [...merged.values()] };
}

/** Identical paths merged in DuckDB; per (process, thread) only when the caller keeps threads apart. */
export async function loadMergedStacks(view: EvidenceQuery, options: { unit: StackUnit | null; byThread: boolean }): Promise<StackRow[]> {
  const where = [`len(frame_keys) > 0`, `weight > 0`];
  if (options.unit) where.push(`unit = ${sqlString(options.unit)}`);
  const threadColumns = options.byThread ? "process, thread," : "";
  const rows = await view.rows<{
    frame_keys: string[];
    process: string | null;
    thread: string | null;
    unit: StackUnit;
    weight: unknown;
    sample_count: unknown;
  }>(
    `SELECT frame_keys, ${options.byThread ? "process, thread" : "NULL AS process, NULL AS thread"}, unit, sum(weight) AS weight, sum(sample_count) AS sample_count
     FROM stacks WHERE ${where.join(" AND ")}
     GROUP BY frame_keys, ${threadColumns} unit
     ORDER BY ${options.byThread ? "process NULLS FIRST, thread NULLS FIRST, " : ""}unit, weight DESC, array_to_string(frame_keys, ',')`,
  );
  return rows.map((row) => ({
    frame_keys: row.frame_keys,
    process: row.process,
    thread: row.thread,
    unit: row.unit,
    weight: toNumber(row.weight),
    sample_count: toNumber(row.sample_count),
  }));
}

export async function loadFrames(view: EvidenceQuery): Promise<Map<string, FrameRow>> {
  const rows = await view.rows<{
    frame_key: string;
    function: string | null;
    file: string | null;
    line: unknown;
    module: string | null;
    language: string | null;
  }>(
    "SELECT frame_key, any_value(function) AS function, any_value(file) AS file, any_value(line) AS line, any_value(module) AS module, any_value(language) AS language FROM frames GROUP BY frame_key",
  );
  const frames = new Map<string, FrameRow>();
  for (const row of rows) {
    frames.set(row.frame_key, {
      frame_key: row.frame_key,
      function: row.function ?? row.frame_key,
      file: row.file,
      line: toNullableNumber(row.line),
      module: row.module,
      language: row.language ?? "unknown",
    });
  }
  return frames;
}

/**
 * Trace events for the timeline, bounded in DuckDB: the busiest 64 lanes and each lane's longest
 * 20,000 events, which is all the timeline can draw anyway.
 */
export async function loadTraceEvents(view: EvidenceQuery, bounded = true): Promise<TraceEventRow[]> {
  const sql = bounded
    ? `WITH lanes AS (
         SELECT pid, tid FROM trace_events WHERE phase <> 'M' GROUP BY pid, tid
         ORDER BY sum(greatest(coalesce(dur_ns, 0), 1)) DESC, pid, tid LIMIT 64
       )
       SELECT e.* FROM trace_events e SEMI JOIN lanes l ON e.pid IS NOT DISTINCT FROM l.pid AND e.tid IS NOT DISTINCT FROM l.tid
       WHERE e.phase <> 'M'
       QUALIFY row_number() OVER (PARTITION BY e.pid, e.tid ORDER BY e.dur_ns DESC NULLS LAST, e.ts_ns) <= 20000
       ORDER BY e.ts_ns, e.event_id`
    : "SELECT * FROM trace_events ORDER BY ts_ns, event_id";
  const rows = await view.rows<Record<string, unknown>>(sql);
  return rows.map(traceEventFromRow);
}

/** Per-test total durations (pytest's `test.duration_ns` sums), averaged over pooled runs. */
export async function loadSlowestTests(view: EvidenceQuery, limit = 50): Promise<SlowTestRow[]> {
  const rows = await view.rows<{ name: string | null; outcome: string | null; duration: unknown }>(
    `SELECT coalesce(json_extract_string(dimensions, '$.nodeid'), name) AS name, any_value(json_extract_string(dimensions, '$.outcome')) AS outcome, avg(value) AS duration
     FROM measurements WHERE name = 'test.duration_ns' AND coalesce(aggregation, 'sum') = 'sum' AND NOT coalesce(is_warmup, false)
     GROUP BY 1 ORDER BY duration DESC, name LIMIT ${limit}`,
  );
  return rows.map((row) => {
    const name = row.name ?? "(unnamed test)";
    return { name, outcome: row.outcome, duration_ns: toNumber(row.duration), file: name.split("::")[0] ?? null };
  });
}

/** Functions whose own frames allocated the most bytes (self bytes of memory stacks). */
export async function loadTopAllocators(view: EvidenceQuery, limit = 50): Promise<AllocatorRow[]> {
  const rows = await view.rows<{ function: string | null; file: string | null; line: unknown; bytes: unknown; allocations: unknown }>(
    `WITH leaves AS (
       SELECT frame_keys[len(frame_keys)] AS leaf, sum(weight) AS bytes, sum(sample_count) AS allocations
       FROM stacks WHERE unit = 'bytes' AND len(frame_keys) > 0 GROUP BY leaf
     ),
     identity AS (SELECT frame_key, any_value(function) AS function, any_value(file) AS file, any_value(line) AS line FROM frames GROUP BY frame_key)
     SELECT coalesce(i.function, l.leaf) AS function, i.file, i.line, l.bytes, l.allocations
     FROM leaves l LEFT JOIN identity i ON i.frame_key = l.leaf
     ORDER BY l.bytes DESC, function LIMIT ${limit}`,
  );
  return rows.map((row) => ({
    function: row.function ?? "<unknown>",
    file: row.file,
    line: toNullableNumber(row.line),
    bytes: toNumber(row.bytes),
    allocations: toNullableNumber(row.allocations),
  }));
}
