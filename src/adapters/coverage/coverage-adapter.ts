import { Database } from "bun:sqlite";
import { sha256Hex } from "../../domain/canonical-json.ts";
import { basename, join } from "node:path";
import { artifactParseFailed, FlameoxError, planRefused } from "../../domain/errors.ts";
import { projectRelativePath, type EvidenceSink } from "../../domain/evidence.ts";
import type { PythonWorkloadInvocation, CaptureCommand, CommandRunner, ProbeResult } from "../capture-adapter.ts";
import { probePythonPackage, writeCollectorFiles } from "../adapter-support.ts";
import { requireSqliteFile } from "../formats/sqlite-file.ts";

export const coverageRequirement = "coverage==7.17.5";
export const coverageDataFileName = ".coverage";
export const coverageRcFileName = "flameox-coveragerc";
export const coverageExtractorVersion = "flameox.coverage@1";

/** `python script.py …` or `python -m module …`; inline `-c` code has no file to attribute lines to. */
export function pythonTarget(argv: string[]): string[] {
  const head = basename(argv[0] ?? "");
  if (!head.startsWith("python")) {
    throw planRefused("capture", `This adapter runs Python targets; the workload starts with '${argv[0] ?? ""}'.`, {
      remediation: ["Declare the workload as `python <script> …` or `python -m <module> …`."],
    });
  }
  const rest = argv.slice(1);
  if (rest.length === 0 || rest[0] === "-c") {
    throw planRefused("capture", "The workload has no script or module to run (inline -c code is not supported).", {
      remediation: ["Declare a script or `python -m module`."],
    });
  }
  if (rest[0] === "-m" && rest.length < 2) {
    throw planRefused("capture", "`-m` without a module name.", { remediation: ["Name the module after -m."] });
  }
  return rest;
}

export type CoverageCaptureOptions = {
  /** A static label for every line of this run (coverage's `--context`). */
  context?: string | null;
  /** Per-test contexts: `test_function` labels each line with the test that ran it. */
  dynamicContext?: "test_function" | null;
};

/** The branch-mode settings every capture and report uses; the capture adds its dynamic context. */
export const coverageRcLines = ["[run]", "branch = True"];

/**
 * Writes an rc file named by its content into `directory` (atomically, once) and returns its path: the
 * same settings always give the same file, so the report after a capture reads the rc the capture ran with.
 */
export function writeCoverageRc(directory: string, lines: readonly string[]): string {
  const text = `${lines.join("\n")}\n`;
  const name = `coveragerc-${sha256Hex(text).slice(0, 16)}`;
  writeCollectorFiles(directory, { [name]: text });
  return join(directory, name);
}

export function coverageCaptureCommand(input: {
  workload: PythonWorkloadInvocation;
  artifactDirectory: string;
  options?: CoverageCaptureOptions;
  /**
   * Where to write the rc file. Planning happens before the artifact folder exists, so the adapter
   * passes the version-addressed collector folder; the file is then named by its content.
   */
  rcDirectory?: string;
}): CaptureCommand {
  const target = pythonTarget(input.workload.argv);
  const dataFile = join(input.artifactDirectory, coverageDataFileName);
  // The rc file is ours, so a project's own .coveragerc cannot switch branch mode or the data file away.
  const rc = [...coverageRcLines];
  if (input.options?.dynamicContext) rc.push(`dynamic_context = ${input.options.dynamicContext}`);
  let rcFile: string;
  const artifacts: CaptureCommand["artifacts"] = [
    { name: coverageDataFileName, path: dataFile, role: "primary", mediaType: "application/vnd.sqlite3" },
  ];
  if (input.rcDirectory) {
    rcFile = writeCoverageRc(input.rcDirectory, rc);
  } else {
    // Written whole or not at all: coverage would read a cut rc as settings.
    writeCollectorFiles(input.artifactDirectory, { [coverageRcFileName]: `${[...rc, `data_file = ${dataFile}`].join("\n")}\n` });
    rcFile = join(input.artifactDirectory, coverageRcFileName);
    artifacts.push({ name: coverageRcFileName, path: rcFile, role: "configuration", mediaType: "text/plain" });
  }
  const argv = [input.workload.python, "-m", "coverage", "run", "--branch", `--rcfile=${rcFile}`, `--data-file=${dataFile}`];
  if (input.options?.context) argv.push(`--context=${input.options.context}`);
  return { argv: [...argv, ...target], cwd: input.workload.cwd, environment: {}, artifacts };
}

