import { afterAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { measurementValue, resourceMeasurementRows, runtimeMeasurementNames, ResourceSampler } from "../../../src/exec/resource-sampler.ts";
import { fixtures, run, scratchDirectory } from "./helpers.ts";

const scratch = scratchDirectory();
afterAll(() => scratch.remove());
const mebibyte = 1024 * 1024;

describe("resource sampling through the broker", () => {
  test("peak RSS of a python holding 200 MB is within reason", async () => {
    const { result } = await run(
      scratch.path,
      ["python3", join(fixtures, "allocate.py"), "200", "1.0"],
      {},
      { sampling: { intervalMs: 50, diskPath: scratch.path } },
    );
    expect(result.exit_code).toBe(0);
    const resources = result.resources!;
    expect(resources.tree_backend).toBe("proc_stat_scan");
    expect(resources.sample_count).toBeGreaterThan(1);
    const peak = measurementValue(resources, runtimeMeasurementNames.peakRssBytes);
    expect(peak).not.toBeNull();
    expect(peak!).toBeGreaterThan(190 * mebibyte);
    expect(peak!).toBeLessThan(1024 * mebibyte);
    expect(measurementValue(resources, runtimeMeasurementNames.minimumFreeBytes)!).toBeGreaterThan(0);
    expect(measurementValue(resources, runtimeMeasurementNames.wallTimeNs)).toBe(result.wall_time_ns);
    expect(resources.unavailable).toEqual([]);
  }, 30_000);

  test("CPU time of a busy loop is observed", async () => {
    const { result } = await run(
      scratch.path,
      ["python3", "-c", "import time\nend = time.process_time() + 0.5\nwhile time.process_time() < end: pass"],
      {},
      { sampling: { intervalMs: 50 } },
    );
    const user = measurementValue(result.resources!, runtimeMeasurementNames.cpuUserNs);
    const system = measurementValue(result.resources!, runtimeMeasurementNames.cpuSystemNs);
    expect(user).not.toBeNull();
    expect(system).not.toBeNull();
    // process_time() spends part of the loop in the kernel, so only the sum is bounded below.
    expect(user! + system!).toBeGreaterThan(0.3e9);
  }, 30_000);

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
    const summary = new ResourceSampler({ diskPath: join(scratch.path, "missing", "dir") }).start().stop();
    const names = summary.unavailable.map((metric) => metric.name);
    expect(names).toContain(runtimeMeasurementNames.peakRssBytes);
    expect(names).toContain(runtimeMeasurementNames.minimumFreeBytes);
    expect(names).toContain(runtimeMeasurementNames.cpuUserNs);
    expect(measurementValue(summary, runtimeMeasurementNames.wallTimeNs)).toBeGreaterThanOrEqual(0);
  });

  test("sampling can be turned off", async () => {
    const { result } = await run(scratch.path, ["true"], {}, { sampling: false });
    expect(result.resources).toBeNull();
  });
});
