import { describe, expect, test, setDefaultTimeout } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { FlameoxError } from "../../../../src/domain/errors.ts";
import { MemoryEvidenceSink } from "../../../../src/domain/evidence.ts";
import {
  extractPytestEvents,
  probePytest,
  pytestCaptureCommand,
  writePytestCollectors,
  type PytestSummary,
} from "../../../../src/adapters/pytest/index.ts";
import { barePython, pythonFixtures, runCommand, temporaryDirectory, venvBin, venvPython } from "../../../fixtures/python/tools.ts";

// Runs real pytest sessions, some with xdist workers. The suite's default per-test deadline is 30 s (scripts/test-deadline.ts).
setDefaultTimeout(60_000);

async function capture(
  suite: string,
  extraArguments: string[],
): Promise<{ summary: PytestSummary; sink: MemoryEvidenceSink; events: string }> {
  const base = temporaryDirectory("pytest");
  const collectors = writePytestCollectors(join(base, "collectors"));
  const command = pytestCaptureCommand({
    workload: {
      argv: [venvPython, "-m", "pytest", "-q", "-p", "no:cacheprovider", ...extraArguments],
      cwd: join(pythonFixtures, suite),
      env: {},
      python: venvPython,
    },
    artifactDirectory: base,
    collectors,
  });
  const result = await runCommand(command.argv, { cwd: command.cwd, env: command.environment, timeoutMs: 90_000 });
  expect(result.exitCode).toBe(1);
  const sink = new MemoryEvidenceSink();
  const path = command.artifacts[0]!.path;
  return { summary: extractPytestEvents(path, sink), sink, events: readFileSync(path, "utf8") };
}

function expectSuiteCounts(summary: PytestSummary): void {
  expect(summary.collected).toBe(8);
  expect(summary.executed).toBe(8);
  expect(summary.counts).toEqual({ passed: 4, failed: 1, skipped: 1, xfailed: 1, xpassed: 1, error: 0, crashed: 0 });
  expect(summary.slowest[0]!.nodeid).toBe("test_suite.py::test_slow");
  expect(summary.slowest[0]!.durationNs).toBeGreaterThan(400_000_000);
  expect(summary.exitStatus).toBe(1);
  expect(summary.timeToFirstFailureNs).not.toBeNull();
  expect(summary.fixtureSetups).toBeGreaterThanOrEqual(1);
}

describe("pytest adapter", () => {
  test("serial run: exact outcomes, slowest test, session fixture", async () => {
    const { summary, sink } = await capture("pytest-suite", []);
    expectSuiteCounts(summary);
    expect(summary.complete).toBe(true);
    expect(summary.scheduler).toBe("no");
    expect(summary.fixtureSetups).toBe(1);
    const fixture = sink.measurements.find((row) => row.name === "test.fixture_setup_ns");
    expect(JSON.parse(fixture!.dimensions!)).toMatchObject({ fixture: "session_resource", scope: "session" });
    const outcomes = sink.observations.filter((row) => row.kind === "test_outcome");
    expect(outcomes).toHaveLength(8);
    const xfail = outcomes.find((row) => row.name === "test_suite.py::test_expected_failure");
    expect(JSON.parse(xfail!.value!).outcome).toBe("xfailed");
    const callRows = sink.measurements.filter((row) => row.name === "test.duration_ns" && row.phase === "call");
    expect(callRows.length).toBe(7);
    expect(sink.measurements.some((row) => row.name === "test.collection_ns")).toBe(true);
  });

  test("xdist -n 2: same counts, worker ids on every test", async () => {
    const { summary, sink } = await capture("pytest-suite", ["-n", "2"]);
    expectSuiteCounts(summary);
    expect(summary.complete).toBe(true);
    expect(summary.workers).toEqual(["gw0", "gw1"]);
    for (const test of summary.tests) expect(["gw0", "gw1"]).toContain(test.worker!);
    // Fixture timings come from the workers' sidecars, folded into the stream.
    const fixture = sink.measurements.find((row) => row.name === "test.fixture_setup_ns");
    expect(["gw0", "gw1"]).toContain(fixture!.worker!);
  });

  test("a killed xdist worker is reported, not hidden", async () => {
    const { summary, sink } = await capture("pytest-crash", ["-n", "2"]);
    expect(summary.counts.crashed).toBe(1);
    expect(summary.counts.passed).toBe(2);
    expect(summary.complete).toBe(false);
    expect(summary.crashedWorkers).toHaveLength(1);
    expect(summary.crashedWorkers[0]!.nodeids).toEqual(["test_crash.py::test_kills_its_worker"]);
    expect(summary.limitations.join(" ")).toContain("crashed");
    expect(sink.observations.some((row) => row.kind === "annotation" && row.name === "pytest.worker_crashed")).toBe(true);
  });

  test("truncated and malformed streams give ARTIFACT_PARSE_FAILED", async () => {
    const { events } = await capture("pytest-suite", []);
    const directory = temporaryDirectory("pytest-bad");
    const cases = {
      truncated: events.slice(0, Math.floor(events.length / 2)),
      malformed: events.replace("\n", "\n{not json\n"),
      empty: "",
      foreign: '{"schema":"other","event":"run_started","observed_at_ns":1}\n',
    };
    for (const [name, content] of Object.entries(cases)) {
      const path = join(directory, `${name}.jsonl`);
      writeFileSync(path, content);
      let caught: unknown;
      try {
        extractPytestEvents(path, new MemoryEvidenceSink());
      } catch (error) {
        caught = error;
      }
      expect(caught).toBeInstanceOf(FlameoxError);
      expect((caught as FlameoxError).code).toBe("ARTIFACT_PARSE_FAILED");
    }
  });

  test("probe: available in the pinned venv, unavailable with the exact remedy elsewhere", async () => {
    const available = await probePytest(venvPython, runCommand);
    expect(available.status).toBe("available");
    expect(available.version).toBe("pytest 9.2.0");
    const python = barePython();
    const missing = await probePytest(python, runCommand);
    expect(missing.status).toBe("unavailable");
    expect(missing.remediation[0]).toContain(`${python} -m pip install pytest==9.2.0 pytest-xdist==3.8.0`);
  });

  test("capture refuses a non-pytest workload", () => {
    expect(() =>
      pytestCaptureCommand({
        workload: { argv: [venvPython, "script.py"], cwd: "/", env: {}, python: venvPython },
        artifactDirectory: "/tmp",
        collectors: { directory: "/x", launcher: "/x/l.py", plugin: "/x/p.py" },
      }),
    ).toThrow(FlameoxError);
    expect(venvBin).toContain(".tools");
  });
});
