import { coverageByFile, type FileCoverage } from "../analysis/recipes/coverage.ts";
import type { WorkspaceHandle } from "../store/workspace-handle.ts";
import { available, type EvidenceStatus, maximumRows, missingEvidence } from "./evidence-needs.ts";
import { limitWithin, pinEvidenceScope, withEvidence } from "./evidence-scope.ts";

export type ExecutionFileSummary = {
  file: string;
  executed_lines: number[];
  executed_line_count: number;
  arcs: string[];
  arc_count: number;
  contexts: string[];
};
export type ExecutionFileDifference = {
  file: string;
  lines_only_in_base: number[];
  lines_only_in_comparison: number[];
  arcs_only_in_base: string[];
  arcs_only_in_comparison: string[];
};
export type ExecutionAnalysisResult = {
  schema_version: 1;
  run_or_artifact: string;
  comparison_run_or_artifact: string | null;
  corpus_commit_id: string;
  executed_line_count: number;
  arc_count: number;
  files: ExecutionFileSummary[];
  differences: ExecutionFileDifference[] | null;
  total: number;
  returned: number;
  truncated: boolean;
  evidence: EvidenceStatus;
};

/** analyze_execution: which lines and branch arcs ran, per project file, and what differs from a second run. */
export class ExecutionAnalysisService {
  constructor(private readonly workspace: WorkspaceHandle) {}

  async analyze(request: {
    run_or_artifact: string;
    limit: number;
    comparison_run_or_artifact: string | null;
  }): Promise<ExecutionAnalysisResult> {
    const limit = limitWithin(request.limit, maximumRows(this.workspace));
    const scope = pinEvidenceScope(this.workspace, request.run_or_artifact);
    const base = await withEvidence(this.workspace, scope, (view) => coverageByFile(view));
    const need = {
      what: "execution coverage (line and arc observations)",
      kinds: ["execution_coverage"],
      extractTool: "extract_coverage",
      adapter: "coverage",
      importKind: "execution_coverage",
    };
    if (base.length === 0) throw missingEvidence(this.workspace, scope, need);
    let comparison: FileCoverage[] | null = null;
    if (request.comparison_run_or_artifact) {
      const comparisonScope = pinEvidenceScope(this.workspace, request.comparison_run_or_artifact);
      comparison = await withEvidence(this.workspace, comparisonScope, (view) => coverageByFile(view));
      if (comparison.length === 0) throw missingEvidence(this.workspace, comparisonScope, need);
    }
    const files = base.map((file) => ({
      file: file.file,
      executed_lines: file.lines,
      executed_line_count: file.lines.length,
      arcs: file.arcs,
      arc_count: file.arcs.length,
      contexts: file.contexts,
    }));
    let differences: ExecutionFileDifference[] | null = null;
    if (comparison) {
      const byFile = new Map(comparison.map((file) => [file.file, file]));
      const names = [...new Set([...base.map((file) => file.file), ...comparison.map((file) => file.file)])].sort();
      const baseByFile = new Map(base.map((file) => [file.file, file]));
      differences = names
        .map((name) => {
          const left = baseByFile.get(name) ?? { lines: [], arcs: [] };
          const right = byFile.get(name) ?? { lines: [], arcs: [] };
          const rightLines = new Set(right.lines);
          const leftLines = new Set(left.lines);
          const rightArcs = new Set(right.arcs);
          const leftArcs = new Set(left.arcs);
          return {
            file: name,
            lines_only_in_base: left.lines.filter((line) => !rightLines.has(line)),
            lines_only_in_comparison: right.lines.filter((line) => !leftLines.has(line)),
            arcs_only_in_base: left.arcs.filter((arc) => !rightArcs.has(arc)),
            arcs_only_in_comparison: right.arcs.filter((arc) => !leftArcs.has(arc)),
          };
        })
        .filter(
          (difference) =>
            difference.lines_only_in_base.length +
              difference.lines_only_in_comparison.length +
              difference.arcs_only_in_base.length +
              difference.arcs_only_in_comparison.length >
            0,
        )
        .slice(0, limit);
    }
    return {
      schema_version: 1,
      run_or_artifact: request.run_or_artifact,
      comparison_run_or_artifact: request.comparison_run_or_artifact,
      corpus_commit_id: scope.corpusCommitId,
      executed_line_count: files.reduce((sum, file) => sum + file.executed_line_count, 0),
      arc_count: files.reduce((sum, file) => sum + file.arc_count, 0),
      files: files.slice(0, limit),
      differences,
      total: files.length,
      returned: Math.min(limit, files.length),
      truncated: files.length > limit,
      evidence: available(
        comparison
          ? `Coverage of ${files.length} file(s) compared with ${request.comparison_run_or_artifact}; ${differences!.length} file(s) differ.`
          : `Executed lines and arcs of ${files.length} project file(s).`,
      ),
    };
  }
}
