/** Failed tests from pytest outcomes, and the normalized signature that clusters their messages. Pure SQL over EvidenceQuery; services decide what an absence means. */
import type { EvidenceQuery } from "../evidence-query.ts";

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

export type ReportFrame = { function: string | null; file: string | null; line: number | null; module: string | null };

/** One failure read from a log (sanitizer report, Python traceback): tool, kind of error, message, innermost frames. */
export type FailureReport = {
  run_id: string;
  tool: string;
  error_kind: string;
  message: string;
  frames: ReportFrame[];
};

export async function failureReports(evidence: EvidenceQuery): Promise<FailureReport[]> {
  const rows = await evidence.rows<Record<string, unknown>>(
    "SELECT run_id, value FROM observations WHERE kind = 'failure_report' ORDER BY run_id, file NULLS LAST, lines, name",
  );
  return rows.flatMap((row) => {
    try {
      const value = JSON.parse(String(row.value)) as Omit<FailureReport, "run_id">;
      return [{ run_id: String(row.run_id), tool: value.tool, error_kind: value.error_kind, message: value.message, frames: value.frames }];
    } catch {
      return [];
    }
  });
}

/** The line of a failure message that says what went wrong, as written. */
export function errorLine(message: string): string {
  const lines = message.split("\n").map((text) => text.trim());
  // pytest marks the failing statement's explanation with "E"; else the first line naming an error.
  return (
    lines.find((text) => /^E\s+\S/.test(text))?.replace(/^E\s+/, "") ??
    lines.find((text) => /\b(\w*Error|\w*Exception|assert|crashed|killed|timed? ?out)\b/i.test(text)) ??
    lines[0] ??
    ""
  );
}

/** A message's stable shape: numbers, addresses, quoted text and paths normalized away. */
export function errorSignature(message: string | null): string {
  if (!message) return "<no message>";
  return errorLine(message)
    .replace(/0x[0-9a-f]+/gi, "0x…")
    .replace(/(["'])(?:(?!\1).){0,200}\1/g, "$1…$1")
    .replace(/\b\d+(\.\d+)?\b/g, "N")
    .replace(/\/[^\s:]+/g, "<path>")
    .slice(0, 200);
}
