/**
 * Differential hotspots on real py-spy profiles: split.py divides its work between f and g, and the
 * candidate gives g 4× its work, so g must gain share (1/2 → 4/5) and f lose it. Once with the py-spy
 * capture adapter (two runs per side, frozen run sets), once across formats: the baseline imported from
 * py-spy's collapsed stacks, the candidate from its speedscope file — frame keys (function, file, line)
 * are the same in both, so the two sides line up.
 *
 * How the false-failure bound was obtained: py-spy samples wall-clock time, so a descheduled process is
 * counted in whichever function it stopped; over 30 runs under load average 4–8 g's share of the baseline
 * had a standard deviation of 0.042 (test/support/experiment-designs.ts), and a share is an average over
 * many such intervals, so it is close to normal. With single runs per side, and 0.042 taken for both
 * sides, every bound asserted below is at least 4.2 standard deviations from its expectation (the
 * tightest: a share change of +0.3 asserted above +0.05, SD 0.059), a normal tail of 1.3e-5; f's change is
 * the mirror of g's, not a second chance to fail. With two runs per side the margins grow by √2.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from "bun:test";
import { join } from "node:path";
import type { ComparisonResult } from "../../../src/services/comparison-service.ts";
import type { Services } from "../../../src/services/services.ts";
import { experimentProject, python, repositoryRoot } from "./project.ts";

// Real py-spy captures. The suite's default per-test deadline is 30 s (scripts/test-deadline.ts).
setDefaultTimeout(120_000);

const toml = `
[workloads.split]
argv = ["$PYTHON", "-S", "split.py", "{factor}"]
parameters = { factor = [1, 4] }
`;

let services: Services;
let root: string;

beforeAll(async () => {
  ({ services, root } = await experimentProject("differential", toml));
});

afterAll(() => services.close());

async function captured(factor: number): Promise<string> {
  const plan = await services.captures.plan({
    workload_name: "split",
    adapter: "py-spy",
    parameters: { factor },
    adapter_options: { rate: 1000 },
    preflight_mode: "auto",
    capture_mode: "auto",
  });
  return (await services.captures.execute(plan.plan_id)).run_id;
}

/** g gained and f lost share; each side's self shares partition its time, so they add up to 1. */
function expectGrowthOfG(result: ComparisonResult): void {
  const differential = result.differential_hotspots;
  expect(differential.evidence.status).toBe("available");
  const entries = [...differential.gained, ...differential.lost];
  // <module> usually holds no self time and all of the total on both sides: then it neither gained nor lost.
  expect(differential.functions_compared - entries.length).toBeLessThanOrEqual(1);
  const g = differential.gained.find((entry) => entry.function === "g");
  const f = differential.lost.find((entry) => entry.function === "f");
  expect(g).toBeDefined();
  expect(f).toBeDefined();
  expect(differential.gained[0]!.function).toBe("g");
  expect(differential.lost[0]!.function).toBe("f");
  for (const entry of [f!, g!]) {
    expect(entry.file).toBe("split.py");
    // Present on both sides: the frame keys of the two sides line up.
    expect(entry.direction).toBe(entry === g ? "gained" : "lost");
  }
  // Expected 0.5 → 0.8 for g (SD 0.042 per run); each bound is ≥ 4.2 SD away (see the file comment).
  expect(g!.baseline_self_share).toBeGreaterThan(0.25);
  expect(g!.baseline_self_share).toBeLessThan(0.75);
  expect(g!.candidate_self_share).toBeGreaterThan(0.6);
  expect(g!.self_share_change).toBeGreaterThan(0.05);
  expect(f!.self_share_change).toBeLessThan(-0.05);
  const sum = (pick: (entry: (typeof entries)[number]) => number) => entries.reduce((total, entry) => total + pick(entry), 0);
  expect(sum((entry) => entry.baseline_self_share)).toBeCloseTo(1, 9);
  expect(sum((entry) => entry.candidate_self_share)).toBeCloseTo(1, 9);
  expect(sum((entry) => entry.self_share_change)).toBeCloseTo(0, 9);
  expect(f!.baseline_self_share + g!.baseline_self_share).toBeGreaterThan(0.9);
  expect(f!.candidate_self_share + g!.candidate_self_share).toBeGreaterThan(0.9);
}

describe("differential hotspots between two run sets of real profiles", () => {
  test("py-spy captures under two parameter values: g gains share, f loses it", async () => {
    const baseline = services.runSets.freeze({ run_ids: [await captured(1), await captured(1)] });
    const candidate = services.runSets.freeze({ run_ids: [await captured(4), await captured(4)] });
    const result = await services.comparisons.compare({
      baseline: baseline.run_set_id,
      candidate: candidate.run_set_id,
      hotspot_limit: 100,
    });
    expect(result.differential_hotspots.baseline_runs_with_stacks).toBe(2);
    expect(result.differential_hotspots.candidate_runs_with_stacks).toBe(2);
    expect(result.differential_hotspots.unit).toBe("ns");
    expectGrowthOfG(result);
  }, 60_000);

  test("across formats: baseline from collapsed stacks, candidate from speedscope", async () => {
    const record = (factor: number, format: string, output: string) => {
      const spy = Bun.spawnSync(
        [
          join(repositoryRoot, ".tools", "venv", "bin", "py-spy"),
          "record",
          "--rate",
          "1000",
          "--format",
          format,
          "--output",
          output,
          "--",
          python,
          "-S",
          "split.py",
          String(factor),
        ],
        { cwd: root },
      );
      expect(spy.exitCode).toBe(0);
    };
    record(1, "raw", "baseline.txt");
    record(4, "speedscope", "candidate.speedscope.json");
    const imported = (path: string) =>
      services.imports.importArtifact({
        path,
        kind: "sample_profile",
        sensitivity: "internal",
        media_type: null,
        source_root: "project",
        producer: "py-spy",
        producer_version: null,
      });
    const baselineImport = await imported("baseline.txt");
    const candidateImport = await imported("candidate.speedscope.json");
    expect([baselineImport.format, candidateImport.format]).toEqual(["py_spy_raw", "speedscope"]);
    const baseline = services.runSets.freeze({ run_ids: [baselineImport.run_id] });
    const candidate = services.runSets.freeze({ run_ids: [candidateImport.run_id] });
    const result = await services.comparisons.compare({
      baseline: baseline.run_set_id,
      candidate: candidate.run_set_id,
      hotspot_limit: 100,
    });
    expectGrowthOfG(result);
    expect(result.differential_hotspots.unit).toBe("time (ns, samples)");

    // Per line, too: the same function, file and line has the same frame key in both formats.
    const lines = async (runId: string) => {
      const page = await services.analysis.hotspots({
        run_or_artifact: runId,
        limit: 100,
        group_by: "line",
        order_by: "self",
        unit: null,
        thread: null,
        per_thread: false,
        cursor: null,
      });
      return new Map(
        page.hotspots
          .filter((hotspot) => hotspot.function === "f" || hotspot.function === "g")
          .map((hotspot) => [`${hotspot.function}:${hotspot.line}`, hotspot.frame_id]),
      );
    };
    const baselineLines = await lines(baselineImport.run_id);
    const candidateLines = await lines(candidateImport.run_id);
    const shared = [...baselineLines.keys()].filter((key) => candidateLines.has(key));
    expect(shared.length).toBeGreaterThan(0);
    for (const key of shared) expect(candidateLines.get(key)).toBe(baselineLines.get(key)!);
  }, 60_000);
});
