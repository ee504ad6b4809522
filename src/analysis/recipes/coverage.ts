/** Execution coverage: the lines and branch arcs each project file ran. Pure SQL over EvidenceQuery; services decide what an absence means. */
import { type EvidenceQuery, toNumber } from "../evidence-query.ts";

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
