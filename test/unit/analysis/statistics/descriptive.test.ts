import { describe as group, expect, test } from "bun:test";
import {
  coefficientOfVariation,
  describe,
  detectOutliers,
  mean,
  median,
  medianAbsoluteDeviation,
  medianInPlace,
  quantile,
  robustCoefficientOfVariation,
  standardDeviation,
} from "../../../../src/analysis/statistics/descriptive.ts";
import { createRandom } from "../../../../src/analysis/statistics/random.ts";

// Expected numbers from NumPy/SciPy 1.17.1 (np.quantile default = type 7, np.std(ddof=1),
// scipy.stats.median_abs_deviation with and without scale="normal"), computed once and pasted here.
const values = [3.2, 1.5, 9.1, 4.4, 4.4, 7.8, 2.0, 5.5, 6.1, 30.0];

group("descriptive statistics", () => {
  test("match NumPy/SciPy on a small sample", () => {
    expect(median(values)).toBeCloseTo(4.95, 12);
    expect(mean(values)).toBeCloseTo(7.4, 12);
    expect(standardDeviation(values)).toBeCloseTo(8.291360965888934, 12);
    expect(medianAbsoluteDeviation(values)).toBeCloseTo(2.3, 12);
    expect(medianAbsoluteDeviation(values, { scaled: true })).toBeCloseTo(3.4099851025628842, 10);
    const expected = [1.5, 1.95, 3.5, 4.95, 11.189999999999992, 30.0];
    [0, 0.1, 0.25, 0.5, 0.9, 1].forEach((probability, index) => {
      expect(quantile(values, probability)).toBeCloseTo(expected[index] as number, 10);
    });
    expect(coefficientOfVariation(values)).toBeCloseTo(8.291360965888934 / 7.4, 12);
    expect(robustCoefficientOfVariation(values)).toBeCloseTo(3.4099851025628842 / 4.95, 10);
  });

  test("does not mutate its input", () => {
    const copy = [...values];
    median(values);
    quantile(values, 0.3);
    describe(values);
    expect(values).toEqual(copy);
  });

  test("quickselect median agrees with sorting on random, tied and tiny inputs", () => {
    const random = createRandom(11);
    for (let trial = 0; trial < 500; trial += 1) {
      const length = 1 + random.nextInt(40);
      const sample = Array.from({ length }, () => (trial % 3 === 0 ? random.nextInt(4) : random.nextGaussian()));
      const sorted = [...sample].sort((left, right) => left - right);
      const middle = length >>> 1;
      const expected = length % 2 === 1 ? (sorted[middle] as number) : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
      expect(medianInPlace(Float64Array.from(sample), length)).toBe(expected);
    }
  });

  test("outliers are flagged by a named method, not removed", () => {
    const report = detectOutliers(values);
    expect(report.method).toBe("tukey_fences_1.5_iqr");
    expect(report.indices).toEqual([9]);
    expect(detectOutliers(values, "tukey_fences_3_iqr").indices).toEqual([9]);
    expect(detectOutliers(values, "modified_z_score_3.5").indices).toEqual([9]);
    expect(detectOutliers([1, 1, 1, 1], "modified_z_score_3.5").indices).toEqual([]);
    const summary = describe(values);
    expect(summary.n).toBe(10);
    expect(summary.max).toBe(30);
    expect(summary.outliers.indices).toEqual([9]);
  });

  test("empty samples are refused where a value would be meaningless", () => {
    expect(() => median([])).toThrow(RangeError);
    expect(describe([]).n).toBe(0);
  });
});

group("the modified z-score on small samples of pure normal data", () => {
  // Why compare.ts lets outliers block a verdict only from 20 values: how often more than 20 % of n normal
  // values are flagged (docs/statistics.md quotes these rates). 50,000 seeded samples per size.
  test("flags more than 20 % of 5 values in about 6 % of samples, of 10 in about 0.9 %, of 20 in about 0.05 %", () => {
    const share = (n: number) => {
      const random = createRandom(1_000 + n);
      let blocked = 0;
      const samples = 50_000;
      for (let sample = 0; sample < samples; sample += 1) {
        const values = Array.from({ length: n }, () => random.nextGaussian());
        if (detectOutliers(values, "modified_z_score_3.5").indices.length / n > 0.2) blocked += 1;
      }
      return blocked / samples;
    };
    const five = share(5);
    const ten = share(10);
    const twenty = share(20);
    expect(five).toBeGreaterThan(0.05);
    expect(five).toBeLessThan(0.07);
    expect(ten).toBeGreaterThan(0.006);
    expect(ten).toBeLessThan(0.012);
    expect(twenty).toBeLessThan(0.001);
  });
});
