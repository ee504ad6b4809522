/** Execution coverage: the lines and branch arcs each project file ran. Pure SQL over EvidenceQuery; services decide what an absence means. */
import { type EvidenceQuery, toNullableNumber, toNumber } from "../evidence-query.ts";

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

/** What coverage.py's report classified, per file: statements that ran, were missed or excluded, the branches that never ran and the branch counts. */
export type FileStatements = {
  file: string;
  executed: number[];
  missed: number[];
  excluded: number[];
  missed_branches: string[];
  branches: number | null;
  partial_branches: number | null;
};

export async function statementsByFile(evidence: EvidenceQuery): Promise<FileStatements[]> {
  const rows = await evidence.rows<Record<string, unknown>>(
    `WITH lines AS (
       SELECT file,
              list(DISTINCT TRY_CAST(lines AS BIGINT) ORDER BY TRY_CAST(lines AS BIGINT)) FILTER (WHERE kind = 'statement' AND value = 'executed') AS executed,
              list(DISTINCT TRY_CAST(lines AS BIGINT) ORDER BY TRY_CAST(lines AS BIGINT)) FILTER (WHERE kind = 'statement' AND value = 'missed') AS missed,
              list(DISTINCT TRY_CAST(lines AS BIGINT) ORDER BY TRY_CAST(lines AS BIGINT)) FILTER (WHERE kind = 'statement' AND value = 'excluded') AS excluded,
              list(DISTINCT lines) FILTER (WHERE kind = 'branch_missed') AS missed_branches
       FROM observations WHERE kind IN ('statement', 'branch_missed') AND file IS NOT NULL
       GROUP BY file
     ),
     counts AS (
       SELECT json_extract_string(dimensions, '$.file') AS file,
              max(value) FILTER (WHERE name = 'coverage.branches') AS branches,
              max(value) FILTER (WHERE name = 'coverage.partial_branches') AS partial_branches
       FROM measurements WHERE name IN ('coverage.branches', 'coverage.partial_branches')
       GROUP BY 1
     )
     SELECT lines.*, counts.branches, counts.partial_branches
     FROM lines LEFT JOIN counts USING (file) ORDER BY file`,
  );
  const lineList = (value: unknown) => ((value as unknown[] | null) ?? []).map(toNumber);
  return rows.map((row) => ({
    file: String(row.file),
    executed: lineList(row.executed),
    missed: lineList(row.missed),
    excluded: lineList(row.excluded),
    // "from->to" sorted by their numbers, not as text (10->12 after 9->11).
    missed_branches: ((row.missed_branches as unknown[] | null) ?? []).map(String).sort((left, right) => {
      const [a1, a2] = left.split("->").map(Number);
      const [b1, b2] = right.split("->").map(Number);
      return a1! - b1! || a2! - b2!;
    }),
    branches: toNullableNumber(row.branches),
    partial_branches: toNullableNumber(row.partial_branches),
  }));
}
