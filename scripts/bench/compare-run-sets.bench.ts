/**
 * compare_run_sets over two run sets of BENCH_COMPARE_RUNS (100) synthetic runs each, every run with a
 * runtime.wall_time_ns measurement bundle (candidate ~8 % slower, lognormal noise), unpaired (Welch t
 * interval on the logs). The project is prepared once; then a child process
 * per build opens it through that build's `Services` and calls compare BENCH_COMPARE_REPEATS (9) times
 * after a first call (DuckDB load, 200 bundles read), seeds 0..9: median wall and CPU time (the process's,
 * DuckDB's threads included) of the warm calls, and the first call. The reference is the previous flameox's
 * source tree (lib/previous-flameox.ts) in the same run, on the same project; its results are compared with
 * this build's seed by seed (`identical_to_previous`). record_comparison is timed once in-process.
 */
import { join } from "node:path";
import { createRandom } from "../../src/analysis/statistics/random.ts";
import { load1, measure, median, repositoryRoot, round, withTempFolder } from "./lib/measure.ts";
import { previousFlameox } from "./lib/previous-flameox.ts";
import { insertSyntheticRuns, syntheticProject } from "./lib/synthetic-runs.ts";

const perSide = Number(process.env.BENCH_COMPARE_RUNS ?? 100);
const repeats = Number(process.env.BENCH_COMPARE_REPEATS ?? 9);

type ChildFigures = { first_ms: number; ms: number[]; cpu_ms: number[]; results: unknown[] };

async function timeIn(
  sourceRoot: string,
  project: string,
  baselineSet: string,
  candidateSet: string,
): Promise<ChildFigures | { error: string }> {
  const child = await measure(
    [
      join(repositoryRoot, "node_modules", ".bin", "bun"),
      join(import.meta.dir, "lib", "compare-in-process.ts"),
      sourceRoot,
      project,
      baselineSet,
      candidateSet,
      String(repeats),
    ],
    { cwd: repositoryRoot },
  );
  if (child.exitCode !== 0) return { error: child.stderrTail.slice(-600) };
  return JSON.parse(child.stdout) as ChildFigures;
}

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
    started = performance.now();
    const recorded = await services.comparisons.record({ baseline: baselineSet, candidate: candidateSet });
    const recordMs = performance.now() - started;
    services.close();
    const figures: Record<string, unknown> = {
      runs_per_side: perSide,
      setup_ms: round(setupMs),
      record_comparison_first_ms: round(recordMs),
      decision: `${(recorded as { decision?: string }).decision ?? ""}`,
      load1_before: load1(),
    };
    const current = await timeIn(repositoryRoot, folder, baselineSet, candidateSet);
    if ("error" in current) return { ...figures, error: current.error };
    Object.assign(figures, {
      compare_first_ms: round(current.first_ms),
      compare_median_ms: round(median(current.ms)),
      compare_median_cpu_ms: round(median(current.cpu_ms)),
    });
    const previous = previousFlameox();
    if (!("commit" in previous)) return { ...figures, previous_error: previous.error };
    const before = await timeIn(join(previous.binary, "..", ".."), folder, baselineSet, candidateSet);
    if ("error" in before) return { ...figures, previous_error: before.error };
    Object.assign(figures, {
      previous_commit: previous.commit,
      previous_compare_first_ms: round(before.first_ms),
      previous_compare_median_ms: round(median(before.ms)),
      previous_compare_median_cpu_ms: round(median(before.cpu_ms)),
      ratio_previous_over_current: round(median(before.ms) / median(current.ms), 2),
      cpu_ratio_previous_over_current: round(median(before.cpu_ms) / median(current.cpu_ms), 2),
      identical_to_previous: JSON.stringify(before.results) === JSON.stringify(current.results),
      load1_after: load1(),
    });
    return figures;
  });
}

if (import.meta.main) console.log(JSON.stringify(await run(), null, 2));
