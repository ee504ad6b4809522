import { describe, expect, test, setDefaultTimeout } from "bun:test";
import { compareSamples, deriveValidity, type Sample } from "../../../../src/analysis/statistics/compare.ts";
import { quietMachine, syntheticRuns } from "./noise-model.ts";

// Hundreds of seeded comparisons. The suite's default per-test deadline is 30 s (scripts/test-deadline.ts).
setDefaultTimeout(60_000);

describe("compareSamples on synthetic noise", () => {
  for (const blocks of [false, true]) {
    const pairing = blocks ? "paired" : "unpaired";

    // Power and false-positive rate over effect × samples × noise: decision-rule.test.ts and docs/statistics.md.
    test(`${pairing}: twice the work with 5 per side at 10 % lognormal noise is regressed, its interval above 1, in 20 of 20 seeds`, () => {
      let regressed = 0;
      for (let seed = 0; seed < 20; seed += 1) {
        const noise = { cv: 0.1, outlierProbability: 0, driftPerBlock: 0.005 };
        const runs = syntheticRuns({ seed: 2_000 + seed, perSide: 5, workFactor: 2, blocks, noise });
        const result = compareSamples({ ...runs, pairing, polarity: "lower_is_better" });
        if (result.decision === "regressed" && result.ci !== null && result.ci.lower > 1) regressed += 1;
      }
      expect(regressed).toBe(20);
    });

    test(`${pairing}: three samples per side is inconclusive and says too_few_samples`, () => {
      const runs = syntheticRuns({ seed: 4_000, perSide: 3, workFactor: 1.5, blocks, noise: quietMachine });
      const result = compareSamples({ ...runs, pairing, polarity: "lower_is_better" });
      expect(result.decision).toBe("inconclusive");
      expect(result.reasons.map((reason) => reason.code)).toContain("too_few_samples");
      expect(result.estimate).not.toBeNull();
      expect(result.ci).not.toBeNull();
    });
  }

  test("the same input gives the same result; the estimator, interval and test are named", () => {
    const runs = syntheticRuns({ seed: 7, perSide: 12, workFactor: 1.1, blocks: true });
    const first = compareSamples({ ...runs, pairing: "paired", polarity: "lower_is_better" });
    expect(compareSamples({ ...runs, pairing: "paired", polarity: "lower_is_better" })).toEqual(first);
    expect(first.estimand).toBe("ratio_candidate_over_baseline");
    expect(first.estimator).toBe("geometric_mean_of_paired_ratios");
    expect(first.ci?.method).toBe("student_t_paired_log_ratio");
    expect(first.ci?.level).toBe(0.99);
    expect(first.ci?.degrees_of_freedom).toBe(11);
    expect(first.test).toBe("paired_t_test_log_ratio_two_sided");
    expect(first.decision_rule).toBe("t_interval_of_log_ratio_beyond_practical_threshold.v2");
    expect(first.counts.pairs).toBe(12);
    const unpaired = compareSamples({ ...runs, pairing: "unpaired", polarity: "lower_is_better" });
    expect(unpaired.estimator).toBe("ratio_of_geometric_means");
    expect(unpaired.ci?.method).toBe("welch_t_log_ratio");
    expect(unpaired.test).toBe("welch_t_test_log_ratio_two_sided");
    expect(unpaired.counts.pairs).toBeNull();
  });
});

