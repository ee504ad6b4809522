import { describe, expect, test } from "bun:test";
import {
  normalCdf,
  normalQuantile,
  normalSurvival,
  studentTCdf,
  studentTQuantile,
} from "../../../../src/analysis/statistics/distributions.ts";

// Every expected number below was computed with SciPy 1.17.1 (scipy.stats.norm / t) while writing these
// tests, then pasted here; SciPy is not needed to run them.

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
