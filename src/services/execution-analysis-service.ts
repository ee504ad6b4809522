import { boundedRangeText, lineRanges } from "../analysis/line-ranges.ts";
import { coverageByFile, type FileCoverage, type FileStatements, statementsByFile } from "../analysis/recipes/coverage.ts";
import type { WorkspaceHandle } from "../store/workspace-handle.ts";
import { available, type EvidenceStatus, maximumRows, missingEvidence, queryCursors } from "./evidence-needs.ts";
import { type EvidenceScope, limitWithin, pinEvidenceScope, scopeLimitations, withEvidence } from "./evidence-scope.ts";

/**
 * One project file's coverage. The statement figures come from coverage.py's report over the capture
 * (null when it could not be made: `limitations` says why); the executed lines and arcs from the data file.
 */
export type ExecutionFileSummary = {
  file: string;
  statement_count: number | null;
  covered_line_count: number | null;
  missed_line_count: number | null;
  excluded_line_count: number | null;
  /** Covered statements over statements, in percent (one decimal); branches are counted apart. */
  percent_covered: number | null;
  /** Missed statements as ranges ("12-15, 40"; a range spans consecutive statements), cut to ~300 characters ("… +N more"). */
  missed_line_ranges: string | null;
  branch_count: number | null;
  missed_branch_count: number | null;
  partial_branch_count: number | null;
  /** Branch arcs that never ran ("from->to", a negative target is the exit), cut like the ranges. */
  missed_branches: string | null;
  executed_line_count: number;
  executed_line_ranges: string;
  arc_count: number;
  /** Test contexts that ran lines of this file (first 10). */
  contexts: string[];
};
export type ExecutionFileDifference = {
  file: string;
  lines_only_in_base: number[];
  lines_only_in_comparison: number[];
  arcs_only_in_base: string[];
  arcs_only_in_comparison: string[];
  /** Whether any of the four lists was cut to its first `differenceItems`. */
  truncated: boolean;
};
export type ExecutionAnalysisResult = {
  schema_version: 1;
  run_or_artifact: string;
  comparison_run_or_artifact: string | null;
  corpus_commit_id: string;
  /** Totals over every project file (not only this page); the statement totals are null when no file's are known. */
  statement_count: number | null;
  covered_line_count: number | null;
  missed_line_count: number | null;
  percent_covered: number | null;
  executed_line_count: number;
  arc_count: number;
  /** One page: most missed lines first; total, returned, truncated and next_cursor describe it. */
  files: ExecutionFileSummary[];
  differences: ExecutionFileDifference[] | null;
  total: number;
  returned: number;
  truncated: boolean;
  next_cursor: string | null;
  limitations: string[];
  evidence: EvidenceStatus;
};

/** A page stops before its files and differences pass this many characters (the whole result stays under 8,000). */
const pageCharacters = 5_500;
const rangeCharacters = 300;
const contextItems = 10;
const differenceItems = 50;

/** A file without statements is fully covered, as coverage.py reports it. */
const percent = (covered: number, statements: number) => (statements > 0 ? Math.round((covered / statements) * 1000) / 10 : 100);

function fileSummary(name: string, executed: FileCoverage | undefined, statements: FileStatements | undefined): ExecutionFileSummary {
  const lines = executed?.lines ?? [];
  const statementLines = statements ? [...statements.executed, ...statements.missed] : undefined;
  const known = statements !== undefined;
  const missedBranches = statements?.missed_branches ?? [];
  return {
    file: name,
    statement_count: statementLines?.length ?? null,
    covered_line_count: statements?.executed.length ?? null,
    missed_line_count: statements?.missed.length ?? null,
    excluded_line_count: statements?.excluded.length ?? null,
    percent_covered: statementLines ? percent(statements!.executed.length, statementLines.length) : null,
    missed_line_ranges: known ? boundedRangeText(lineRanges(statements.missed, statementLines), rangeCharacters) : null,
    branch_count: statements?.branches ?? null,
    missed_branch_count: known && statements.branches !== null ? missedBranches.length : null,
    partial_branch_count: statements?.partial_branches ?? null,
    missed_branches: known && statements.branches !== null ? boundedRangeText(missedBranches, rangeCharacters) : null,
    executed_line_count: lines.length,
    executed_line_ranges: boundedRangeText(
      statements ? lineRanges(statements.executed, statementLines) : lineRanges(lines),
      rangeCharacters,
    ),
    arc_count: executed?.arcs.length ?? 0,
    contexts: (executed?.contexts ?? []).slice(0, contextItems),
  };
}

function difference(name: string, left: FileCoverage | undefined, right: FileCoverage | undefined): ExecutionFileDifference | null {
  const only = <T>(from: T[], other: T[]) => {
    const others = new Set(other);
    return from.filter((item) => !others.has(item));
  };
  const lists = {
    lines_only_in_base: only(left?.lines ?? [], right?.lines ?? []),
    lines_only_in_comparison: only(right?.lines ?? [], left?.lines ?? []),
    arcs_only_in_base: only(left?.arcs ?? [], right?.arcs ?? []),
    arcs_only_in_comparison: only(right?.arcs ?? [], left?.arcs ?? []),
  };
  const lengths = Object.values(lists).map((list) => list.length);
  if (lengths.every((length) => length === 0)) return null;
  return {
    file: name,
    lines_only_in_base: lists.lines_only_in_base.slice(0, differenceItems),
    lines_only_in_comparison: lists.lines_only_in_comparison.slice(0, differenceItems),
    arcs_only_in_base: lists.arcs_only_in_base.slice(0, differenceItems),
    arcs_only_in_comparison: lists.arcs_only_in_comparison.slice(0, differenceItems),
    truncated: lengths.some((length) => length > differenceItems),
  };
}