export async function probeCoverage(python: string, run: CommandRunner): Promise<ProbeResult> {
  return probePythonPackage(python, run, {
    script: "import importlib.metadata as m; print(m.version('coverage'))",
    timeoutMs: 15_000,
    requirement: coverageRequirement,
    installAdvice: "Install coverage.py into the workload's interpreter",
    recognize: (version) => (version ? { version: `coverage ${version}` } : null),
  });
}

function parseFailed(message: string): FlameoxError {
  return artifactParseFailed(`coverage data: ${message}`, {
    remediation: ["Capture again with the coverage adapter; the .coverage file must be a complete coverage.py 7 SQLite database."],
  });
}

/** coverage.py's numbits: byte i, bit j set ⇒ line i*8+j was executed. */
export function decodeNumbits(numbits: Uint8Array): number[] {
  const lines: number[] = [];
  for (let byteIndex = 0; byteIndex < numbits.length; byteIndex++) {
    const byte = numbits[byteIndex]!;
    if (byte === 0) continue;
    for (let bit = 0; bit < 8; bit++) if (byte & (1 << bit)) lines.push(byteIndex * 8 + bit);
  }
  return lines;
}

export type CoverageFileSummary = { file: string; lines: number[]; arcs: [number, number][]; contexts: string[] };
export type CoverageSummary = {
  coverageVersion: string | null;
  hasArcs: boolean;
  files: CoverageFileSummary[];
  skippedFiles: string[];
  lineRows: number;
  arcRows: number;
};

type FileExecution = { lines: Map<number, Set<string>>; arcs: Map<string, { from: number; to: number; contexts: Set<string> }> };

function addLine(state: FileExecution, line: number, context: string): void {
  (state.lines.get(line) ?? state.lines.set(line, new Set()).get(line)!).add(context);
}

/** The tables coverage.py 7 writes, checked, and its small ones read: meta, files and contexts. */
function readCoverageTables(database: Database) {
  const tables = new Set(
    (database.query("select name from sqlite_master where type = 'table'").all() as { name: string }[]).map((row) => row.name),
  );
  for (const table of ["meta", "file", "context", "line_bits", "arc"]) {
    if (!tables.has(table)) throw parseFailed(`table '${table}' is missing`);
  }
  const meta = new Map(
    (database.query("select key, value from meta").all() as { key: string; value: string }[]).map((row) => [row.key, row.value]),
  );
  const files = database.query("select id, path from file").all() as { id: number; path: string }[];
  const contexts = new Map(
    (database.query("select id, context from context").all() as { id: number; context: string }[]).map((row) => [row.id, row.context]),
  );
  return { meta, files, contexts };
}

