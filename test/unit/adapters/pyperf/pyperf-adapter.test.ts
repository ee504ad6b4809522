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
    const summary = await extractPyperf(path, sink);
    expect(summary.valueCount).toBe(6);
    expect(summary.warmupCount).toBe(2);
    const rows = sink.measurements.filter((row) => row.name === "pyperf.workload");
    expect(rows).toHaveLength(8);
    // Values round-trip at full precision (seconds × 1e9, never rounded to whole ns), in run/value order.
    const expected = raw.benchmarks[0].runs.flatMap((run: { values: number[] }) => run.values.map((value) => value * 1e9));
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

  test("hand-written suite: several benchmarks, calibration run, gzip, non-time units", async () => {
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
    const summary = await extractPyperf(path, sink);
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

  test("truncated or malformed JSON gives ARTIFACT_PARSE_FAILED", async () => {
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
      const error = await extractPyperf(path, new MemoryEvidenceSink()).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(FlameoxError);
      expect((error as FlameoxError).code).toBe("ARTIFACT_PARSE_FAILED");
    }
  });

  test("sub-nanosecond means are kept: a 1.25 ns value is 1.25, not 1", async () => {
    const directory = temporaryDirectory("pyperf-precision");
    const path = join(directory, "fast.json");
    writeFileSync(
      path,
      JSON.stringify({ version: "1.0", metadata: { name: "fast" }, benchmarks: [{ runs: [{ values: [1.25e-9, 3.5e-10] }] }] }),
    );
    const sink = new MemoryEvidenceSink();
    await extractPyperf(path, sink);
    expect(sink.measurements.map((row) => row.value)).toEqual([1.25e-9 * 1e9, 3.5e-10 * 1e9]);
    expect(sink.measurements[0]!.value).toBeCloseTo(1.25, 12);
  });

  test("negative and absurd values are left out and said so; the rest is kept", async () => {
    const directory = temporaryDirectory("pyperf-absurd");
    const path = join(directory, "odd.json");
    const suite = {
      version: "1.0",
      benchmarks: [
        { metadata: { name: "t", unit: "second" }, runs: [{ values: [0.5, -1e9, 1e300, 0.25], metadata: { command_max_rss: 1e300 } }] },
        { metadata: { name: "m", unit: "byte" }, runs: [{ values: [-4096, 2048] }] },
      ],
    };
    writeFileSync(path, JSON.stringify(suite));
    const sink = new MemoryEvidenceSink();
    const summary = await extractPyperf(path, sink);
    expect(sink.measurements.map((row) => [row.name, row.value])).toEqual([
      ["pyperf.t", 0.5e9],
      ["pyperf.t", 0.25e9],
      ["pyperf.m", 2048],
    ]);
    expect(summary.valueCount).toBe(3);
    expect(summary.limitations).toEqual([
      "4 pyperf value(s) were left out: 2 negative (a time or size cannot be), 2 beyond 2^53 ns, bytes or counts (benchmark t, m).",
    ]);
  });

  test("a gzip bomb is refused after its output bound, without inflating it", async () => {
    const directory = temporaryDirectory("pyperf-bomb");
    const path = join(directory, "bomb.json.gz");
    // 256 MiB of spaces compresses to about 256 KB: the stream stops at the 64 MiB bound.
    const chunk = Buffer.alloc(64 << 20, 0x20);
    const gzip = (await import("node:zlib")).createGzip({ level: 9 });
    const parts: Buffer[] = [];
    gzip.on("data", (part: Buffer) => parts.push(part));
    const done = new Promise((resolve) => gzip.on("end", resolve));
    for (let index = 0; index < 4; index++) gzip.write(chunk);
    gzip.end();
    await done;
    writeFileSync(path, Buffer.concat(parts));
    const error = await extractPyperf(path, new MemoryEvidenceSink()).catch((caught: unknown) => caught);
    expect((error as FlameoxError).code).toBe("ARTIFACT_TOO_LARGE");
  });

  test("probe", async () => {
    expect((await probePyperf(venvPython, runCommand)).version).toBe("pyperf 2.11.0");
    const python = barePython();
    const missing = await probePyperf(python, runCommand);
    expect(missing.status).toBe("unavailable");
    expect(missing.remediation[0]).toContain(`${python} -m pip install pyperf==2.11.0`);
  });
});
