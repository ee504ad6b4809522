import { afterAll, describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { runProcess } from "../../../src/exec/broker.ts";
import { measurementValue, resourceMeasurementRows, runtimeMeasurementNames, ResourceSampler } from "../../../src/exec/resource-sampler.ts";
import { fixtures, run, scratchDirectory } from "./helpers.ts";

const scratch = scratchDirectory();
afterAll(() => scratch.remove());
const mebibyte = 1024 * 1024;

describe("resource sampling through the broker", () => {
  test("peak RSS of a python holding 200 MiB is at least the block and far below 1 GiB", async () => {
    // Held until the test releases it, and released only after progress reports 200 ms apart
    // once the block was resident: timers fire in due order, so the 20 ms sampler ran in between.
    const release = join(scratch.path, "release-rss");
    const stdoutPath = join(scratch.path, "rss.out");
    let allocatedAt: number | null = null;
    const result = await runProcess(
      {
        argv: ["python3", join(fixtures, "allocate.py"), "200", release],
        cwd: scratch.path,
        deadline: Date.now() + 120_000,
        stdoutPath,
        stderrPath: join(scratch.path, "rss.err"),
      },
      {
        sampling: { intervalMs: 20, diskPath: scratch.path },
        progressIntervalMs: 50,
        trackingIntervalMs: 20,
        onProgress: (progress) => {
          if (allocatedAt === null && readFileSync(stdoutPath, "utf8").includes("allocated")) allocatedAt = progress.elapsed_ns;
          if (allocatedAt !== null && progress.elapsed_ns - allocatedAt >= 200e6) writeFileSync(release, "");
        },
      },
    );
    expect(result.exit_code).toBe(0);
    const resources = result.resources!;
    expect(resources.tree_backend).toBe("proc_stat_scan");
    expect(resources.sample_count).toBeGreaterThan(1);
    const peak = measurementValue(resources, runtimeMeasurementNames.peakRssBytes);
    // Lower bound: the 200 MiB block is resident (every page written) while sampled; the interpreter
    // adds ~10 MiB more, so this is a floor the true value always clears, not a band edge. Upper
    // bound: 1 GiB is 5x the block; only a measurement that sums the wrong processes reaches it.
    expect(peak!).toBeGreaterThanOrEqual(200 * mebibyte);
    expect(peak!).toBeLessThan(1024 * mebibyte);
    expect(measurementValue(resources, runtimeMeasurementNames.minimumFreeBytes)!).toBeGreaterThan(0);
    expect(measurementValue(resources, runtimeMeasurementNames.wallTimeNs)).toBe(result.wall_time_ns);
    expect(resources.unavailable).toEqual([]);
  }, 120_000);

  test("CPU time of a busy loop is observed", async () => {
    // The loop burns 1 s of its own CPU time (process_time, not wall time): load on the machine
    // stretches how long that takes, never how much CPU the loop is charged. The reaped root's
    // rusage reads the same kernel clock as process_time, so the sum is at least 1.0 s; 0.9 s
    // leaves room only for rounding. The 10 s ceiling (10x the work) catches a unit or
    // double-counting error, far above what interpreter start-up or contention add.
    const { result } = await run(
      scratch.path,
      ["python3", "-c", "import time\nend = time.process_time() + 1.0\nwhile time.process_time() < end: pass"],
      {},
      { sampling: { intervalMs: 50 } },
    );
    const user = measurementValue(result.resources!, runtimeMeasurementNames.cpuUserNs);
    const system = measurementValue(result.resources!, runtimeMeasurementNames.cpuSystemNs);
    expect(user).not.toBeNull();
    expect(system).not.toBeNull();
    // process_time() spends part of the loop in the kernel, so only the sum is bounded.
    expect(user! + system!).toBeGreaterThanOrEqual(0.9e9);
    expect(user! + system!).toBeLessThan(10e9);
  }, 60_000);

  test("a metric that was not observed is listed as unavailable, not reported as 0", async () => {
    const { result } = await run(scratch.path, ["true"]);
    const resources = result.resources!;
    const unavailable = resources.unavailable.map((metric) => metric.name);
    expect(unavailable).toContain(runtimeMeasurementNames.minimumFreeBytes);
    expect(measurementValue(resources, runtimeMeasurementNames.minimumFreeBytes)).toBeNull();
    for (const name of Object.values(runtimeMeasurementNames)) {
      // Every metric is either measured or listed, never both and never silently missing.
      expect(Number(measurementValue(resources, name) !== null) + Number(unavailable.includes(name))).toBe(1);
    }
    const rows = resourceMeasurementRows(resources);
    expect(rows.map((row) => row.name).sort()).toEqual(resources.measurements.map((measurement) => measurement.name).sort());
  });

  test("a sampler with no tree and a bad disk path reports both as unavailable", () => {
    const sampler = new ResourceSampler({ diskPath: join(scratch.path, "missing", "dir") }).start();
    Bun.sleepSync(20);
    const summary = sampler.stop();
    const names = summary.unavailable.map((metric) => metric.name);
    expect(names).toContain(runtimeMeasurementNames.peakRssBytes);
    expect(names).toContain(runtimeMeasurementNames.minimumFreeBytes);
    expect(names).toContain(runtimeMeasurementNames.cpuUserNs);
    // Without a caller's measurement the sampler reports its own monotonic span, which covers the
    // 20 ms this test spent between start and stop (a lower bound: it can only be longer).
    expect(measurementValue(summary, runtimeMeasurementNames.wallTimeNs)).toBeGreaterThanOrEqual(20e6);
  });

  test("a wall time measured by the caller is reported as given", () => {
    const summary = new ResourceSampler({}).start().stop({ wallTimeNs: 1_234_567 });
    expect(measurementValue(summary, runtimeMeasurementNames.wallTimeNs)).toBe(1_234_567);
  });

  test("sampling can be turned off", async () => {
    const { result } = await run(scratch.path, ["true"], {}, { sampling: false });
    expect(result.resources).toBeNull();
  });
});