/** Executed lines and arcs per file id, each with the contexts (tests) that ran it; an arc's positive ends are executed lines. */
function readExecution(database: Database, contexts: Map<number, string>): Map<number, FileExecution> {
  const perFile = new Map<number, FileExecution>();
  const entry = (fileId: number) => {
    let value = perFile.get(fileId);
    if (!value) {
      value = { lines: new Map(), arcs: new Map() };
      perFile.set(fileId, value);
    }
    return value;
  };
  const lineRows = database.query("select file_id, context_id, numbits from line_bits");
  for (const row of lineRows.iterate() as IterableIterator<{ file_id: number; context_id: number; numbits: Uint8Array }>) {
    const context = contexts.get(row.context_id) ?? "";
    for (const line of decodeNumbits(row.numbits)) addLine(entry(row.file_id), line, context);
  }
  const arcRows = database.query("select file_id, context_id, fromno, tono from arc");
  for (const row of arcRows.iterate() as IterableIterator<{ file_id: number; context_id: number; fromno: number; tono: number }>) {
    const context = contexts.get(row.context_id) ?? "";
    const state = entry(row.file_id);
    const key = `${row.fromno}->${row.tono}`;
    const arc = state.arcs.get(key) ?? { from: row.fromno, to: row.tono, contexts: new Set<string>() };
    arc.contexts.add(context);
    state.arcs.set(key, arc);
    for (const line of [row.fromno, row.tono]) if (line > 0) addLine(state, line, context);
  }
  return perFile;
}

/** One file's line_hit and branch_arc observations, one per (line or arc, context). */
function emitFile(sink: EvidenceSink, relative: string | null, state: FileExecution, summary: CoverageSummary): CoverageFileSummary {
  const lines = [...state.lines.keys()].sort((left, right) => left - right);
  const allContexts = new Set<string>();
  for (const line of lines) {
    for (const context of [...state.lines.get(line)!].sort()) {
      allContexts.add(context);
      sink.observation({
        kind: "line_hit",
        name: "coverage.line",
        file: relative,
        lines: String(line),
        context: context || null,
        value: "true",
      });
      summary.lineRows += 1;
    }
  }
  const arcs = [...state.arcs.values()].sort((left, right) => left.from - right.from || left.to - right.to);
  for (const arc of arcs) {
    for (const context of [...arc.contexts].sort()) {
      sink.observation({
        kind: "branch_arc",
        name: "coverage.arc",
        file: relative,
        lines: `${arc.from}->${arc.to}`,
        context: context || null,
        value: JSON.stringify({ from: arc.from, to: arc.to }),
      });
      summary.arcRows += 1;
    }
  }
  return { file: relative ?? "", lines, arcs: arcs.map((arc) => [arc.from, arc.to]), contexts: [...allContexts].filter(Boolean).sort() };
}

/**
 * Reads `.coverage` directly. In branch mode coverage.py stores only arcs; executed lines are
 * their positive endpoints (negative numbers mark entry to and exit from a code object).
 */
export function extractCoverage(
  path: string,
  sink: EvidenceSink,
  options: { projectRoot: string | null; projectFilesOnly?: boolean },
): CoverageSummary {
  requireSqliteFile(path, parseFailed);
  let database: Database;
  try {
    database = new Database(path, { readonly: true, strict: true });
  } catch (error) {
    throw parseFailed(`cannot open: ${String(error).slice(0, 200)}`);
  }
  try {
    const { meta, files, contexts } = readCoverageTables(database);
    const perFile = readExecution(database, contexts);
    const summary: CoverageSummary = {
      coverageVersion: meta.get("version") ?? null,
      hasArcs: meta.get("has_arcs") === "1" || meta.get("has_arcs") === "True",
      files: [],
      skippedFiles: [],
      lineRows: 0,
      arcRows: 0,
    };
    for (const file of files.sort((left, right) => left.path.localeCompare(right.path))) {
      const relative = projectRelativePath(file.path, options.projectRoot);
      if (options.projectFilesOnly && relative === file.path.replaceAll("\\", "/")) {
        summary.skippedFiles.push(file.path);
        continue;
      }
      const state = perFile.get(file.id) ?? { lines: new Map(), arcs: new Map() };
      summary.files.push({ ...emitFile(sink, relative, state, summary), file: relative ?? file.path });
    }
    return summary;
  } catch (error) {
    if (error instanceof FlameoxError) throw error;
    throw parseFailed(String(error).slice(0, 500));
  } finally {
    database.close();
  }
}
