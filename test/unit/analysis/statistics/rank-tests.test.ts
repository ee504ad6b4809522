import { describe, expect, test } from "bun:test";
import { mannWhitneyU, wilcoxonSignedRank } from "../../../../src/analysis/statistics/rank-tests.ts";
import {
  normalCdf,
  normalQuantile,
  normalSurvival,
  studentTCdf,
  studentTQuantile,
} from "../../../../src/analysis/statistics/distributions.ts";

// Every expected number below was computed with SciPy 1.17.1 (scipy.stats.mannwhitneyu / wilcoxon /
// norm / t) on the same data while writing these tests, then pasted here; SciPy is not needed to run them.

describe("Mann–Whitney U", () => {
  test("exact, no ties (SciPy method='exact')", () => {
    const result = mannWhitneyU([19, 22, 16, 29, 24], [20, 11, 17, 12]);
    expect(result.method).toBe("mann_whitney_u_exact_two_sided");
    expect(result.statistic).toBe(17);
    expect(result.p_value).toBeCloseTo(0.1111111111111111, 14);
  });

  const first = [3.1, 4.7, 2.2, 5.9, 6.3, 1.8, 7.4, 8.8, 0.9, 5.1, 4.05, 6.6, 7.9, 2.75, 3.3];
  const second = [6.2, 7.15, 9.4, 8.1, 5.5, 10.2, 11.7, 6.9, 7.7, 12.3, 9.9, 8.45, 4.4, 10.8, 13.1, 9.05, 7.35, 11.1];

  test("exact at 15 vs 18 and the continuity-corrected normal approximation on the same data", () => {
    const exact = mannWhitneyU(first, second);
    expect(exact.method).toBe("mann_whitney_u_exact_two_sided");
    expect(exact.statistic).toBe(32);
    expect(exact.p_value).toBeCloseTo(7.55660910091335e-5, 15);
    const approximate = mannWhitneyU(first, second, { method: "normal_approximation" });
    expect(approximate.method).toBe("mann_whitney_u_normal_approximation_two_sided");
    expect(approximate.p_value).toBeCloseTo(0.0002106452920153719, 14);
  });

  test("ties switch to the normal approximation with tie correction (SciPy use_continuity=True)", () => {
    const result = mannWhitneyU([1, 2, 2, 3, 3, 3, 4, 5, 6, 7, 8, 8, 9], [3, 4, 4, 5, 6, 6, 7, 8, 9, 9, 10, 11, 12, 12]);
    expect(result.method).toBe("mann_whitney_u_normal_approximation_two_sided");
    expect(result.tie_correction).toBe(true);
    expect(result.statistic).toBe(42.5);
    expect(result.p_value).toBeCloseTo(0.019284023067100375, 13);
  });

  test("large samples use the approximation and keep tiny p-values accurate", () => {
    const low = Array.from({ length: 26 }, (_, index) => index + 1);
    const high = [27.5, ...Array.from({ length: 27 }, (_, index) => index + 28)];
    const result = mannWhitneyU(low, high);
    expect(result.method).toBe("mann_whitney_u_normal_approximation_two_sided");
    expect(result.statistic).toBe(0);
    expect(result.p_value / 3.116713413595174e-10).toBeCloseTo(1, 10);
  });

  test("identical samples give p = 1 and symmetric inputs give symmetric statistics", () => {
    expect(mannWhitneyU([5, 5, 5], [5, 5, 5]).p_value).toBe(1);
    const forward = mannWhitneyU([1, 2, 3], [4, 5, 6]);
    const backward = mannWhitneyU([4, 5, 6], [1, 2, 3]);
    expect(forward.p_value).toBe(backward.p_value);
    expect(forward.statistic + backward.statistic).toBe(9);
  });
});

describe("Wilcoxon signed-rank", () => {
  test("exact on paired samples (SciPy wilcoxon(y − x, method='exact'))", () => {
    const x = [1.83, 0.5, 1.62, 2.48, 1.68, 1.88, 1.55, 3.06, 1.3];
    const y = [0.878, 0.647, 0.598, 2.05, 1.06, 1.29, 1.06, 3.14, 1.29];
    const result = wilcoxonSignedRank(x, y);
    expect(result.method).toBe("wilcoxon_signed_rank_exact_two_sided");
    expect(result.statistic).toBe(5);
    expect(result.p_value).toBeCloseTo(0.0390625, 15);
  });

  const differences = [
    0.12, -0.05, 0.31, 0.27, -0.11, 0.44, 0.08, 0.19, -0.02, 0.36, 0.23, 0.15, -0.09, 0.29, 0.41, 0.06, 0.33, -0.14, 0.25, 0.38,
  ];

  test("exact at n = 20 and the corrected approximation on the same data", () => {
    const exact = wilcoxonSignedRank(differences);
    expect(exact.statistic).toBe(22);
    expect(exact.p_value).toBeCloseTo(0.0010166168212890625, 16);
    const approximate = wilcoxonSignedRank(differences, undefined, { method: "normal_approximation" });
    expect(approximate.p_value).toBeCloseTo(0.002070386531132613, 14);
  });

  test("zeros are dropped and ties corrected (SciPy zero_method='wilcox', correction=True)", () => {
    const result = wilcoxonSignedRank([0.5, -1, 2, 2, -3, 4, 5, 5, 6, -0.5, 0, 1.5]);
    expect(result.method).toBe("wilcoxon_signed_rank_normal_approximation_two_sided");
    expect(result.n_effective).toBe(11);
    expect(result.statistic).toBe(11.5);
    expect(result.p_value).toBeCloseTo(0.0614975123616831, 13);
  });

  test("with five pairs the smallest exact two-sided p is 2/32", () => {
    expect(wilcoxonSignedRank([0.1, 0.2, 0.3, 0.4, 0.5]).p_value).toBe(0.0625);
    expect(wilcoxonSignedRank([0, 0, 0]).p_value).toBe(1);
  });
});

describe("distribution functions (SciPy norm / t)", () => {
  test("normal tails and quantiles", () => {
    expect(normalQuantile(0.025)).toBeCloseTo(-1.9599639845400545, 12);
    expect(normalQuantile(0.975)).toBeCloseTo(1.9599639845400545, 12);
    expect(normalQuantile(1e-10)).toBeCloseTo(-6.361340902404056, 10);
    expect(normalSurvival(5) / 2.866515718791933e-7).toBeCloseTo(1, 12);
    expect(normalSurvival(1.2)).toBeCloseTo(0.11506967022170822, 15);
    expect(normalCdf(-1.2)).toBeCloseTo(0.11506967022170822, 15);
  });

  test("Student t quantiles", () => {
    expect(studentTQuantile(0.975, 3)).toBeCloseTo(3.1824463052837078, 9);
    expect(studentTQuantile(0.975, 30)).toBeCloseTo(2.0422724563012378, 9);
    expect(studentTCdf(0, 5)).toBeCloseTo(0.5, 15);
  });
});
