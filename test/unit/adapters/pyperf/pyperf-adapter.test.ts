import { describe, expect, test, setDefaultTimeout } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { FlameoxError } from "../../../../src/domain/errors.ts";
import { MemoryEvidenceSink } from "../../../../src/domain/evidence.ts";
import { extractPyperf, probePyperf, pyperfCaptureCommand } from "../../../../src/adapters/pyperf/index.ts";
import { barePython, runCommand, temporaryDirectory, venvPython } from "../../../fixtures/python/tools.ts";

// Runs pyperf on a real workload. The suite's default per-test deadline is 30 s (scripts/test-deadline.ts).
setDefaultTimeout(60_000);

describe("pyperf adapter", () => {
  test("pyperf command around a workload: every value and warm-up, marked", async () => {
    const directory = temporaryDirectory("pyperf");
    const command = pyperfCaptureCommand({
      workload: { argv: [venvPython, "-c", "pass"], cwd: directory, env: {}, python: venvPython },
      artifactDirectory: directory,
      options: { processes: 2, values: 3, warmups: 1, loops: 1 },
    });
    const result = await runCommand(command.argv, { cwd: command.cwd, env: command.environment, timeoutMs: 90_000 });
    expect(result.exitCode).toBe(0);
    const path = command.artifacts[0]!.path;
    const raw = JSON.parse(readFileSync(path, "utf8"));
    const sink = new MemoryEvidenceSink();
    const summary = extractPyperf(path, sink);
    expect(summary.valueCount).toBe(6);
    expect(summary.warmupCount).toBe(2);
    const rows = sink.measurements.filter((row) => row.name === "pyperf.workload");
    expect(rows).toHaveLength(8);
    // Values round-trip exactly (seconds → integer ns), in run/value order.
    const expected = raw.benchmarks[0].runs.flatMap((run: { values: number[] }) => run.values.map((value) => Math.round(value * 1e9)));
    expect(rows.filter((row) => !row.is_warmup).map((row) => row.value)).toEqual(expected);
    expect(rows.filter((row) => row.is_warmup).every((row) => row.phase === "warmup" && row.value_index === 0)).toBe(true);
    expect(rows.filter((row) => !row.is_warmup).map((row) => [row.run_index, row.value_index])).toEqual([
      [0, 0],
      [0, 1],
      [0, 2],
      [1, 0],
      [1, 1],
      [1, 2],
    ]);
    expect(rows[0]!.unit).toBe("ns");
  });

  test("hand-written suite: several benchmarks, calibration run, gzip, non-time units", () => {
    const directory = temporaryDirectory("pyperf-suite");
    const suite = {
      version: "1.0",
      metadata: { unit: "second", loops: 4 },
      benchmarks: [
        {
          metadata: { name: "a" },
          runs: [
            {
              metadata: { loops: 8 },
              warmups: [
                [1, 0.5],
                [2, 0.25],
                [4, 0.125],
              ],
            },
            { warmups: [[8, 0.01]], values: [0.011, 0.012] },
          ],
        },
        { metadata: { name: "mem", unit: "byte" }, runs: [{ values: [1024, 2048] }] },
      ],
    };
    const path = join(directory, "suite.json.gz");
    writeFileSync(path, Bun.gzipSync(new TextEncoder().encode(JSON.stringify(suite))));
    const sink = new MemoryEvidenceSink();
    const summary = extractPyperf(path, sink);
    expect(summary.benchmarks.map((entry) => [entry.name, entry.values, entry.warmups])).toEqual([
      ["a", 2, 4],
      ["mem", 2, 0],
    ]);
    const calibration = sink.measurements.filter((row) => row.run_index === 0 && row.name === "pyperf.a");
    expect(calibration.every((row) => row.is_warmup && JSON.parse(row.dimensions!).calibration === true)).toBe(true);
    expect(sink.measurements.filter((row) => row.name === "pyperf.mem").map((row) => [row.value, row.unit])).toEqual([
      [1024, "bytes"],
      [2048, "bytes"],
    ]);
  });

  test("truncated or malformed JSON gives ARTIFACT_PARSE_FAILED", () => {
    const directory = temporaryDirectory("pyperf-bad");
    const good = JSON.stringify({ version: "1.0", metadata: { name: "x" }, benchmarks: [{ runs: [{ values: [1] }] }] });
    for (const [index, content] of [
      good.slice(0, 30),
      "{}",
      '{"version":"1.0","benchmarks":[{"runs":[{"values":["x"]}]}]}',
      '{"version":"1.0","benchmarks":[{"runs":[{"warmups":[[1]]}]}]}',
    ].entries()) {
      const path = join(directory, `${index}.json`);
      writeFileSync(path, content);
      expect(() => extractPyperf(path, new MemoryEvidenceSink())).toThrow(FlameoxError);
      try {
        extractPyperf(path, new MemoryEvidenceSink());
      } catch (error) {
        expect((error as FlameoxError).code).toBe("ARTIFACT_PARSE_FAILED");
      }
    }
  });

  test("probe", async () => {
    expect((await probePyperf(venvPython, runCommand)).version).toBe("pyperf 2.11.0");
    const python = barePython();
    const missing = await probePyperf(python, runCommand);
    expect(missing.status).toBe("unavailable");
    expect(missing.remediation[0]).toContain(`${python} -m pip install pyperf==2.11.0`);
  });
});
