import { describe, expect, test } from "bun:test";
import { compareSamples } from "../../../../src/analysis/statistics/compare.ts";
import { minimumDetectableRatio, samplesToDetect } from "../../../../src/analysis/statistics/design-power.ts";
import { syntheticRuns } from "./noise-model.ts";

const design = { pairing: "paired" as const, confidence_level: 0.99, practical_threshold: 0.05 };

describe("the smallest detectable change of a design", () => {
  test("the rule calls the reported ratio regressed in 74–80 % of seeded simulations (quoted power 80 %)", () => {
    // The normal-theory approximation is slightly optimistic at few degrees of freedom; docs/statistics.md says so.
    for (const noise of [0.05, 0.1])
      for (const perSide of [5, 10, 20]) {
        const ratio = minimumDetectableRatio({ ...design, noise_cv: noise, samples_per_side: perSide });
        let regressed = 0;
        const seeds = 2_000;
        for (let seed = 0; seed < seeds; seed += 1) {
          const runs = syntheticRuns({
            seed: 77_000 + seed,
            perSide,
            workFactor: ratio,
            blocks: true,
            noise: { cv: noise, outlierProbability: 0, driftPerBlock: 0 },
          });
          if (compareSamples({ ...runs, pairing: "paired", polarity: "lower_is_better" }).decision === "regressed") regressed += 1;
        }
        expect(regressed / seeds).toBeGreaterThanOrEqual(0.74);
        expect(regressed / seeds).toBeLessThanOrEqual(0.8);
      }
  });

  test("more samples detect smaller changes; the defaults' figures", () => {
    const at = (perSide: number) => minimumDetectableRatio({ ...design, noise_cv: 0.1, samples_per_side: perSide });
    expect(at(10)).toBeLessThan(at(5));
    expect(at(10)).toBeCloseTo(1.263, 3);
    expect(at(5)).toBeCloseTo(1.49, 2);
    expect(at(1)).toBe(Number.POSITIVE_INFINITY);
    const needed = samplesToDetect({ ...design, noise_cv: 0.1 }, 1.2)!;
    expect(at(needed)).toBeLessThanOrEqual(1.2);
    expect(at(needed - 1)).toBeGreaterThan(1.2);
    expect(samplesToDetect({ ...design, noise_cv: 0.1 }, 1.0001)).toBeNull();
  });
});
