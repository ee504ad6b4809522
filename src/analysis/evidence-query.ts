/** What analyses need from the evidence store: SQL over the pinned tables, nothing else. */
export interface EvidenceQuery {
  rows<Row = Record<string, unknown>>(sql: string, values?: (string | number | boolean | null)[]): Promise<Row[]>;
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
