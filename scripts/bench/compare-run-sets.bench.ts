/**
 * compare_run_sets over two run sets of BENCH_COMPARE_RUNS (100) synthetic runs each, every run with a
 * runtime.wall_time_ns measurement bundle (candidate ~8 % slower, lognormal noise), unpaired (Welch t
 * interval on the logs). Reports the median of BENCH_COMPARE_REPEATS (5)
 * in-process calls (DuckDB view over 200 bundles + metric query + compareSamples + differential query),
 * the first call separately (DuckDB load), and record_comparison.
 */
import { createRandom } from "../../src/analysis/statistics/random.ts";
import { median, round, withTempFolder } from "./lib/measure.ts";
import { insertSyntheticRuns, syntheticProject } from "./lib/synthetic-runs.ts";

const perSide = Number(process.env.BENCH_COMPARE_RUNS ?? 100);
const repeats = Number(process.env.BENCH_COMPARE_REPEATS ?? 5);

export async function run(): Promise<Record<string, unknown>> {
  return withTempFolder("flameox-bench-compare-", async (folder) => {
    const services = await syntheticProject(folder);
    const random = createRandom(42);
    const noise = () => Math.exp(0.05 * random.nextGaussian());
    let started = performance.now();
    const baseline = await insertSyntheticRuns(
      services,
      Array.from({ length: perSide }, () => ({ wallTimeNs: 50e6 * noise() })),
    );
    const candidate = await insertSyntheticRuns(
      services,
      Array.from({ length: perSide }, () => ({ wallTimeNs: 54e6 * noise() })),
    );
    const setupMs = performance.now() - started;
    const baselineSet = services.runSets.freeze({ run_ids: baseline }).run_set_id;
    const candidateSet = services.runSets.freeze({ run_ids: candidate }).run_set_id;
    const times: number[] = [];
    let decision = "";
    for (let index = 0; index <= repeats; index += 1) {
      started = performance.now();
      const result = await services.comparisons.compare({ baseline: baselineSet, candidate: candidateSet, random_seed: index });
      times.push(performance.now() - started);
      decision = `${result.decision}/${result.validity}`;
    }
    started = performance.now();
    await services.comparisons.record({ baseline: baselineSet, candidate: candidateSet });
    const recordMs = performance.now() - started;
    services.close();
    return {
      runs_per_side: perSide,
      compare_first_ms: round(times[0]!),
      compare_median_ms: round(median(times.slice(1))),
      record_comparison_ms: round(recordMs),
      decision,
      setup_ms: round(setupMs),
    };
  });
}

if (import.meta.main) console.log(JSON.stringify(await run(), null, 2));
