// coverage.py's JSON report over a real capture, run through a real process: the statements, missed
// lines and branches it classifies become rows, and a report that cannot be made is a typed limitation.
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { join } from "node:path";
import { MemoryEvidenceSink } from "../../../../src/domain/evidence.ts";
import {
  coverageCaptureCommand,
  coverageStatementsUnavailable,
  extractCoverageStatements,
  importCoverageReport,
} from "../../../../src/adapters/coverage/index.ts";
import { barePython, pythonFixtures, runCommand, temporaryDirectory, venvPython } from "../../../fixtures/python/tools.ts";

// Runs coverage.py twice per test (capture, report) on a tiny script.
setDefaultTimeout(60_000);

const script = join(pythonFixtures, "coverage", "branches.py");

async function captureScript(): Promise<string> {
  const directory = temporaryDirectory("coverage-statements");
  const command = coverageCaptureCommand({
    workload: { argv: [venvPython, script], cwd: directory, env: {}, python: venvPython },
    artifactDirectory: directory,
  });
  const result = await runCommand(command.argv, { cwd: command.cwd, env: command.environment, timeoutMs: 60_000 });
  expect(result.exitCode).toBe(0);
  return command.artifacts[0]!.path;
}

function statements(sink: MemoryEvidenceSink, value: string): number[] {
  return sink.observations
    .filter((row) => row.kind === "statement" && row.value === value)
    .map((row) => Number(row.lines))
    .sort((left, right) => left - right);
}

describe("coverage statements", () => {
  test("the report's executed, missed and excluded statements, missed branches and branch counts, project-relative", async () => {
    const dataFile = await captureScript();
    const sink = new MemoryEvidenceSink();
    const summary = await extractCoverageStatements(
      {
        dataFile,
        python: venvPython,
        rcDirectory: temporaryDirectory("coverage-rc"),
        workDirectory: temporaryDirectory("coverage-work"),
        projectRoot: pythonFixtures,
        measuredFiles: ["coverage/branches.py"],
        run: runCommand,
      },
      sink,
    );
    expect(summary).toEqual({ files: 1, statements: 8, missed: 2, limitation: null });
    expect(new Set(sink.observations.map((row) => row.file))).toEqual(new Set(["coverage/branches.py"]));
    expect(statements(sink, "executed")).toEqual([1, 2, 4, 7, 11, 12]);
    expect(statements(sink, "missed")).toEqual([3, 8]);
    expect(statements(sink, "excluded")).toEqual([]);
    expect(sink.observations.filter((row) => row.kind === "branch_missed").map((row) => row.lines)).toEqual(["2->3"]);
    expect(sink.measurements.map((row) => [row.name, row.value, row.dimensions])).toEqual([
      ["coverage.branches", 2, JSON.stringify({ file: "coverage/branches.py" })],
      ["coverage.partial_branches", 1, JSON.stringify({ file: "coverage/branches.py" })],
    ]);
  });

  test("an interpreter without coverage gives no rows and a typed limitation that names no host path", async () => {
    const dataFile = await captureScript();
    const sink = new MemoryEvidenceSink();
    const python = barePython();
    const workDirectory = temporaryDirectory("coverage-work");
    const summary = await extractCoverageStatements(
      {
        dataFile,
        python,
        rcDirectory: temporaryDirectory("coverage-rc"),
        workDirectory,
        projectRoot: pythonFixtures,
        measuredFiles: ["coverage/branches.py"],
        run: runCommand,
      },
      sink,
    );
    expect(sink.observations).toEqual([]);
    expect(summary.limitation?.code).toBe(coverageStatementsUnavailable);
    expect(summary.limitation?.message).toContain("coverage is not importable by the workload's interpreter");
    expect(summary.limitation?.message).not.toContain(python);
    expect(summary.limitation?.message).not.toContain(workDirectory);
  });

  test("a report that is not coverage's JSON is a limitation, not an error", () => {
    const sink = new MemoryEvidenceSink();
    const places = { projectRoot: "/project", reportDirectory: "/project/.diagnostics/staging", measuredFiles: ["app.py"] };
    expect(importCoverageReport("{not json", sink, places).limitation?.code).toBe(coverageStatementsUnavailable);
    expect(importCoverageReport(JSON.stringify({ meta: {} }), sink, places).limitation?.code).toBe(coverageStatementsUnavailable);
    // A measured file the report leaves out (its source could not be analyzed) is named; files outside the project are not read.
    const partial = importCoverageReport(
      JSON.stringify({
        meta: { branch_coverage: false },
        files: {
          "/project/lib.py": { executed_lines: [1], missing_lines: [2], excluded_lines: [], summary: {} },
          "/elsewhere/site.py": { executed_lines: [1], missing_lines: [], excluded_lines: [], summary: {} },
        },
      }),
      sink,
      { ...places, measuredFiles: ["app.py", "lib.py"] },
    );
    expect(partial.files).toBe(1);
    expect(partial.limitation?.message).toContain("1 of 2 measured file(s) (first: app.py)");
    expect(new Set(sink.observations.map((row) => row.file))).toEqual(new Set(["lib.py"]));
    expect(sink.measurements).toEqual([]);
  });
});
