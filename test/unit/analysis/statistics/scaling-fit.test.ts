import { describe, expect, test } from "bun:test";
import { analyzeScaling, fastestGrowing, type ScalingPoint } from "../../../../src/analysis/statistics/scaling-fit.ts";
import { createRandom } from "../../../../src/analysis/statistics/random.ts";

/** cost(n) with 5 % lognormal noise, three repetitions per size. */
function workload(seed: number, cost: (size: number) => number, sizes: number[], cv = 0.05): ScalingPoint[] {
  const random = createRandom(seed);
  const points: ScalingPoint[] = [];
  for (const size of sizes)
    for (let repeat = 0; repeat < 3; repeat += 1) points.push({ size, cost: cost(size) * Math.exp(cv * random.nextGaussian()) });
  return points;
}

const doubling = [1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 64_000];
const wide = [1_024, 4_096, 16_384, 65_536, 262_144, 1_048_576];
const linear = (size: number) => 200_000 + 50 * size;
const quadratic = (size: number) => 200_000 + 0.01 * size * size;

describe("analyzeScaling", () => {
  test("tells O(n) from O(n²) with noise, every seed of 50", () => {
    for (let seed = 0; seed < 50; seed += 1) {
      const linearFit = analyzeScaling(workload(seed, linear, doubling));
      const quadraticFit = analyzeScaling(workload(seed + 500, quadratic, doubling));
      expect(linearFit.best_model === "linear" || linearFit.best_model === "n_log_n").toBe(true);
      expect(quadraticFit.best_model).toBe("quadratic");
      expect(quadraticFit.distinguishable).toBe(true);
      expect((quadraticFit.exponent_estimate?.value ?? 0) > (linearFit.exponent_estimate?.value ?? 0)).toBe(true);
    }
  });

  test("tells n log n from n over a 1,000× size range", () => {
    for (let seed = 0; seed < 50; seed += 1) {
      expect(analyzeScaling(workload(seed, (size) => 10_000 + 50 * size, wide)).best_model).toBe("linear");
      expect(analyzeScaling(workload(seed, (size) => 10_000 + 8 * size * Math.log(size), wide)).best_model).toBe("n_log_n");
    }
  });

  test("a pure power law recovers its exponent within the CI", () => {
    const analysis = analyzeScaling(workload(3, (size) => 0.5 * size ** 2, doubling));
    const exponent = analysis.exponent_estimate;
    expect(exponent).not.toBeNull();
    expect(exponent!.lower).toBeLessThan(2);
    expect(exponent!.upper).toBeGreaterThan(2);
    expect(analysis.models.find((model) => model.model === "quadratic")?.r_squared).toBeGreaterThan(0.99);
  });

  test("reports why it cannot decide", () => {
    const twoSizes = analyzeScaling([
      { size: 10, cost: 1 },
      { size: 20, cost: 2 },
      { size: 20, cost: 2.1 },
    ]);
    expect(twoSizes.best_model).toBeNull();
    expect(twoSizes.reasons.map((reason) => reason.code)).toContain("too_few_sizes");
    const narrow = analyzeScaling(workload(1, linear, [1_000, 1_200, 1_400, 1_600]));
    expect(narrow.reasons.map((reason) => reason.code)).toContain("narrow_size_range");
    const invalid = analyzeScaling([...workload(1, linear, doubling), { size: 0, cost: 1 }]);
    expect(invalid.reasons.map((reason) => reason.code)).toContain("invalid_points");
  });
});

describe("fastestGrowing", () => {
  test("ranks series by fitted exponent, unfittable last", () => {
    const ranking = fastestGrowing([
      { key: "linear", points: workload(1, linear, doubling) },
      { key: "quadratic", points: workload(2, quadratic, doubling) },
      { key: "n-log-n", points: workload(3, (size) => 200_000 + 8 * size * Math.log(size), doubling) },
      { key: "single", points: [{ size: 1, cost: 1 }] },
    ]);
    expect(ranking.map((entry) => entry.key)).toEqual(["quadratic", "n-log-n", "linear", "single"]);
    expect(ranking[0]?.best_model).toBe("quadratic");
    expect(ranking[3]?.exponent).toBeNull();
  });
});
