import { describe, expect, test } from "bun:test";
import { pairedLogRatioInterval, welchLogRatioInterval } from "../../../../src/analysis/statistics/log-ratio-interval.ts";

// Critical values from printed Student t tables: t(0.995, 4) = 4.604, t(0.975, 4) = 2.776.
// The expected intervals below are worked by hand from the definitions, not by the code under test.

describe("t intervals of the log ratio", () => {
  test("paired: mean of the log ratios ± t(n − 1)·s/√n, mapped back with exp", () => {
    const logRatios = [0.1, 0.2, 0.15, 0.05, 0.25];
    const baseline = [100, 200, 300, 400, 500];
    const candidate = baseline.map((value, index) => value * Math.exp(logRatios[index]!));
    // mean 0.15; s² = (0.0025 + 0.0025 + 0 + 0.01 + 0.01)/4 = 0.00625; se = √(0.00625/5) = 0.0353553
    const interval = pairedLogRatioInterval(baseline, candidate, 0.99);
    expect(interval.method).toBe("student_t_paired_log_ratio");
    expect(interval.estimator).toBe("geometric_mean_of_paired_ratios");
    expect(interval.degrees_of_freedom).toBe(4);
    expect(interval.estimate).toBeCloseTo(Math.exp(0.15), 12);
    expect(interval.log_standard_error).toBeCloseTo(0.0353553, 6);
    expect(interval.lower).toBeCloseTo(Math.exp(0.15 - 4.604 * 0.0353553), 4);
    expect(interval.upper).toBeCloseTo(Math.exp(0.15 + 4.604 * 0.0353553), 4);
    const at95 = pairedLogRatioInterval(baseline, candidate, 0.95);
    expect(at95.lower).toBeCloseTo(Math.exp(0.15 - 2.776 * 0.0353553), 4);
    // t = 0.15/0.0353553 = 4.243 on 4 df lies between t(0.99) = 3.747 and t(0.995) = 4.604: 0.01 < p < 0.02.
    expect(interval.p_value).toBeGreaterThan(0.01);
    expect(interval.p_value).toBeLessThan(0.02);
  });

  test("unpaired: Welch's standard error and Welch–Satterthwaite degrees of freedom", () => {
    // log values: baseline 0, 0.1, 0.2 (var 0.01); candidate 0.5, 0.7, 0.9, 1.1 (var 0.0666…).
    const baseline = [0, 0.1, 0.2].map(Math.exp);
    const candidate = [0.5, 0.7, 0.9, 1.1].map(Math.exp);
    const interval = welchLogRatioInterval(baseline, candidate, 0.95);
    const shareBaseline = 0.01 / 3;
    const shareCandidate = 0.2 / 3 / 4;
    const degrees = (shareBaseline + shareCandidate) ** 2 / (shareBaseline ** 2 / 2 + shareCandidate ** 2 / 3);
    expect(interval.method).toBe("welch_t_log_ratio");
    expect(interval.estimate).toBeCloseTo(Math.exp(0.8 - 0.1), 12);
    expect(interval.log_standard_error).toBeCloseTo(Math.sqrt(shareBaseline + shareCandidate), 12);
    expect(interval.degrees_of_freedom).toBeCloseTo(degrees, 12);
    // 0.02² / ((0.01/3)²/2 + (0.0666…/4)²/3) = 0.0004 / 9.8148e-5
    expect(interval.degrees_of_freedom).toBeCloseTo(4.0755, 3);
  });

  test("constant ratios collapse the interval onto the estimate", () => {
    const interval = pairedLogRatioInterval([10, 20, 30], [20, 40, 60], 0.99);
    expect(interval.lower).toBeCloseTo(2, 12);
    expect(interval.upper).toBeCloseTo(2, 12);
    expect(interval.p_value).toBeLessThan(1e-20);
    const identical = pairedLogRatioInterval([10, 20], [10, 20], 0.99);
    expect([identical.lower, identical.estimate, identical.upper, identical.p_value]).toEqual([1, 1, 1, 1]);
  });

  test("refuses inputs without an interval or a ratio", () => {
    expect(() => pairedLogRatioInterval([1], [2], 0.99)).toThrow(RangeError);
    expect(() => welchLogRatioInterval([1, 2], [3], 0.99)).toThrow(RangeError);
    expect(() => pairedLogRatioInterval([1, 0], [2, 3], 0.99)).toThrow(RangeError);
    expect(() => pairedLogRatioInterval([1, 2], [2, 3], 1)).toThrow(RangeError);
  });
});
