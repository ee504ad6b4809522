/**
 * analyze_scaling over a frozen run set of BENCH_SCALING_SIZES (50) sizes × BENCH_SCALING_REPEATS (2)
 * synthetic runs (cost = 5 ms + n² ns with 3 % noise), each with a runtime.wall_time_ns bundle; median of
 * BENCH_SCALING_CALLS (5) in-process calls after a first one (DuckDB load), plus the best model found.
 */
import { createRandom } from "../../src/analysis/statistics/random.ts";
import { median, round, withTempFolder } from "./lib/measure.ts";
import { insertSyntheticRuns, syntheticProject } from "./lib/synthetic-runs.ts";

const sizes = Number(process.env.BENCH_SCALING_SIZES ?? 50);
const repetitions = Number(process.env.BENCH_SCALING_REPEATS ?? 2);
const calls = Number(process.env.BENCH_SCALING_CALLS ?? 5);

export async function run(): Promise<Record<string, unknown>> {
  return withTempFolder("flameox-bench-scaling-", async (folder) => {
    const services = await syntheticProject(folder);
    const random = createRandom(7);
    const runs = Array.from({ length: sizes }, (_, index) => (index + 1) * 100).flatMap((n) =>
      Array.from({ length: repetitions }, () => ({
        parameters: { n },
        wallTimeNs: (5e6 + n * n) * (1 + 0.03 * (random.nextFloat() * 2 - 1)),
      })),
    );
    const ids = await insertSyntheticRuns(services, runs);
    const runSet = services.runSets.freeze({ run_ids: ids }).run_set_id;
    const times: number[] = [];
    let best = "";
    for (let index = 0; index <= calls; index += 1) {
      const started = performance.now();
      const result = await services.scaling.analyze({ run_set_id: runSet });
      times.push(performance.now() - started);
      best = `${result.series[0]?.fit.best_model ?? "none"}${result.series[0]?.fit.distinguishable ? "" : " (indistinguishable)"}`;
    }
    services.close();
    return {
      sizes,
      runs: ids.length,
      scaling_first_ms: round(times[0]!),
      scaling_median_ms: round(median(times.slice(1))),
      best_model: best,
    };
  });
}

if (import.meta.main) console.log(JSON.stringify(await run(), null, 2));
