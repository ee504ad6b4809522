import type { TraceEventRow } from "../domain/evidence.ts";

export type QueryValue = string | number | boolean | null;

/**
 * What analyses need from the evidence store: SQL over the pinned tables, nothing else. Besides the five
 * evidence tables, `stack_rows` is `stacks` with `stack_row`, a BIGINT unique to each row.
 */
export interface EvidenceQuery {
  rows<Row = Record<string, unknown>>(sql: string, values?: QueryValue[]): Promise<Row[]>;
  /**
   * Runs `select(name)` where `name` stands for `relation`: the store computes a deterministic
   * relation once per pinned bundle set and keeps it, so repeated and paged questions read it back.
   */
  rowsFrom<Row = Record<string, unknown>>(relation: string, select: (name: string) => string, values?: QueryValue[]): Promise<Row[]>;
  /**
   * `rowsFrom` for a question without parameters whose answer is small: as fixed as the pinned bundles,
   * so the store may keep the answer itself (frozen) and a warm analysis asks DuckDB one question fewer.
   */
  fixedRowsFrom<Row = Record<string, unknown>>(relation: string, select: (name: string) => string): Promise<readonly Readonly<Row>[]>;
}

/** An EvidenceQuery that keeps nothing: `rowsFrom` inlines the relation as a subquery (tests, one-shot connections). */
export function uncachedEvidence(rows: EvidenceQuery["rows"]): EvidenceQuery {
  const rowsFrom: EvidenceQuery["rowsFrom"] = (relation, select, values) => rows(select(`(${relation})`), values);
  return { rows, rowsFrom, fixedRowsFrom: (relation, select) => rowsFrom(relation, select) };
}

/** DuckDB hands BIGINT and HUGEINT back as bigint; results here are plain JSON numbers. */
export function toNumber(value: unknown): number {
  if (typeof value === "bigint") return Number(value);
  if (typeof value === "number") return value;
  if (value === null || value === undefined) return 0;
  return Number(value);
}

export function toNullableNumber(value: unknown): number | null {
  return value === null || value === undefined ? null : toNumber(value);
}

export function sqlString(value: string): string {
  return `'${value.replaceAll("'", "''")}'`;
}

/** A trace_events row as DuckDB returns it, back in the evidence model's types. */
export function traceEventFromRow(row: Record<string, unknown>): TraceEventRow {
  return {
    event_id: toNumber(row.event_id),
    parent_id: toNullableNumber(row.parent_id),
    depth: toNumber(row.depth),
    name: String(row.name ?? ""),
    category: (row.category as string | null) ?? null,
    ts_ns: toNumber(row.ts_ns),
    dur_ns: toNullableNumber(row.dur_ns),
    pid: (row.pid as string | null) ?? null,
    tid: (row.tid as string | null) ?? null,
    args: (row.args as string | null) ?? null,
    correlation: (row.correlation as string | null) ?? null,
    device: (row.device as string | null) ?? null,
    stream: (row.stream as string | null) ?? null,
    phase: String(row.phase ?? "X"),
  };
}
