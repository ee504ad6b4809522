/** The trace events of one artifact that overlap a time window, keyset-paged. Pure SQL over EvidenceQuery; services decide what an absence means. */
import type { TraceEventRow } from "../../domain/evidence.ts";
import { type EvidenceQuery, sqlString, toNumber, traceEventFromRow } from "../evidence-query.ts";
import { keysetAfter } from "./keyset.ts";

export type TraceWindowEvent = TraceEventRow & { run_id: string; artifact_id: string };

export type TraceWindowKey = { ts_ns: number; event_id: number; run_id: string };

/**
 * The predicate of events overlapping [start, end). An event that ends in the window started at most
 * the trace's longest duration before it: that bound (computed once per pinned trace) is on `ts_ns`
 * alone, which the Parquet row groups' statistics can skip on, unlike `ts_ns + dur_ns`.
 */
async function overlapping(evidence: EvidenceQuery, window: { startNs: number; endNs: number }): Promise<string> {
  const rows = await evidence.fixedRowsFrom<{ longest: unknown }>(
    "SELECT greatest(coalesce(max(dur_ns), 0), 0) AS longest FROM trace_events",
    (longest) => `SELECT longest FROM ${longest}`,
  );
  const start = Math.trunc(window.startNs);
  // The longest duration goes into the SQL as DuckDB returned it (a bigint keeps every digit).
  const longest = String(rows[0]?.longest ?? 0);
  return `ts_ns < ${Math.trunc(window.endNs)} AND ts_ns >= ${start} - ${longest} AND ts_ns + coalesce(dur_ns, 0) >= ${start}`;
}

/** Events overlapping [start, end), ordered by (ts_ns, event_id, run_id); keyset after `after`. */
export async function traceWindow(
  evidence: EvidenceQuery,
  window: { startNs: number; endNs: number; after: TraceWindowKey | null; limit: number },
): Promise<{ events: TraceWindowEvent[]; total: number }> {
  const overlap = await overlapping(evidence, window);
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

/** How many window events sort at or before `through`: what earlier pages have already returned. */
export async function traceWindowEventsThrough(
  evidence: EvidenceQuery,
  window: { startNs: number; endNs: number },
  through: TraceWindowKey,
): Promise<number> {
  const rows = await evidence.rows<{ n: unknown }>(
    `SELECT count(*) AS n FROM trace_events WHERE ${await overlapping(evidence, window)} AND (ts_ns, event_id, run_id) <= (${through.ts_ns}, ${through.event_id}, ${sqlString(through.run_id)})`,
  );
  return Number(rows[0]?.n ?? 0);
}
