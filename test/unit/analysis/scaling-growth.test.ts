import { describe, expect, test } from "bun:test";
import { hotspotGrowth, scalingSeries } from "../../../src/analysis/scaling.ts";
import { createRandom } from "../../../src/analysis/statistics/random.ts";
import { hotspotGrowthDesign, measuredNoise, scalingGrowthDesign } from "../../support/experiment-designs.ts";

test("hotspotGrowth ranks the function whose self weight grows fastest first", () => {
  const sizes = [100, 200, 400, 800, 1600];
  const runSizes = new Map<string, number>();
  const weights = sizes.flatMap((size, index) => {
    const runs = [`r${index}a`, `r${index}b`];
    for (const run of runs) runSizes.set(run, size);
    return runs.flatMap((run) => [
      { run_id: run, frame_id: "fn_flat", function: "flat", file: "a.py", self_weight: 1000 },
      { run_id: run, frame_id: "fn_lin", function: "lin", file: "a.py", self_weight: 10 * size },
      { run_id: run, frame_id: "fn_quad", function: "quad", file: "a.py", self_weight: 0.01 * size * size },
    ]);
  });
  const ranking = hotspotGrowth(weights, runSizes);
  expect(ranking.map((entry) => entry.function)).toEqual(["quad", "lin", "flat"]);
  expect(ranking[0]!.exponent!).toBeCloseTo(2, 5);
  expect(ranking[1]!.exponent!).toBeCloseTo(1, 5);
  expect(ranking[0]!.largest_size_weight).toBeCloseTo(0.01 * 1600 * 1600, 5);
});

test("functions seen at fewer than three sizes are not ranked", () => {
  const runSizes = new Map([
    ["a", 1],
    ["b", 2],
    ["c", 3],
  ]);
  const ranking = hotspotGrowth(
    [
      { run_id: "a", frame_id: "fn_x", function: "x", file: null, self_weight: 1 },
      { run_id: "b", frame_id: "fn_x", function: "x", file: null, self_weight: 2 },
    ],
    runSizes,
  );
  expect(ranking).toEqual([]);
});

test("scalingSeries groups by series and size and fits each series", () => {
  const observations = [1, 2, 4, 8, 16].flatMap((size) => [
    { run_id: `l${size}`, size, series: "linear", cost: 5 + 3 * size },
    { run_id: `q${size}`, size, series: "quadratic", cost: 5 + size * size },
  ]);
  const series = scalingSeries(observations, 0.95);
  expect(series.map((entry) => entry.series)).toEqual(["linear", "quadratic"]);
  expect(series[0]!.fit.best_model).toBe("linear");
  expect(series[1]!.fit.best_model).toBe("quadratic");
  expect(series[0]!.points.map((point) => point.size)).toEqual([1, 2, 4, 8, 16]);
});

/**
 * The designs of test/integration/experiments/scaling.test.ts replayed on seeded synthetic runs: this is
 * where that test's false-failure bound comes from. Each seed draws every run the integration test makes,
 * through the same functions the service uses (scalingSeries, hotspotGrowth).
 */
describe("operating characteristics of the scaling integration test's designs", () => {
  const seeds = 10_000;

  test("O(n) and O(n²) stay more than ΔAICc 2 apart in every seed at twice the measured CPU-time noise", () => {
    const design = scalingGrowthDesign;
    const noise = { relative: 2 * measuredNoise.relativeCpu, additiveNs: 2 * measuredNoise.additiveCpuNs };
    let failures = 0;
    let smallestGap = Number.POSITIVE_INFINITY;
    for (let seed = 0; seed < seeds; seed += 1) {
      const random = createRandom(seed);
      const observations = (["linear", "quadratic"] as const).flatMap((shape) =>
        design.sizes.flatMap((size) =>
          Array.from({ length: design.blocks }, (_, block) => {
            const cost = shape === "linear" ? design.linearCostNs(size) : design.quadraticCostNs(size);
            const noisy = cost * Math.exp(noise.relative * random.nextGaussian()) + noise.additiveNs * random.nextGaussian();
            // User CPU time is never below a millisecond for an interpreter that started.
            return { run_id: `${shape}-${size}-${block}`, size, series: shape, cost: Math.max(1_000_000, noisy) };
          }),
        ),
      );
      const [linear, quadratic] = scalingSeries(observations, 0.95).map((series) => series.fit);
      const delta = (fit: typeof linear, model: string) => fit!.models.find((entry) => entry.model === model)!.delta_aicc;
      const gap = Math.min(delta(linear, "quadratic"), delta(quadratic, "linear"));
      smallestGap = Math.min(smallestGap, gap);
      const separated = gap > 2 && quadratic!.best_model === "quadratic" && ["linear", "n_log_n"].includes(String(linear!.best_model));
      if (!separated) failures += 1;
    }
    expect(failures).toBe(0);
    expect(smallestGap).toBeGreaterThan(2);
  });

  test("quadratic_part grows fastest in every seed under Poisson sampling with 30 % per-run jitter", () => {
    const design = hotspotGrowthDesign;
    const jitter = 0.3;
    let failures = 0;
    for (let seed = 0; seed < seeds; seed += 1) {
      const random = createRandom(seed);
      const runSizes = new Map<string, number>();
      const weights = design.sizes
        .flatMap((size) =>
          Array.from({ length: design.blocks }, (_, block) => {
            const run = `both-${size}-${block}`;
            runSizes.set(run, size);
            // A run's sampling rate wobbles as a whole, and each function's count wobbles on top of it.
            const runRate = design.samplesPerSecond * Math.exp(jitter * random.nextGaussian());
            const samples = (seconds: number) => poisson(random, seconds * runRate * Math.exp(jitter * random.nextGaussian()));
            return [
              {
                run_id: run,
                frame_id: "f_linear",
                function: "linear_part",
                file: "scale.py",
                self_weight: samples(design.linearSeconds(size)),
              },
              {
                run_id: run,
                frame_id: "f_quadratic",
                function: "quadratic_part",
                file: "scale.py",
                self_weight: samples(design.quadraticSeconds(size)),
              },
            ];
          }),
        )
        .flat();
      const ranking = hotspotGrowth(weights, runSizes);
      const exponent = (name: string) => ranking.find((entry) => entry.function === name)?.exponent ?? Number.NaN;
      if (ranking[0]?.function !== "quadratic_part" || !(exponent("quadratic_part") > exponent("linear_part"))) failures += 1;
    }
    expect(failures).toBe(0);
  });
});

/** A Poisson draw: Knuth's product method for small means, the normal approximation for large ones. */
function poisson(random: ReturnType<typeof createRandom>, mean: number): number {
  if (mean > 50) return Math.max(0, Math.round(mean + Math.sqrt(mean) * random.nextGaussian()));
  const limit = Math.exp(-mean);
  let count = 0;
  let product = random.nextFloat();
  while (product > limit) {
    count += 1;
    product *= random.nextFloat();
  }
  return count;
}