describe("compareSamples: decision rule details", () => {
  const quiet = (workFactor: number, blocks = false, perSide = 20) =>
    syntheticRuns({ seed: 11, perSide, workFactor, blocks, noise: quietMachine });

  test("polarity mirrors: faster is improved when lower is better, regressed when higher is better", () => {
    const runs = quiet(0.8);
    expect(compareSamples({ ...runs, pairing: "unpaired", polarity: "lower_is_better" }).decision).toBe("improved");
    expect(compareSamples({ ...runs, pairing: "unpaired", polarity: "higher_is_better" }).decision).toBe("regressed");
  });

  test("neutral polarity never calls a change improved or regressed but reports its direction", () => {
    const result = compareSamples({ ...quiet(1.3), pairing: "unpaired", polarity: "neutral" });
    expect(result.decision).toBe("inconclusive");
    expect(result.direction).toBe("increase");
    expect(result.reasons.map((reason) => reason.code)).toEqual(["change_without_polarity"]);
  });

  test("a real but sub-threshold change is equivalent; a change straddling the threshold is inconclusive", () => {
    const small = compareSamples({ ...quiet(1.01, true, 30), pairing: "paired", polarity: "lower_is_better" });
    expect(small.decision).toBe("equivalent");
    expect(small.reasons[0]?.code).toBe("ci_within_threshold");
    const straddling = compareSamples({ ...quiet(1.05, true, 30), pairing: "paired", polarity: "lower_is_better" });
    expect(straddling.decision).toBe("inconclusive");
    expect(straddling.reasons[0]?.code).toBe("ci_spans_threshold");
  });

  test("five pairs are enough for a verdict on a large change (the exact signed-rank test could not go below p = 0.0625)", () => {
    const baseline = [100, 101, 99, 102, 98].map((value, index) => ({ run_id: `b${index}`, value, block: `k${index}` }));
    const candidate = [151, 149, 150, 152, 148].map((value, index) => ({ run_id: `c${index}`, value, block: `k${index}` }));
    const result = compareSamples({ baseline, candidate, pairing: "paired", polarity: "lower_is_better" });
    expect(result.ci!.lower).toBeGreaterThan(1.4);
    expect(result.decision).toBe("regressed");
    expect(result.reasons.map((reason) => reason.code)).toEqual(["ci_beyond_threshold"]);
    expect(result.p_value!).toBeLessThan(0.01);
  });

  test("any failed trial blocks a verdict by default and counts are reported", () => {
    const result = compareSamples({
      ...quiet(1.5),
      pairing: "unpaired",
      polarity: "lower_is_better",
      failed_counts: { baseline: 0, candidate: 1 },
      excluded: { baseline: 2, candidate: 2 },
    });
    expect(result.decision).toBe("inconclusive");
    expect(result.reasons.map((reason) => reason.code)).toContain("failed_trials");
    expect(result.counts).toEqual({
      attempted: { baseline: 22, candidate: 23 },
      eligible: { baseline: 20, candidate: 20 },
      failed: { baseline: 0, candidate: 1 },
      excluded: { baseline: 2, candidate: 2 },
      pairs: null,
    });
    const tolerant = compareSamples({
      ...quiet(1.5),
      pairing: "unpaired",
      polarity: "lower_is_better",
      failed_counts: { baseline: 0, candidate: 1 },
      maximum_failed_fraction: 0.1,
    });
    expect(tolerant.decision).toBe("regressed");
  });

  test("high variation, too many outliers, too-short samples and non-positive values block a verdict", () => {
    const noisy = syntheticRuns({
      seed: 5,
      perSide: 30,
      workFactor: 1.5,
      blocks: false,
      noise: { cv: 0.5, outlierProbability: 0, driftPerBlock: 0 },
    });
    const variation = compareSamples({ ...noisy, pairing: "unpaired", polarity: "lower_is_better" });
    expect(variation.reasons.map((reason) => reason.code)).toContain("high_variation");
    expect(variation.decision).toBe("inconclusive");

    const runs = quiet(1.5);
    const spiked = runs.candidate.map((sample, index) => (index < 6 ? { ...sample, value: sample.value * 10 } : sample));
    const outliers = compareSamples({
      baseline: runs.baseline,
      candidate: spiked,
      pairing: "unpaired",
      polarity: "lower_is_better",
    });
    expect(outliers.reasons.map((reason) => reason.code)).toContain("too_many_outliers");
    expect(outliers.per_side.candidate.outlier_run_ids).toContain("candidate-0");

    const short = compareSamples({ ...runs, pairing: "unpaired", polarity: "lower_is_better", minimum_sample_duration_ns: 1e9 });
    expect(short.reasons.map((reason) => reason.code)).toContain("samples_too_short");

    const withZero: Sample[] = [...runs.baseline.slice(1), { run_id: "zero", value: 0 }];
    const invalid = compareSamples({
      baseline: withZero,
      candidate: runs.candidate,
      pairing: "unpaired",
      polarity: "lower_is_better",
    });
    expect(invalid.reasons.map((reason) => reason.code)).toContain("invalid_values");
    expect(invalid.counts.excluded.baseline).toBe(1);
    expect(deriveValidity(invalid.validity_mismatches).validity).toBe("invalid");
  });

  test("pairing by block: auto detects blocks, unmatched blocks are left out and reported", () => {
    const runs = quiet(1.3, true, 12);
    const auto = compareSamples({ ...runs, pairing: "auto", polarity: "lower_is_better" });
    expect(auto.pairing).toBe("paired");
    expect(auto.decision).toBe("regressed");
    const unmatched = compareSamples({
      baseline: runs.baseline,
      candidate: runs.candidate.slice(2),
      pairing: "paired",
      polarity: "lower_is_better",
    });
    expect(unmatched.counts.pairs).toBe(10);
    expect(unmatched.warnings.map((warning) => warning.code)).toContain("unmatched_blocks");
    const noBlocks = compareSamples({ ...quiet(1.3), pairing: "auto", polarity: "lower_is_better" });
    expect(noBlocks.pairing).toBe("unpaired");
  });

  test("outliers among fewer than 20 values are reported but do not block: the MAD of a few values is too unstable", () => {
    const runs = syntheticRuns({ seed: 3, perSide: 10, workFactor: 2, blocks: false, noise: quietMachine });
    const spiked = runs.candidate.map((sample, index) => (index < 3 ? { ...sample, value: sample.value * 1.5 } : sample));
    const result = compareSamples({ baseline: runs.baseline, candidate: spiked, pairing: "unpaired", polarity: "lower_is_better" });
    expect(result.per_side.candidate.outlier_run_ids.length).toBeGreaterThan(2);
    expect(result.warnings.map((warning) => warning.code)).toContain("outliers_present");
    expect(result.reasons.map((reason) => reason.code)).not.toContain("too_many_outliers");
    expect(result.decision).toBe("regressed");
  });

  test("one value per side is descriptive: the ratio, no interval, validity exploratory", () => {
    const result = compareSamples({
      baseline: [{ run_id: "b", value: 100 }],
      candidate: [{ run_id: "c", value: 210 }],
      pairing: "auto",
      polarity: "lower_is_better",
    });
    expect(result.decision).toBe("descriptive");
    expect(result.estimate).toBeCloseTo(2.1, 12);
    expect(result.ci).toBeNull();
    expect(result.p_value).toBeNull();
    expect(result.reasons.map((reason) => reason.code)).toEqual(["too_few_samples", "descriptive_only"]);
    expect(deriveValidity(result.validity_mismatches).validity).toBe("exploratory");
    expect(deriveValidity([]).validity).toBe("valid");
    const empty = compareSamples({
      baseline: [],
      candidate: [{ run_id: "c", value: 1 }],
      pairing: "unpaired",
      polarity: "lower_is_better",
    });
    expect(empty.decision).toBe("inconclusive");
    expect(empty.estimate).toBeNull();
  });

  test("two to four values per side have an interval but too few samples for a verdict", () => {
    const runs = quiet(1.3, false, 2);
    const result = compareSamples({ ...runs, pairing: "unpaired", polarity: "lower_is_better" });
    expect(result.ci).not.toBeNull();
    expect(result.decision).toBe("inconclusive");
    expect(result.reasons.map((reason) => reason.code)).toEqual(["too_few_samples"]);
    expect(deriveValidity(result.validity_mismatches).validity).toBe("valid");
  });
});
