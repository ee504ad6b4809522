/** One run's pytest outcomes: counts per outcome and the slowest tests. Pure SQL over EvidenceQuery; services decide what an absence means. */
import { type EvidenceQuery, toNumber } from "../evidence-query.ts";

export type SlowTest = { nodeid: string; outcome: string; duration_ns: number };

export async function testOutcomeCounts(evidence: EvidenceQuery): Promise<Record<string, number>> {
  const rows = await evidence.rows<{ outcome: string | null; tests: unknown }>(
    `SELECT json_extract_string(value, '$.outcome') AS outcome, count(*) AS tests
     FROM observations WHERE kind = 'test_outcome' GROUP BY outcome ORDER BY outcome`,
  );
  return Object.fromEntries(rows.map((row) => [row.outcome ?? "unknown", toNumber(row.tests)]));
}

export async function slowestTests(evidence: EvidenceQuery, limit: number): Promise<SlowTest[]> {
  const rows = await evidence.rows<Record<string, unknown>>(
    `SELECT name, json_extract_string(value, '$.outcome') AS outcome, TRY_CAST(json_extract(value, '$.duration_ns') AS DOUBLE) AS duration_ns
     FROM observations WHERE kind = 'test_outcome' ORDER BY duration_ns DESC NULLS LAST, name LIMIT ${limit}`,
  );
  return rows.map((row) => ({
    nodeid: String(row.name),
    outcome: String(row.outcome ?? "unknown"),
    duration_ns: toNumber(row.duration_ns),
  }));
}