type Entry = { file: ExecutionFileSummary | null; difference: ExecutionFileDifference | null };

/** The entries from `offset` on, at most `limit`, stopping before `pageCharacters` (always at least one). */
function page(entries: Entry[], offset: number, limit: number): Entry[] {
  const taken: Entry[] = [];
  let characters = 0;
  for (const entry of entries.slice(offset, offset + limit)) {
    const size = JSON.stringify(entry).length;
    if (taken.length > 0 && characters + size > pageCharacters) break;
    taken.push(entry);
    characters += size;
  }
  return taken;
}

function reasonOf(files: ExecutionFileSummary[], totals: { statements: number; covered: number; known: number }, differing: number | null) {
  if (differing !== null) return `Coverage of ${files.length} file(s) compared; ${differing} file(s) differ.`;
  if (totals.known === 0)
    return `Executed lines and arcs of ${files.length} project file(s); which lines were missed is unknown (see limitations).`;
  const missed = totals.statements - totals.covered;
  return `${totals.covered} of ${totals.statements} statements ran in ${totals.known} project file(s) (${percent(totals.covered, totals.statements)}%); ${missed} missed.`;
}

/** analyze_execution: per project file, which statements ran and which were missed, and what differs from a second run. */
export class ExecutionAnalysisService {
  constructor(private readonly workspace: WorkspaceHandle) {}

  private async coverage(scope: EvidenceScope) {
    const [executed, statements] = await withEvidence(
      this.workspace,
      scope,
      async (view) => [await coverageByFile(view), await statementsByFile(view)] as const,
    );
    if (executed.length === 0 && statements.length === 0) {
      throw missingEvidence(this.workspace, scope, {
        what: "execution coverage (line and arc observations)",
        kinds: ["execution_coverage"],
        extractTool: "extract_coverage",
        adapter: "coverage",
        importKind: "execution_coverage",
      });
    }
    return {
      executed: new Map(executed.map((file) => [file.file, file])),
      statements: new Map(statements.map((file) => [file.file, file])),
    };
  }

  async analyze(request: {
    run_or_artifact: string;
    limit: number;
    comparison_run_or_artifact: string | null;
    cursor?: string | null;
  }): Promise<ExecutionAnalysisResult> {
    const limit = limitWithin(request.limit, maximumRows(this.workspace));
    const scope = pinEvidenceScope(this.workspace, request.run_or_artifact);
    const base = await this.coverage(scope);
    const comparisonScope = request.comparison_run_or_artifact
      ? pinEvidenceScope(this.workspace, request.comparison_run_or_artifact)
      : null;
    const comparison = comparisonScope ? await this.coverage(comparisonScope) : null;
    const cursors = queryCursors(this.workspace, "analyze_execution", {
      run_or_artifact: request.run_or_artifact,
      comparison_run_or_artifact: request.comparison_run_or_artifact,
      limit,
    });
    const snapshot = `${scope.snapshot}:${comparisonScope?.snapshot ?? ""}`;
    const offset = (cursors.decode(request.cursor ?? null, snapshot) as number | null) ?? 0;

    const baseNames = [...new Set([...base.executed.keys(), ...base.statements.keys()])];
    const files = baseNames.map((name) => fileSummary(name, base.executed.get(name), base.statements.get(name)));
    const byName = new Map(files.map((file) => [file.file, file]));
    const names = [...new Set([...baseNames, ...(comparison ? [...comparison.executed.keys()] : [])])].sort(
      (left, right) =>
        (byName.get(right)?.missed_line_count ?? -1) - (byName.get(left)?.missed_line_count ?? -1) || left.localeCompare(right),
    );
    const entries: Entry[] = names
      .map((name) => ({
        file: byName.get(name) ?? null,
        difference: comparison ? difference(name, base.executed.get(name), comparison.executed.get(name)) : null,
      }))
      // With a comparison, a file only the comparison measured is listed when it differs.
      .filter((entry) => entry.file !== null || entry.difference !== null);
    const shown = page(entries, offset, limit);
    const end = offset + shown.length;
    const known = files.filter((file) => file.statement_count !== null);
    const totals = {
      statements: known.reduce((sum, file) => sum + file.statement_count!, 0),
      covered: known.reduce((sum, file) => sum + file.covered_line_count!, 0),
      known: known.length,
    };
    const differing = comparison ? entries.filter((entry) => entry.difference !== null).length : null;
    return {
      schema_version: 1,
      run_or_artifact: request.run_or_artifact,
      comparison_run_or_artifact: request.comparison_run_or_artifact,
      corpus_commit_id: scope.corpusCommitId,
      statement_count: known.length > 0 ? totals.statements : null,
      covered_line_count: known.length > 0 ? totals.covered : null,
      missed_line_count: known.length > 0 ? totals.statements - totals.covered : null,
      percent_covered: known.length > 0 ? percent(totals.covered, totals.statements) : null,
      executed_line_count: files.reduce((sum, file) => sum + file.executed_line_count, 0),
      arc_count: files.reduce((sum, file) => sum + file.arc_count, 0),
      files: shown.flatMap((entry) => (entry.file ? [entry.file] : [])),
      differences: comparison ? shown.flatMap((entry) => (entry.difference ? [entry.difference] : [])) : null,
      total: entries.length,
      returned: shown.length,
      truncated: end < entries.length,
      next_cursor: end < entries.length ? cursors.encode(end, snapshot) : null,
      limitations: scopeLimitations(scope),
      evidence: available(reasonOf(files, totals, differing)),
    };
  }
}
