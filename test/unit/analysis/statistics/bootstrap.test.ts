import { describe, expect, test, setDefaultTimeout } from "bun:test";
import { bootstrapMedianPairedLogRatio, bootstrapRatioOfMedians } from "../../../../src/analysis/statistics/bootstrap.ts";

// Reference intervals with many resamples. The suite's default per-test deadline is 30 s (scripts/test-deadline.ts).
setDefaultTimeout(60_000);

// 15 paired timings (seeded NumPy draws, rounded). SciPy 1.17.1 reference, 200,000 resamples:
//   scipy.stats.bootstrap((b, c), lambda b, c: median(log(c/b)), paired=True, method="BCa")  → exp: [1.04872491, 1.14185691]
//   scipy.stats.bootstrap((b, c), lambda b, c: log(median(c)) − log(median(b)), method="BCa") → exp: [1.03084566, 1.11498198]
//   same, method="percentile"                                                               → exp: [1.03294066, 1.12240002]
// Medians of 15 values live on a lattice, so with this many resamples the bounds land on the same order
// statistics as SciPy's, which makes an exact comparison meaningful.
const baseline = [
  100.005, 101.202, 98.909, 96.5, 98.198, 96.111, 100.241, 105.507, 98.05, 97.549, 101.979, 101.438, 100.423, 96.347, 99.883,
];
const candidate = [
  114.427, 103.333, 108.017, 100.495, 103.616, 100.794, 109.226, 103.731, 112.026, 111.387, 109.489, 97.449, 107.58, 110.249, 111.145,
];

describe("bootstrap confidence intervals", () => {
  test("BCa and percentile bounds agree with SciPy", () => {
    const paired = bootstrapMedianPairedLogRatio(baseline, candidate, { seed: 1, resamples: 200_000 });
    expect(paired.method).toBe("bootstrap_bca_median_paired_log_ratio");
    expect(paired.estimate).toBeCloseTo(1.0736426126947705, 12);
    expect(paired.lower).toBeCloseTo(1.04872491, 7);
    expect(paired.upper).toBeCloseTo(1.14185691, 7);
    const unpaired = bootstrapRatioOfMedians(baseline, candidate, { seed: 1, resamples: 200_000 });
    expect(unpaired.method).toBe("bootstrap_bca_ratio_of_medians");
    expect(unpaired.lower).toBeCloseTo(1.03084566, 7);
    expect(unpaired.upper).toBeCloseTo(1.11498198, 7);
    const percentile = bootstrapRatioOfMedians(baseline, candidate, { seed: 1, resamples: 200_000, interval: "percentile" });
    expect(percentile.method).toBe("bootstrap_percentile_ratio_of_medians");
    expect(percentile.lower).toBeCloseTo(1.03294066, 7);
    expect(percentile.upper).toBeCloseTo(1.12240002, 7);
  });

  test("same seed reproduces the interval bit for bit; another seed gives another", () => {
    const noisyBaseline = baseline.map((value, index) => value * (1 + 0.013 * Math.sin(index * 7.1)));
    const first = bootstrapRatioOfMedians(noisyBaseline, candidate, { seed: 123, resamples: 2_000 });
    const again = bootstrapRatioOfMedians(noisyBaseline, candidate, { seed: 123, resamples: 2_000 });
    expect(again).toEqual(first);
    const seeds = [124, 125, 126, 127].map((seed) => bootstrapRatioOfMedians(noisyBaseline, candidate, { seed, resamples: 2_000 }));
    expect(seeds.some((other) => other.lower !== first.lower || other.upper !== first.upper)).toBe(true);
    const pairedFirst = bootstrapMedianPairedLogRatio(baseline, candidate, { seed: 9, resamples: 2_000 });
    expect(bootstrapMedianPairedLogRatio(baseline, candidate, { seed: 9, resamples: 2_000 })).toEqual(pairedFirst);
  });

  test("constant log ratios collapse to a degenerate interval at the estimate", () => {
    const result = bootstrapMedianPairedLogRatio([1, 2, 3, 4], [2, 4, 6, 8], { seed: 1, resamples: 500 });
    expect(result.interval).toBe("degenerate");
    expect(result.lower).toBe(2);
    expect(result.upper).toBe(2);
  });

  test("the interval brackets the estimate and the defaults are 10,000 resamples at 95 %", () => {
    const result = bootstrapRatioOfMedians(baseline, candidate, { seed: 4 });
    expect(result.resamples).toBe(10_000);
    expect(result.level).toBe(0.95);
    expect(result.lower).toBeLessThanOrEqual(result.estimate);
    expect(result.upper).toBeGreaterThanOrEqual(result.estimate);
  });

  test("refuses inputs where a ratio is undefined", () => {
    expect(() => bootstrapRatioOfMedians([1, 0, 2], [1, 2, 3], { seed: 1 })).toThrow(RangeError);
    expect(() => bootstrapMedianPairedLogRatio([1, 2], [1, 2, 3], { seed: 1 })).toThrow(RangeError);
    expect(() => bootstrapRatioOfMedians([1, 2], [1, 2], { seed: 1, confidence_level: 1 })).toThrow(RangeError);
  });
});
