/**
 * The default-settings experiment of test/e2e/experiments.test.ts replayed on seeded synthetic runs: its
 * design (the default blocks, twice the work), compared by the default rule, with the CPU-time noise measured
 * on this machine and with 1.5 times it. This is where that e2e test's false-failure bound comes from.
 */
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { compareSamples, type Sample } from "../../../src/analysis/statistics/compare.ts";
import { createRandom } from "../../../src/analysis/statistics/random.ts";
import { experimentStatisticsDefaults } from "../../../src/config/experiment-config-schema.ts";
import { defaultVerdictDesign, measuredNoise } from "../../support/experiment-designs.ts";

// 200,000 comparisons of 10 pairs.
setDefaultTimeout(120_000);

const seeds = 100_000;

function failures(noiseScale: number): number {
  let failed = 0;
  for (let seed = 0; seed < seeds; seed += 1) {
    const random = createRandom(seed);
    const draw = (cost: number) => {
      let value = cost * Math.exp(noiseScale * measuredNoise.relativeCpu * random.nextGaussian());
      value += noiseScale * measuredNoise.additiveCpuNs * random.nextGaussian();
      if (random.nextFloat() < noiseScale * defaultVerdictDesign.outlierProbability) value *= 1.1 + 0.5 * random.nextFloat();
      // User CPU time is never below a millisecond for an interpreter that started.
      return Math.max(1_000_000, value);
    };
    const baseline: Sample[] = [];
    const candidate: Sample[] = [];
    for (let block = 1; block <= experimentStatisticsDefaults.blocks; block += 1) {
      baseline.push({ run_id: `b${block}`, value: draw(defaultVerdictDesign.cpuNs.baseline), block: `b${block}` });
      candidate.push({ run_id: `c${block}`, value: draw(defaultVerdictDesign.cpuNs.candidate), block: `b${block}` });
    }
    const result = compareSamples({ baseline, candidate, pairing: "auto", polarity: "lower_is_better" });
    if (result.decision !== "regressed" || result.ci === null || !(result.ci.lower > 1)) failed += 1;
  }
  return failed;
}

describe("operating characteristics of the default-settings experiment on real runs", () => {
  // 0 of 100,000 bounds the false-failure rate below 3 in 100,000 (rule of three, 95 %); 2 of 100,000 at
  // 1.5 times the noise (both blocked as noisy by seeds with three slow outliers) keep it below 1 in 10,000 there too.
  test("twice the work is regressed with an interval above 1 in every seed at the measured noise, all but 2 in 100,000 at 1.5 times it", () => {
    expect(failures(1)).toBe(0);
    expect(failures(1.5)).toBe(2);
  });
});
