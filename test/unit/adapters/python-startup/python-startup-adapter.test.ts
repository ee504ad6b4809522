import { describe, expect, test, setDefaultTimeout } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { FlameoxError } from "../../../../src/domain/errors.ts";
import { MemoryEvidenceSink } from "../../../../src/domain/evidence.ts";
import {
  extractPythonStartup,
  parseImportTime,
  probePythonStartup,
  pythonStartupCaptureCommand,
  writePythonStartupCollectors,
} from "../../../../src/adapters/python-startup/index.ts";
import { pythonFixtures, runCommand, temporaryDirectory, venvPython } from "../../../fixtures/python/tools.ts";

// Starts fresh interpreters with -X importtime. The suite's default per-test deadline is 30 s (scripts/test-deadline.ts).
setDefaultTimeout(60_000);

async function capture(): Promise<string> {
  const directory = temporaryDirectory("startup");
  const collectors = writePythonStartupCollectors(join(directory, "collectors"));
  const command = pythonStartupCaptureCommand({
    workload: { argv: [venvPython, "entry.py"], cwd: join(pythonFixtures, "startup"), env: {}, python: venvPython },
    artifactDirectory: directory,
    collectors,
    samples: 3,
  });
  const result = await runCommand(command.argv, { cwd: command.cwd, env: command.environment, timeoutMs: 60_000 });
  expect(result.exitCode).toBe(0);
  return command.artifacts[0]!.path;
}

describe("python startup adapter", () => {
  test("fresh-interpreter samples with peak RSS; the slow-importing package is on top", async () => {
    const path = await capture();
    const sink = new MemoryEvidenceSink();
    const summary = extractPythonStartup(path, sink);
    expect(summary.samples).toHaveLength(3);
    for (const sample of summary.samples) {
      expect(sample.exitCode).toBe(0);
      expect(sample.peakRssBytes!).toBeGreaterThan(1_000_000);
      expect(sample.durationNs).toBeGreaterThan(300_000_000);
    }
    expect(summary.topPackage).toBe("slowpkg");
    expect(summary.packages[0]!.selfUs).toBeGreaterThan(290_000);
    expect(summary.packages.some((entry) => entry.package === "json")).toBe(true);
    expect(sink.measurements.filter((row) => row.name === "startup.wall_ns")).toHaveLength(3);
    const heavy = sink.measurements.find((row) => row.name === "import.self_us" && JSON.parse(row.dimensions!).module === "slowpkg.heavy")!;
    expect(JSON.parse(heavy.dimensions!)).toEqual({ module: "slowpkg.heavy", package: "slowpkg" });
  });

  test("importtime parsing: header skipped, duplicates merged, packages grouped", () => {
    const parsed = parseImportTime([
      "import time: self [us] | cumulative | imported package",
      "import time:       100 |        100 |   json.decoder",
      "import time:        50 |        150 | json",
      "import time:        10 |         10 |   json.decoder",
      "import time: garbage",
    ]);
    expect(parsed.unparsedLines).toBe(1);
    expect(parsed.packages).toEqual([{ package: "json", moduleCount: 2, selfUs: 160, maxCumulativeUs: 150 }]);
  });

  test("truncated or malformed artifacts give ARTIFACT_PARSE_FAILED", async () => {
    const path = await capture();
    const directory = temporaryDirectory("startup-bad");
    const text = readFileSync(path, "utf8");
    const cases = [text.slice(0, text.length / 2), "{}", '{"schema":"flameox.python-startup.v1","samples":[]}', "not json"];
    for (const [index, content] of cases.entries()) {
      const bad = join(directory, `${index}.json`);
      writeFileSync(bad, content);
      let caught: unknown;
      try {
        extractPythonStartup(bad, new MemoryEvidenceSink());
      } catch (error) {
        caught = error;
      }
      expect((caught as FlameoxError).code).toBe("ARTIFACT_PARSE_FAILED");
    }
  });

  test("probe: the interpreter itself; a missing one is unavailable with a remedy", async () => {
    expect((await probePythonStartup(venvPython, runCommand)).status).toBe("available");
    const missing = await probePythonStartup("/nonexistent/python3", runCommand);
    expect(missing.status).toBe("unavailable");
    expect(missing.remediation[0]).toContain("/nonexistent/python3");
  });
});
