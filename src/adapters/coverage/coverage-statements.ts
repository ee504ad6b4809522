import { existsSync, mkdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { isAbsolute, join, resolve } from "node:path";
import { projectRelativePath, type EvidenceSink } from "../../domain/evidence.ts";
import type { CommandRunner, ExtractionLimitation } from "../capture-adapter.ts";
import { coverageRcLines, writeCoverageRc } from "./coverage-adapter.ts";

/**
 * Which lines of each measured file are statements, and which of them never ran. The .coverage
 * database records only what executed; the statements come from coverage.py's own static analysis of
 * the sources, so after a capture its JSON report is run in the interpreter that captured (coverage is
 * importable there by construction) and imported as `statement` and `branch_missed` observations plus
 * the branch counts as measurements. A report that cannot be made leaves the run as it is, with a typed
 * limitation saying why.
 */

export const coverageStatementsUnavailable = "coverage_statements_unavailable";

/** A report larger than this is not read (it would be a project of hundreds of thousands of statements). */
const maximumReportBytes = 128 * 1024 * 1024;
const reportTimeoutMs = 300_000;

export type CoverageStatementsSummary = {
  files: number;
  statements: number;
  missed: number;
  /** Why the statements are unknown; null when they were imported. */
  limitation: ExtractionLimitation | null;
};

type ReportFile = {
  executed_lines: number[];
  missing_lines: number[];
  excluded_lines: number[];
  missing_branches: [number, number][];
  summary: { num_branches: number | null; num_partial_branches: number | null };
};

/** Host paths never reach an agent: the project root and staging become relative, any other path its last part. */
function withoutHostPaths(text: string, places: { projectRoot: string; workDirectory: string; python: string }): string {
  return text
    .replaceAll(places.python, "python")
    .replaceAll(places.workDirectory, "<staging>")
    .replaceAll(`${places.projectRoot}/`, "")
    .replace(/(?:\/[\w.+@-]+)+\/([\w.+@-]+)/g, "$1");
}

function unavailable(reason: string): CoverageStatementsSummary {
  return {
    files: 0,
    statements: 0,
    missed: 0,
    limitation: {
      code: coverageStatementsUnavailable,
      message: `Which lines were missed is unknown (only executed lines are recorded): ${reason}`,
    },
  };
}

const isLineList = (value: unknown): value is number[] => Array.isArray(value) && value.every((line) => Number.isInteger(line));
const count = (value: unknown): number | null => (Number.isInteger(value) ? (value as number) : null);

/** One file of coverage.py's JSON report (format 3), checked; null when it does not have that shape. */
function reportFile(value: unknown): ReportFile | null {
  const entry = value as Record<string, unknown> | null;
  if (!entry || typeof entry !== "object") return null;
  const { executed_lines, missing_lines } = entry;
  const excluded = entry.excluded_lines ?? [];
  const branches = entry.missing_branches ?? [];
  if (!isLineList(executed_lines) || !isLineList(missing_lines) || !isLineList(excluded)) return null;
  if (!Array.isArray(branches) || !branches.every((arc) => isLineList(arc) && arc.length === 2)) return null;
  const summary = (entry.summary ?? {}) as Record<string, unknown>;
  return {
    executed_lines,
    missing_lines,
    excluded_lines: excluded,
    missing_branches: branches as [number, number][],
    summary: { num_branches: count(summary.num_branches), num_partial_branches: count(summary.num_partial_branches) },
  };
}

function emitFile(sink: EvidenceSink, file: string, report: ReportFile, branchMode: boolean): void {
  const statement = (line: number, value: string) =>
    sink.observation({ kind: "statement", name: "coverage.statement", file, lines: String(line), context: null, value });
  for (const line of report.executed_lines) statement(line, "executed");
  for (const line of report.missing_lines) statement(line, "missed");
  for (const line of report.excluded_lines) statement(line, "excluded");
  for (const [from, to] of report.missing_branches) {
    sink.observation({
      kind: "branch_missed",
      name: "coverage.missed_branch",
      file,
      lines: `${from}->${to}`,
      context: null,
      value: JSON.stringify({ from, to }),
    });
  }
  if (!branchMode) return;
  for (const [name, value] of [
    ["coverage.branches", report.summary.num_branches],
    ["coverage.partial_branches", report.summary.num_partial_branches],
  ] as const) {
    if (value === null) continue;
    sink.measurement({
      name,
      value,
      unit: "count",
      aggregation: "total",
      is_warmup: false,
      worker: null,
      run_index: null,
      value_index: null,
      phase: "report",
      dimensions: JSON.stringify({ file }),
    });
  }
}

/** coverage skips a file whose source is gone or no longer parses (-i); its executed lines stand alone. */
function unreportedLimitation(measuredFiles: readonly string[], reported: ReadonlySet<string>): ExtractionLimitation | null {
  const unreported = measuredFiles.filter((file) => !reported.has(file));
  if (unreported.length === 0) return null;
  return {
    code: coverageStatementsUnavailable,
    message: `Which lines were missed is unknown for ${unreported.length} of ${measuredFiles.length} measured file(s) (first: ${unreported[0]}): coverage could not analyze their source (missing, changed or not Python); only their executed lines are known.`,
  };
}

/** Reads the report and emits the rows of the project's files; the counts say what was imported. */
export function importCoverageReport(
  text: string,
  sink: EvidenceSink,
  places: { projectRoot: string; reportDirectory: string; measuredFiles: readonly string[] },
): CoverageStatementsSummary {
  let document: { meta?: { branch_coverage?: unknown }; files?: Record<string, unknown> };
  try {
    document = JSON.parse(text);
  } catch {
    return unavailable("coverage's JSON report is malformed.");
  }
  if (!document || typeof document.files !== "object" || document.files === null) {
    return unavailable("coverage's JSON report has no files table.");
  }
  const branchMode = document.meta?.branch_coverage === true;
  const summary: CoverageStatementsSummary = { files: 0, statements: 0, missed: 0, limitation: null };
  const reported = new Set<string>();
  for (const [key, value] of Object.entries(document.files).sort(([left], [right]) => left.localeCompare(right))) {
    // Keys are relative to the folder the report ran in when the file lies under it, else absolute.
    const absolute = isAbsolute(key) ? key : resolve(places.reportDirectory, key);
    const relative = projectRelativePath(absolute, places.projectRoot);
    if (!relative || relative === absolute.replaceAll("\\", "/")) continue;
    const report = reportFile(value);
    if (!report) continue;
    reported.add(relative);
    emitFile(sink, relative, report, branchMode);
    summary.files += 1;
    summary.statements += report.executed_lines.length + report.missing_lines.length;
    summary.missed += report.missing_lines.length;
  }
  summary.limitation = unreportedLimitation(places.measuredFiles, reported);
  return summary;
}

/**
 * Runs `python -m coverage json` over the captured data file with flameox's rc file (so a project's own
 * configuration cannot change what counts as a statement) and imports it. Never throws for a report
 * that cannot be made: the capture's executed lines stand, and the limitation says why.
 */
export async function extractCoverageStatements(
  input: {
    dataFile: string;
    python: string;
    /** Where flameox's rc files live (the capture's, so the report reads the same one). */
    rcDirectory: string;
    /** The run's staging: the report is written here and removed after reading. */
    workDirectory: string;
    projectRoot: string;
    /** The project files the data file measured (project-relative): any the report leaves out is named. */
    measuredFiles: readonly string[];
    run: CommandRunner;
  },
  sink: EvidenceSink,
): Promise<CoverageStatementsSummary> {
  mkdirSync(input.workDirectory, { recursive: true });
  const output = join(input.workDirectory, `coverage-report-${crypto.randomUUID()}.json`);
  try {
    const rcFile = writeCoverageRc(input.rcDirectory, coverageRcLines);
    // The staging folder as working directory: no project file shadows coverage's own modules.
    const result = await input.run(
      [input.python, "-m", "coverage", "json", `--rcfile=${rcFile}`, `--data-file=${input.dataFile}`, "-o", output, "-i", "-q"],
      { cwd: input.workDirectory, timeoutMs: reportTimeoutMs },
    );
    if (result.exitCode !== 0 || !existsSync(output)) {
      const stderr = `${result.stderr}\n${result.stdout}`.trim();
      // Nothing coverage could report on: unknown only for the project files that were measured.
      if (/No data to report/.test(stderr))
        return { files: 0, statements: 0, missed: 0, limitation: unreportedLimitation(input.measuredFiles, new Set()) };
      const reason = /No module named coverage/.test(stderr)
        ? "coverage is not importable by the workload's interpreter."
        : `\`coverage json\` exited ${result.exitCode ?? "by a signal"}: ${stderr.split("\n").slice(-3).join(" ").slice(-300)}`;
      return unavailable(withoutHostPaths(reason, input));
    }
    const size = statSync(output).size;
    if (size > maximumReportBytes) return unavailable(`coverage's JSON report is ${size} bytes, above the ${maximumReportBytes} read.`);
    return importCoverageReport(readFileSync(output, "utf8"), sink, {
      projectRoot: input.projectRoot,
      reportDirectory: input.workDirectory,
      measuredFiles: input.measuredFiles,
    });
  } catch (error) {
    return unavailable(withoutHostPaths(String(error instanceof Error ? error.message : error).slice(0, 300), input));
  } finally {
    rmSync(output, { force: true });
  }
}
