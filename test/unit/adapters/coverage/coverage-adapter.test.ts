import { describe, expect, test, setDefaultTimeout } from "bun:test";
import { Database } from "bun:sqlite";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { FlameoxError } from "../../../../src/domain/errors.ts";
import { MemoryEvidenceSink } from "../../../../src/domain/evidence.ts";
import { coverageCaptureCommand, decodeNumbits, extractCoverage, probeCoverage } from "../../../../src/adapters/coverage/index.ts";
import { barePython, pythonFixtures, repositoryRoot, runCommand, temporaryDirectory, venvPython } from "../../../fixtures/python/tools.ts";

// Runs coverage.py on real code. The suite's default per-test deadline is 30 s (scripts/test-deadline.ts).
setDefaultTimeout(60_000);

const script = join(pythonFixtures, "coverage", "branches.py");

async function captureScript(): Promise<string> {
  const directory = temporaryDirectory("coverage");
  const command = coverageCaptureCommand({
    workload: { argv: [venvPython, script], cwd: directory, env: {}, python: venvPython },
    artifactDirectory: directory,
    options: { context: "suite" },
  });
  const result = await runCommand(command.argv, { cwd: command.cwd, env: command.environment, timeoutMs: 60_000 });
  expect(result.exitCode).toBe(0);
  return command.artifacts[0]!.path;
}

function expectParseFailure(action: () => unknown): void {
  let caught: unknown;
  try {
    action();
  } catch (error) {
    caught = error;
  }
  expect(caught).toBeInstanceOf(FlameoxError);
  expect((caught as FlameoxError).code).toBe("ARTIFACT_PARSE_FAILED");
}

describe("coverage adapter", () => {
  test("exactly the executed lines and arcs of a small script, project-relative", async () => {
    const data = await captureScript();
    const sink = new MemoryEvidenceSink();
    const summary = extractCoverage(data, sink, { projectRoot: repositoryRoot });
    expect(summary.hasArcs).toBe(true);
    expect(summary.files).toHaveLength(1);
    const file = summary.files[0]!;
    expect(file.file).toBe("test/fixtures/python/coverage/branches.py");
    // 8 (unused body) and 3 (the big branch) never ran.
    expect(file.lines).toEqual([1, 2, 4, 7, 11, 12]);
    expect(file.arcs).toEqual([
      [-1, 1],
      [-1, 2],
      [1, 7],
      [2, 4],
      [4, -1],
      [7, 11],
      [11, 12],
      [12, -1],
    ]);
    expect(file.contexts).toEqual(["suite"]);
    const lineRows = sink.observations.filter((row) => row.kind === "line_hit");
    expect(lineRows.map((row) => row.lines)).toEqual(["1", "2", "4", "7", "11", "12"]);
    expect(lineRows.every((row) => row.file === "test/fixtures/python/coverage/branches.py" && row.context === "suite")).toBe(true);
    expect(sink.observations.filter((row) => row.kind === "branch_arc").map((row) => row.lines)).toContain("2->4");
  });

  test("dynamic contexts label lines with the test that ran them", async () => {
    const directory = temporaryDirectory("coverage-dynamic");
    const command = coverageCaptureCommand({
      workload: {
        argv: [venvPython, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_suite.py", "-k", "quick"],
        cwd: join(pythonFixtures, "pytest-suite"),
        env: {},
        python: venvPython,
      },
      artifactDirectory: directory,
      options: { dynamicContext: "test_function" },
    });
    const result = await runCommand(command.argv, { cwd: command.cwd, env: command.environment, timeoutMs: 60_000 });
    expect(result.exitCode).toBe(0);
    const summary = extractCoverage(command.artifacts[0]!.path, new MemoryEvidenceSink(), {
      projectRoot: repositoryRoot,
      projectFilesOnly: true,
    });
    const suite = summary.files.find((file) => file.file.endsWith("pytest-suite/test_suite.py"))!;
    expect(suite.contexts).toContain("test_suite.test_quick_one");
    expect(suite.contexts).toContain("test_suite.test_quick_two");
  });

  test("numbits decode", () => {
    expect(decodeNumbits(new Uint8Array([0b00000110, 0, 0b10000000]))).toEqual([1, 2, 23]);
  });

  test("truncated, malformed or foreign files give ARTIFACT_PARSE_FAILED", async () => {
    const data = await captureScript();
    const directory = temporaryDirectory("coverage-bad");
    const bytes = readFileSync(data);
    const truncated = join(directory, "truncated.coverage");
    writeFileSync(truncated, bytes.subarray(0, 1000));
    expectParseFailure(() => extractCoverage(truncated, new MemoryEvidenceSink(), { projectRoot: null }));
    const garbage = join(directory, "garbage.coverage");
    writeFileSync(garbage, "this is not sqlite at all, just text\n");
    expectParseFailure(() => extractCoverage(garbage, new MemoryEvidenceSink(), { projectRoot: null }));
    const foreign = join(directory, "foreign.coverage");
    const database = new Database(foreign);
    database.run("create table something (x)");
    database.close();
    expectParseFailure(() => extractCoverage(foreign, new MemoryEvidenceSink(), { projectRoot: null }));
    expectParseFailure(() => extractCoverage(join(directory, "missing"), new MemoryEvidenceSink(), { projectRoot: null }));
  });

  test("probe and capture refusals", async () => {
    expect((await probeCoverage(venvPython, runCommand)).version).toBe("coverage 7.17.5");
    const python = barePython();
    const missing = await probeCoverage(python, runCommand);
    expect(missing.status).toBe("unavailable");
    expect(missing.remediation[0]).toContain(`${python} -m pip install coverage==7.17.5`);
    expect(() =>
      coverageCaptureCommand({
        workload: { argv: [venvPython, "-c", "pass"], cwd: "/", env: {}, python: venvPython },
        artifactDirectory: "/tmp",
      }),
    ).toThrow(FlameoxError);
  });
});
