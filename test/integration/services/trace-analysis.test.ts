// analyze_pytorch and analyze_hotspots through the real services (import → Parquet → DuckDB) on the
// real kineto traces of test/fixtures/formats/kineto, against the independent oracle script.
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { copyFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import type { TorchOperator } from "../../../src/analysis/recipes/trace-events.ts";
import { repositoryRoot, runCommand, venvPython } from "../../fixtures/python/tools.ts";
import { project } from "../adapters/harness.ts";
import { defaultHotspotRequest } from "../../../src/services/analysis-service.ts";
import { projectImport } from "../../support/imports.ts";

// Each trace is imported (extracted into Parquet) and then queried; the oracle parses it in Python.
setDefaultTimeout(180_000);

type OracleOperator = { calls: number; self_ns: number; total_ns: number; outermost_calls: number; outermost_total_ns: number };
type Oracle = { operators: Record<string, OracleOperator>; self_by_frame: Record<string, number> };

const kineto = join(repositoryRoot, "test", "fixtures", "formats", "kineto");
const traces = readdirSync(kineto).filter((name) => name.endsWith(".json.gz"));

async function oracle(path: string): Promise<Oracle> {
  const result = await runCommand([venvPython, join(repositoryRoot, "scripts", "oracles", "chrome_trace_operators.py"), path], {
    timeoutMs: 120_000,
  });
  if (result.exitCode !== 0) throw new Error(`oracle failed: ${result.stderr}`);
  return JSON.parse(result.stdout) as Oracle;
}

async function importedTrace(name: string) {
  const { root, services } = await project("pytorch");
  copyFileSync(join(kineto, name), join(root, name));
  const receipt = await services.imports.importArtifact(projectImport(name));
  return { services, runId: receipt.run_id };
}

describe("analyze_pytorch agrees with the oracle on every real kineto trace", () => {
  for (const name of traces) {
    test(`${name}: outermost calls, self and outermost total time per operator`, async () => {
      const [expected, { services, runId }] = await Promise.all([oracle(join(kineto, name)), importedTrace(name)]);
      const operators: TorchOperator[] = [];
      let cursor: string | null = null;
      do {
        const page = await services.traceAnalysis.pytorch({ run_or_artifact: runId, limit: 1000, order_by: "self", cursor });
        operators.push(...page.operators);
        cursor = page.next_cursor;
      } while (cursor);
      const actual = Object.fromEntries(
        operators.map((operator) => [
          operator.name,
          { calls: operator.calls, self_ns: operator.self_ns, total_ns: operator.total_ns, nested: operator.nested_calls },
        ]),
      );
      const wanted = Object.fromEntries(
        Object.entries(expected.operators).map(([operator, stats]) => [
          operator,
          {
            calls: stats.outermost_calls,
            self_ns: stats.self_ns,
            total_ns: stats.outermost_total_ns,
            nested: stats.calls - stats.outermost_calls,
          },
        ]),
      );
      expect(actual).toEqual(wanted);
    });
  }

  test("a nested same-name operator is one call: aten::sum inside aten::sum counts once, its time once", async () => {
    // Two outer aten::sum slices of 100 µs, each holding an aten::sum of 80 µs.
    const events = [0, 1000].flatMap((start) => [
      { ph: "X", cat: "cpu_op", name: "aten::sum", pid: 1, tid: 1, ts: start, dur: 100 },
      { ph: "X", cat: "cpu_op", name: "aten::sum", pid: 1, tid: 1, ts: start + 10, dur: 80 },
    ]);
    const { root, services } = await project("pytorch-nested");
    await Bun.write(join(root, "nested.json"), JSON.stringify({ traceEvents: events, schemaVersion: 1 }));
    const receipt = await services.imports.importArtifact({
      path: "nested.json",
      kind: "execution_trace",
      sensitivity: "internal",
      media_type: null,
      source_root: "project",
      producer: "torch.profiler",
      producer_version: null,
    });
    const result = await services.traceAnalysis.pytorch({ run_or_artifact: receipt.run_id, limit: 10, order_by: "self", cursor: null });
    expect(
      result.operators.map(({ name, calls, nested_calls, self_ns, total_ns }) => ({ name, calls, nested_calls, self_ns, total_ns })),
    ).toEqual([{ name: "aten::sum", calls: 2, nested_calls: 2, self_ns: 200_000, total_ns: 200_000 }]);
  });
});

describe("CPU and accelerator time on separate denominators", () => {
  test("sampled_rank-0: kernels and copies are shares of accelerator time, host slices of CPU time", async () => {
    const name = "sampled_rank-0.json.gz";
    const [expected, { services, runId }] = await Promise.all([oracle(join(kineto, name)), importedTrace(name)]);
    // In this trace the device track (pid 0) holds exactly the kernel, gpu_memcpy and gpu_memset slices.
    const deviceCategories = new Set(["kernel", "gpu_memcpy", "gpu_memset"]);
    let acceleratorSelf = 0;
    let cpuSelf = 0;
    for (const [frame, self] of Object.entries(expected.self_by_frame)) {
      if (deviceCategories.has(frame.split("\u0000")[0]!)) acceleratorSelf += self;
      else cpuSelf += self;
    }
    const result = await services.analysis.hotspots({
      run_or_artifact: runId,
      limit: 1000,
      group_by: "line",
      order_by: "self",
      unit: null,
      thread: null,
      per_thread: false,
      cursor: null,
    });
    expect(result.truncated).toBe(false);
    expect(result.domain_totals).toEqual({ cpu: cpuSelf, accelerator: acceleratorSelf });
    for (const hotspot of result.hotspots) {
      expect(hotspot.time_domain).toBe(deviceCategories.has(hotspot.module ?? "") ? "accelerator" : "cpu");
      expect(hotspot.self_share).toBe(hotspot.self_weight / result.domain_totals![hotspot.time_domain!]);
    }
    for (const domain of ["cpu", "accelerator"] as const) {
      const shares = result.hotspots
        .filter((hotspot) => hotspot.time_domain === domain)
        .reduce((sum, hotspot) => sum + hotspot.self_share, 0);
      expect(shares).toBeCloseTo(1, 9);
    }
    const pytorch = await services.traceAnalysis.pytorch({ run_or_artifact: runId, limit: 5, order_by: "self", cursor: null });
    const accelerator = pytorch.time_split.accelerator_by_category;
    expect(new Set(accelerator.map((entry) => entry.category))).toEqual(deviceCategories);
    expect(accelerator.reduce((sum, entry) => sum + entry.share, 0)).toBeCloseTo(1, 9);
    expect(pytorch.time_split.accelerator_ns).toBe(accelerator.reduce((sum, entry) => sum + entry.duration_ns, 0));
  });

  test("a CPU-only trace has one denominator and no time domain", async () => {
    const { services, runId } = await importedTrace("rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz");
    const result = await services.analysis.hotspots(defaultHotspotRequest(runId, 50));
    expect(result.domain_totals).toBeNull();
    expect(result.hotspots.every((hotspot) => hotspot.time_domain === null)).toBe(true);
    expect(result.hotspots.reduce((sum, hotspot) => sum + hotspot.self_share, 0)).toBeCloseTo(1, 9);
  });
});
