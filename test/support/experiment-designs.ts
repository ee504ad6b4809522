/**
 * The designs of the integration tests that assert statistics of real runs, and the machine noise they
 * were sized against. Unit tests replay each design on seeded synthetic data with this noise (and more),
 * which is how each real-run test's false-failure bound was obtained; keep both in step when a design
 * changes.
 *
 * Noise was measured on the shared 2-core machine under load average 4–8 (other engineers' builds and test
 * suites), with the pinned interpreter and `python -S`, reading user CPU time from wait4 as the broker does:
 * - user CPU time carries about ±3 ms of additive noise per process, because the kernel splits a process's
 *   exact CPU time into user and system in proportion to timer ticks (`python -S -c pass`: 0–15 ms user,
 *   while user + system varies by 0.6 ms);
 * - beyond that, 5–7 % multiplicative noise (robust CV of 40–150 runs of busy.py; extremes 0.81–1.41× the
 *   median); 3 of 150 base/more pairs had a log ratio beyond a modified z-score of 3.5 (the largest 4.5);
 * - py-spy's share of one of two equal functions in split.py: standard deviation 0.042 over 30 runs
 *   (range 0.41–0.62), because a descheduled process is sampled in whichever function it stopped.
 */
export const measuredNoise = {
  /** Lognormal σ of user CPU time per process, relative. */
  relativeCpu: 0.06,
  /** Additive σ of user CPU time per process, ns (the tick-based user/system split). */
  additiveCpuNs: 3_000_000,
  /** Standard deviation of one function's py-spy sample share between runs. */
  shareStandardDeviation: 0.042,
} as const;

/** CPU time of `python -S` start-up, ns (median of 40 runs). */
const startupNs = 7_000_000;

/**
 * analyze_scaling over scale.py's `linear` and `quadratic` shapes (test/integration/experiments/scaling.test.ts).
 * User CPU time per run, measured: linear ≈ 7 ms + 0.13 ms·n, quadratic ≈ 7 ms + 132 ns·n² ((2n)² steps).
 */
export const scalingGrowthDesign = {
  sizes: [250, 500, 1000, 2000, 4000],
  blocks: 3,
  linearCostNs: (size: number) => startupNs + 130_000 * size,
  quadraticCostNs: (size: number) => startupNs + 132 * size * size,
} as const;

/**
 * Hotspot growth over scale.py's `both` shape under py-spy at 1,000 Hz: linear_part does 1000·n steps and
 * quadratic_part n² steps (about 35 ns per step), interleaved so a late attach removes the same share of both.
 */
export const hotspotGrowthDesign = {
  sizes: [500, 1000, 2000, 4000],
  blocks: 3,
  samplesPerSecond: 1000,
  linearSeconds: (size: number) => 1000 * size * 35e-9,
  quadraticSeconds: (size: number) => size * size * 33e-9,
} as const;

/**
 * compare_run_sets over busy.py (test/integration/experiments/comparisons.test.ts): 30 randomized complete
 * blocks of base, same (identical work) and more (4× the iterations). Measured user CPU time: base ≈ 49 ms,
 * more ≈ 166 ms, a ratio of 3.4 (start-up is part of both).
 */
export const comparisonDesign = {
  blocks: 30,
  iterations: { base: 60, same: 60, more: 240 },
  practicalThreshold: 0.25,
  measuredRatio: 3.4,
} as const;

/**
 * The default-settings experiment of test/e2e/experiments.test.ts: loop.py with n = 1.5M (baseline) and
 * 3M (candidate, twice the work), blocks and statistics at their defaults. Measured user CPU time under load
 * average 14: 100 ms and 193 ms (ratio 1.94, interpreter start-up included), SD of the log ratio 0.037.
 * Replayed in test/unit/analysis/experiment-verdict-design.test.ts, which is where the e2e test's
 * false-failure bound comes from.
 */
export const defaultVerdictDesign = {
  iterations: { baseline: 1_500_000, candidate: 3_000_000 },
  cpuNs: { baseline: 100_000_000, candidate: 193_000_000 },
  /** Share of runs slowed by ×1.1–1.6 (3 of 150 measured pairs were beyond a modified z of 3.5). */
  outlierProbability: 0.02,
} as const;
