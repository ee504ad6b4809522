/**
 * compareSamples: the statistical core of `compare_run_sets`. Pure and deterministic for a given seed.
 *
 * Estimand: the ratio candidate/baseline of the primary metric.
 * - paired (runs come from blocks): exp(median over blocks of log(candidate/baseline)); blocks present on
 *   both sides form the pairs; several runs of one side in one block are reduced to their median first.
 * - unpaired: median(candidate) / median(baseline).
 * CI: seeded bootstrap (BCa by default, see bootstrap.ts) named in `ci.method`. Rank test: Wilcoxon
 * signed-rank on the paired log ratios, Mann–Whitney U otherwise.
 *
 * DECISION RULE (`decisionRuleVersion`), with t = practical_threshold, α = 1 − confidence_level, CI [L, U]
 * of the ratio and p the two-sided rank-test p-value:
 *   1. Any blocking reason → `inconclusive` (all blocking reasons are listed):
 *      too_few_samples    eligible samples on a side (paired: complete pairs) < minimum_samples (default 5);
 *      failed_trials      failed/attempted on a side > maximum_failed_fraction (default 0: any failure blocks,
 *                         because failures can be treatment-correlated and survivors then look faster);
 *      invalid_values     a value is non-finite or ≤ 0 (a ratio is undefined); such samples are excluded;
 *      high_variation     per-measurement relative noise > maximum_cv (default 0.25): robust CV
 *                         (1.4826·MAD/median) of each side when unpaired; when paired, the robust spread of
 *                         the log ratios divided by √2 (a ratio carries the noise of two measurements), so
 *                         block-to-block drift that pairing cancels does not count as noise;
 *      too_many_outliers  share of outliers by modified z-score > 3.5 (paired: among log ratios; unpaired:
 *                         per side) > maximum_outlier_fraction (default 0.2). Outliers are kept, never
 *                         dropped; any are listed per side and in an `outliers_present` warning;
 *      samples_too_short  minimum_sample_duration_ns given and some sample is shorter;
 *      ci_unavailable     fewer than 3 values (pairs) on a side, so no interval is computed.
 *   2. Directional verdicts need BOTH the whole CI beyond the practical threshold AND p < α:
 *      lower_is_better:  L > 1 + t and p < α → `regressed`;  U < 1 − t and p < α → `improved`;
 *      higher_is_better: L > 1 + t and p < α → `improved`;   U < 1 − t and p < α → `regressed`;
 *      neutral:          never improved/regressed; such a change is `inconclusive` (reason
 *                        change_without_polarity) and `direction` carries increase/decrease.
 *      If the CI clears the threshold but p ≥ α → `inconclusive` (rank_test_not_significant).
 *   3. Else 1 − t ≤ L and U ≤ 1 + t → `equivalent` (for every polarity).
 *   4. Else `inconclusive` (ci_spans_threshold).
 * Why "CI beyond the threshold" rather than "CI excludes 1 and the estimate beyond the threshold": with
 * t = 0.05, two identical treatments would need a CI lying wholly above 1.05 — far outside what sampling
 * noise produces — so they are never called regressed/improved, while a 20 % slower candidate has its
 * whole CI near 1.2 and is called regressed. With t = 0 the rule degrades to plain significance at α.
 * Why the rank test as well: bootstrap intervals of medians under-cover at 5–10 samples; the rank test is
 * distribution-free (exact at these sizes), so a verdict needs two independent arguments. Consequence: with
 * ≤ 5 pairs the exact signed-rank p-value cannot fall below 0.0625, so paired comparisons need ≥ 6 pairs.
 */
import {
  bootstrapMedianPairedLogRatio,
  bootstrapRatioOfMedians,
  defaultConfidenceLevel,
  defaultResamples,
  type BootstrapInterval,
  type BootstrapIntervalMethod,
} from "./bootstrap.ts";
import { describe, detectOutliers, median, medianAbsoluteDeviation, madNormalConsistency, type Description } from "./descriptive.ts";
import { mannWhitneyU, wilcoxonSignedRank, type RankTestMethod } from "./rank-tests.ts";

export type Sample = { run_id: string; value: number; block?: string | null };
export type Pairing = "paired" | "unpaired";
export type Polarity = "lower_is_better" | "higher_is_better" | "neutral";
export type Decision = "improved" | "regressed" | "equivalent" | "inconclusive";
export type Side = "baseline" | "candidate";

export type ReasonCode =
  | "too_few_samples"
  | "failed_trials"
  | "invalid_values"
  | "high_variation"
  | "too_many_outliers"
  | "samples_too_short"
  | "ci_unavailable"
  | "rank_test_not_significant"
  | "change_without_polarity"
  | "ci_spans_threshold"
  | "ci_beyond_threshold"
  | "ci_within_threshold";

export type WarningCode =
  | "outliers_present"
  | "noisy_samples"
  | "unmatched_blocks"
  | "duplicate_block_samples"
  | "samples_without_block"
  | "bootstrap_fallback";

export type Reason = { code: ReasonCode; message: string };
export type Warning = { code: WarningCode; message: string };

export type Mismatch = { code: string; message: string; severity: "invalidating" | "exploratory" };
export type Validity = "valid" | "exploratory" | "invalid";

export type CompareSamplesInput = {
  baseline: readonly Sample[];
  candidate: readonly Sample[];
  /** "auto": paired when every sample on both sides carries a block key, unpaired otherwise. */
  pairing: Pairing | "auto";
  polarity: Polarity;
  /** Relative practical threshold t ≥ 0 (0.05 = ±5 %). Default 0.05. */
  practical_threshold?: number;
  /** Default 0.95. */
  confidence_level?: number;
  seed: number | bigint;
  /** Bootstrap resamples; default 10,000. */
  resamples?: number;
  /** Bootstrap interval construction; default "bca". */
  interval?: BootstrapIntervalMethod;
  /** Trials that failed (no value) per side. */
  failed_counts?: { baseline: number; candidate: number };
  /** Runs excluded before this call (e.g. warm-ups) per side; only counted. */
  excluded?: { baseline: number; candidate: number };
  /** Default 5 per side (paired: 5 complete pairs). */
  minimum_samples?: number;
  /** Default 0.25; see the decision rule. */
  maximum_cv?: number;
  /** Default 0.2. */
  maximum_outlier_fraction?: number;
  /** Default 0: any failed trial makes the comparison inconclusive. */
  maximum_failed_fraction?: number;
  /** When the values are durations in ns: samples shorter than this make the comparison inconclusive. */
  minimum_sample_duration_ns?: number | null;
};

export type SideDescription = Description & { outlier_run_ids: string[] };

export type SideCounts = { baseline: number; candidate: number };

export type ComparisonStatistics = {
  estimand: "ratio_candidate_over_baseline";
  estimator: "median_paired_log_ratio" | "ratio_of_medians";
  pairing: Pairing;
  polarity: Polarity;
  practical_threshold: number;
  /** Ratio candidate/baseline; null when a side has no eligible sample. */
  estimate: number | null;
  /** estimate − 1. */
  relative_change: number | null;
  ci: { lower: number; upper: number; level: number; method: string; resamples: number; seed: string } | null;
  p_value: number | null;
  test: RankTestMethod | null;
  /** Which way the CI points relative to 1, regardless of polarity and threshold. */
  direction: "increase" | "decrease" | "indeterminate";
  decision: Decision;
  decision_rule: string;
  reasons: Reason[];
  warnings: Warning[];
  counts: {
    attempted: SideCounts;
    eligible: SideCounts;
    failed: SideCounts;
    excluded: SideCounts;
    /** Complete pairs; null when unpaired. */
    pairs: number | null;
  };
  per_side: { baseline: SideDescription; candidate: SideDescription };
  /** Statistical contributions to validity; merge with compatibility mismatches via deriveValidity. */
  validity_mismatches: Mismatch[];
};

/**
 * Outliers are found with the MAD-based modified z-score (> 3.5, as hyperfine does): it has a 50 % breakdown
 * point, whereas Tukey fences cannot see more than 25 % outliers on one side (they move the quartile) —
 * exactly the case that should block — and with 5–10 samples Tukey's 1.5·IQR fences flag ordinary noise
 * often enough to block a fifth of clean comparisons.
 */
export const outlierMethod = "modified_z_score_3.5" as const;

export const decisionRuleVersion = "ci_beyond_practical_threshold_and_rank_test.v1";

export const compareDefaults = {
  practical_threshold: 0.05,
  confidence_level: defaultConfidenceLevel,
  resamples: defaultResamples,
  minimum_samples: 5,
  maximum_cv: 0.25,
  /** Non-blocking warning level (pyperf warns at σ ≥ 10 % of the mean). */
  warning_cv: 0.1,
  maximum_outlier_fraction: 0.2,
  maximum_failed_fraction: 0,
} as const;

/** Fewer values than this on a side (or pairs) and no interval is computed (as in the Python original). */
export const minimumForInterval = 3;

function requireNumber(name: string, value: number, low: number, high: number, openLow = false, openHigh = false): void {
  const okLow = openLow ? value > low : value >= low;
  const okHigh = openHigh ? value < high : value <= high;
  if (!(Number.isFinite(value) && okLow && okHigh)) throw new RangeError(`${name} out of range: ${value}`);
}

function formatPercent(value: number): string {
  return `${(value * 100).toFixed(2)}%`;
}

function formatRatio(value: number): string {
  return value.toFixed(4);
}

type Pairs = { baseline: Float64Array; candidate: Float64Array; blocks: string[] };

function blockMedians(samples: readonly Sample[]): { byBlock: Map<string, number>; duplicates: number; missing: number } {
  const grouped = new Map<string, number[]>();
  let missing = 0;
  for (const sample of samples) {
    if (sample.block === undefined || sample.block === null) {
      missing += 1;
      continue;
    }
    const values = grouped.get(sample.block);
    if (values) values.push(sample.value);
    else grouped.set(sample.block, [sample.value]);
  }
  let duplicates = 0;
  const byBlock = new Map<string, number>();
  for (const [block, values] of grouped) {
    if (values.length > 1) duplicates += values.length - 1;
    byBlock.set(block, median(values));
  }
  return { byBlock, duplicates, missing };
}

function buildPairs(baseline: readonly Sample[], candidate: readonly Sample[], warnings: Warning[]): Pairs {
  const left = blockMedians(baseline);
  const right = blockMedians(candidate);
  const blocks = [...left.byBlock.keys()].filter((block) => right.byBlock.has(block)).sort();
  const unmatched = left.byBlock.size + right.byBlock.size - 2 * blocks.length;
  if (left.missing + right.missing > 0) {
    warnings.push({
      code: "samples_without_block",
      message: `${left.missing + right.missing} sample(s) carry no block key and cannot be paired; they are left out of the estimate.`,
    });
  }
  if (unmatched > 0) {
    warnings.push({
      code: "unmatched_blocks",
      message: `${unmatched} block(s) have values on one side only and are left out of the pairs.`,
    });
  }
  if (left.duplicates + right.duplicates > 0) {
    warnings.push({
      code: "duplicate_block_samples",
      message: `${left.duplicates + right.duplicates} extra sample(s) share a block with another sample of the same side; each block uses the median of its side's samples.`,
    });
  }
  return {
    baseline: Float64Array.from(blocks, (block) => left.byBlock.get(block) as number),
    candidate: Float64Array.from(blocks, (block) => right.byBlock.get(block) as number),
    blocks,
  };
}

function describeSide(samples: readonly Sample[]): SideDescription {
  const description = describe(
    samples.map((sample) => sample.value),
    outlierMethod,
  );
  return {
    ...description,
    outlier_run_ids: description.outliers.indices.map((index) => (samples[index] as Sample).run_id),
  };
}

/** Merges statistical and compatibility mismatches into one validity: any invalidating → invalid, etc. */
export function deriveValidity(mismatches: readonly Mismatch[]): { validity: Validity; mismatches: Mismatch[] } {
  const validity: Validity = mismatches.some((mismatch) => mismatch.severity === "invalidating")
    ? "invalid"
    : mismatches.length > 0
      ? "exploratory"
      : "valid";
  return { validity, mismatches: [...mismatches] };
}

export function compareSamples(input: CompareSamplesInput): ComparisonStatistics {
  const threshold = input.practical_threshold ?? compareDefaults.practical_threshold;
  const level = input.confidence_level ?? compareDefaults.confidence_level;
  const resamples = input.resamples ?? compareDefaults.resamples;
  const minimumSamples = input.minimum_samples ?? compareDefaults.minimum_samples;
  const maximumCv = input.maximum_cv ?? compareDefaults.maximum_cv;
  const maximumOutlierFraction = input.maximum_outlier_fraction ?? compareDefaults.maximum_outlier_fraction;
  const maximumFailedFraction = input.maximum_failed_fraction ?? compareDefaults.maximum_failed_fraction;
  const failed = { baseline: input.failed_counts?.baseline ?? 0, candidate: input.failed_counts?.candidate ?? 0 };
  const excludedInput = { baseline: input.excluded?.baseline ?? 0, candidate: input.excluded?.candidate ?? 0 };
  requireNumber("practical_threshold", threshold, 0, 1, false, true);
  requireNumber("confidence_level", level, 0, 1, true, true);
  requireNumber("minimum_samples", minimumSamples, 1, Number.MAX_SAFE_INTEGER);
  requireNumber("maximum_cv", maximumCv, 0, Infinity, true);
  requireNumber("maximum_outlier_fraction", maximumOutlierFraction, 0, 1);
  requireNumber("maximum_failed_fraction", maximumFailedFraction, 0, 1);
  for (const side of ["baseline", "candidate"] as const) {
    if (!Number.isInteger(failed[side]) || failed[side] < 0) throw new RangeError(`failed_counts.${side} must be a non-negative integer`);
    if (!Number.isInteger(excludedInput[side]) || excludedInput[side] < 0)
      throw new RangeError(`excluded.${side} must be a non-negative integer`);
  }

  const reasons: Reason[] = [];
  const warnings: Warning[] = [];
  const validityMismatches: Mismatch[] = [];

  // Eligibility: a ratio needs finite positive values.
  const eligible = {
    baseline: input.baseline.filter((sample) => Number.isFinite(sample.value) && sample.value > 0),
    candidate: input.candidate.filter((sample) => Number.isFinite(sample.value) && sample.value > 0),
  };
  const invalid = {
    baseline: input.baseline.length - eligible.baseline.length,
    candidate: input.candidate.length - eligible.candidate.length,
  };
  if (invalid.baseline + invalid.candidate > 0) {
    const message = `${invalid.baseline} baseline and ${invalid.candidate} candidate value(s) are non-finite or ≤ 0, so a ratio is undefined for them; they are excluded.`;
    reasons.push({ code: "invalid_values", message });
    validityMismatches.push({ code: "nonpositive_values", message, severity: "invalidating" });
  }
  const counts: ComparisonStatistics["counts"] = {
    attempted: {
      baseline: input.baseline.length + failed.baseline + excludedInput.baseline,
      candidate: input.candidate.length + failed.candidate + excludedInput.candidate,
    },
    eligible: { baseline: eligible.baseline.length, candidate: eligible.candidate.length },
    failed,
    excluded: {
      baseline: excludedInput.baseline + invalid.baseline,
      candidate: excludedInput.candidate + invalid.candidate,
    },
    pairs: null,
  };

  const pairing: Pairing =
    input.pairing === "auto"
      ? [...input.baseline, ...input.candidate].every((sample) => sample.block !== undefined && sample.block !== null) &&
        input.baseline.length + input.candidate.length > 0
        ? "paired"
        : "unpaired"
      : input.pairing;
  const perSide = { baseline: describeSide(eligible.baseline), candidate: describeSide(eligible.candidate) };

  // Failed trials.
  for (const side of ["baseline", "candidate"] as const) {
    const attempted = counts.attempted[side];
    const share = attempted === 0 ? 0 : failed[side] / attempted;
    if (failed[side] > 0 && share > maximumFailedFraction) {
      reasons.push({
        code: "failed_trials",
        message: `${failed[side]} of ${attempted} ${side} trial(s) failed (${formatPercent(share)} > allowed ${formatPercent(maximumFailedFraction)}); failures can depend on the treatment, so the survivors are not a fair sample.`,
      });
    }
  }

  // Samples too short.
  const minimumDuration = input.minimum_sample_duration_ns;
  if (minimumDuration !== undefined && minimumDuration !== null) {
    for (const side of ["baseline", "candidate"] as const) {
      const shortest = perSide[side].min;
      if (perSide[side].n > 0 && shortest < minimumDuration) {
        reasons.push({
          code: "samples_too_short",
          message: `The shortest ${side} sample is ${shortest} ns, below the ${minimumDuration} ns minimum; timer resolution and start-up noise dominate such samples.`,
        });
      }
    }
  }

  // Values entering the estimate.
  let pairs: Pairs | null = null;
  let sizeForInterval: number;
  if (pairing === "paired") {
    pairs = buildPairs(eligible.baseline, eligible.candidate, warnings);
    counts.pairs = pairs.blocks.length;
    sizeForInterval = pairs.blocks.length;
    if (pairs.blocks.length < minimumSamples) {
      reasons.push({
        code: "too_few_samples",
        message: `${pairs.blocks.length} complete pair(s); at least ${minimumSamples} are required for a verdict.`,
      });
    }
  } else {
    sizeForInterval = Math.min(eligible.baseline.length, eligible.candidate.length);
    const short = (["baseline", "candidate"] as const).filter((side) => eligible[side].length < minimumSamples);
    if (short.length > 0) {
      reasons.push({
        code: "too_few_samples",
        message: `${short.map((side) => `${side} has ${eligible[side].length}`).join(", ")} eligible sample(s); at least ${minimumSamples} per side are required for a verdict.`,
      });
    }
  }

  // Noise and outliers, measured on what the estimator sees.
  const noisy: string[] = [];
  if (pairs !== null && pairs.blocks.length >= 2) {
    const logRatios = pairs.baseline.map((value, index) => Math.log((pairs.candidate[index] as number) / value));
    const perMeasurementNoise = (medianAbsoluteDeviation(logRatios) * madNormalConsistency) / Math.SQRT2;
    if (perMeasurementNoise > maximumCv) {
      reasons.push({
        code: "high_variation",
        message: `Per-measurement noise estimated from the paired log ratios is ${formatPercent(perMeasurementNoise)} (> ${formatPercent(maximumCv)}).`,
      });
    } else if (perMeasurementNoise > compareDefaults.warning_cv) noisy.push(`paired log ratios ${formatPercent(perMeasurementNoise)}`);
    const ratioOutliers = detectOutliers(logRatios, outlierMethod);
    const share = ratioOutliers.indices.length / logRatios.length;
    if (share > maximumOutlierFraction) {
      reasons.push({
        code: "too_many_outliers",
        message: `${ratioOutliers.indices.length} of ${logRatios.length} paired log ratios are outliers (${ratioOutliers.method}), above the allowed ${formatPercent(maximumOutlierFraction)}.`,
      });
    }
  } else if (pairing === "unpaired") {
    for (const side of ["baseline", "candidate"] as const) {
      const description = perSide[side];
      if (description.n < 2) continue;
      if (description.robust_cv > maximumCv) {
        reasons.push({
          code: "high_variation",
          message: `${side} robust CV (1.4826·MAD/median) is ${formatPercent(description.robust_cv)} (> ${formatPercent(maximumCv)}).`,
        });
      } else if (description.robust_cv > compareDefaults.warning_cv)
        noisy.push(`${side} robust CV ${formatPercent(description.robust_cv)}`);
      const share = description.outliers.indices.length / description.n;
      if (share > maximumOutlierFraction) {
        reasons.push({
          code: "too_many_outliers",
          message: `${description.outliers.indices.length} of ${description.n} ${side} samples are outliers (${description.outliers.method}), above the allowed ${formatPercent(maximumOutlierFraction)}.`,
        });
      }
    }
  }
  for (const side of ["baseline", "candidate"] as const) {
    const description = perSide[side];
    if (description.n >= 2 && description.cv > compareDefaults.warning_cv) noisy.push(`${side} σ/μ ${formatPercent(description.cv)}`);
    if (description.outliers.indices.length > 0) {
      warnings.push({
        code: "outliers_present",
        message: `${description.outliers.indices.length} ${side} outlier(s) by ${description.outliers.method} (kept, not dropped): ${description.outlier_run_ids.join(", ")}.`,
      });
    }
  }
  if (noisy.length > 0) {
    warnings.push({
      code: "noisy_samples",
      message: `Dispersion above ${formatPercent(compareDefaults.warning_cv)}: ${noisy.join("; ")}.`,
    });
  }

  // Estimate, interval, rank test.
  let estimate: number | null = null;
  let interval: BootstrapInterval | null = null;
  let pValue: number | null = null;
  let test: RankTestMethod | null = null;
  const bootstrapOptions = { seed: input.seed, resamples, confidence_level: level, interval: input.interval ?? "bca" };
  if (pairs !== null) {
    if (pairs.blocks.length > 0) {
      const logRatios = pairs.baseline.map((value, index) => Math.log((pairs.candidate[index] as number) / value));
      estimate = Math.exp(median(logRatios));
      const rank = wilcoxonSignedRank(logRatios);
      pValue = rank.p_value;
      test = rank.method;
    }
    if (sizeForInterval >= minimumForInterval) interval = bootstrapMedianPairedLogRatio(pairs.baseline, pairs.candidate, bootstrapOptions);
  } else {
    const baselineValues = eligible.baseline.map((sample) => sample.value);
    const candidateValues = eligible.candidate.map((sample) => sample.value);
    if (baselineValues.length > 0 && candidateValues.length > 0) {
      estimate = median(candidateValues) / median(baselineValues);
      const rank = mannWhitneyU(baselineValues, candidateValues);
      pValue = rank.p_value;
      test = rank.method;
    }
    if (sizeForInterval >= minimumForInterval) interval = bootstrapRatioOfMedians(baselineValues, candidateValues, bootstrapOptions);
  }
  if (interval === null) {
    const message = `An interval needs at least ${minimumForInterval} ${pairing === "paired" ? "complete pairs" : "eligible samples per side"}.`;
    reasons.push({ code: "ci_unavailable", message });
    validityMismatches.push({ code: "insufficient_samples_for_interval", message, severity: "exploratory" });
  } else if (interval.fallback_reason !== null) {
    warnings.push({ code: "bootstrap_fallback", message: `${interval.method}: ${interval.fallback_reason}.` });
  }

  const direction: ComparisonStatistics["direction"] =
    interval === null ? "indeterminate" : interval.lower > 1 ? "increase" : interval.upper < 1 ? "decrease" : "indeterminate";

  // Decision.
  const alpha = 1 - level;
  let decision: Decision = "inconclusive";
  if (reasons.length === 0 && interval !== null) {
    const ciText = `CI [${formatRatio(interval.lower)}, ${formatRatio(interval.upper)}] at ${formatPercent(level)}`;
    const bandText = `[${formatRatio(1 - threshold)}, ${formatRatio(1 + threshold)}]`;
    const above = interval.lower > 1 + threshold;
    const below = interval.upper < 1 - threshold;
    const significant = pValue !== null && pValue < alpha;
    if (above || below) {
      const change = above ? "increase" : "decrease";
      if (!significant) {
        reasons.push({
          code: "rank_test_not_significant",
          message: `The ${ciText} lies beyond ${bandText}, but the ${test} p-value ${pValue?.toPrecision(3)} is not below ${alpha.toPrecision(3)}${
            pairing === "paired" && sizeForInterval <= 5
              ? " (with 5 or fewer pairs the exact signed-rank test cannot reach p < 0.0625)"
              : ""
          }.`,
        });
      } else if (input.polarity === "neutral") {
        reasons.push({
          code: "change_without_polarity",
          message: `The metric shows a ${change} (${ciText}, beyond ${bandText}; p = ${pValue?.toPrecision(3)}), but with neutral polarity a change is neither an improvement nor a regression.`,
        });
      } else {
        const better = (input.polarity === "lower_is_better") === below;
        decision = better ? "improved" : "regressed";
        reasons.push({
          code: "ci_beyond_threshold",
          message: `The ${ciText} lies wholly ${above ? "above" : "below"} ${bandText} (practical threshold ${formatPercent(threshold)}) and the ${test} p-value is ${pValue?.toPrecision(3)} < ${alpha.toPrecision(3)}.`,
        });
      }
    } else if (interval.lower >= 1 - threshold && interval.upper <= 1 + threshold) {
      decision = "equivalent";
      reasons.push({
        code: "ci_within_threshold",
        message: `The ${ciText} lies inside ${bandText}: any difference is smaller than the practical threshold ${formatPercent(threshold)}.`,
      });
    } else {
      reasons.push({
        code: "ci_spans_threshold",
        message: `The ${ciText} ${direction === "indeterminate" ? "includes 1.0 and" : "excludes 1.0 but"} crosses a bound of ${bandText}; more samples or less noise are needed for a verdict.`,
      });
    }
  }

  return {
    estimand: "ratio_candidate_over_baseline",
    estimator: pairing === "paired" ? "median_paired_log_ratio" : "ratio_of_medians",
    pairing,
    polarity: input.polarity,
    practical_threshold: threshold,
    estimate,
    relative_change: estimate === null ? null : estimate - 1,
    ci:
      interval === null
        ? null
        : {
            lower: interval.lower,
            upper: interval.upper,
            level: interval.level,
            method: interval.method,
            resamples: interval.resamples,
            seed: interval.seed,
          },
    p_value: pValue,
    test,
    direction,
    decision,
    decision_rule: decisionRuleVersion,
    reasons,
    warnings,
    counts,
    per_side: perSide,
    validity_mismatches: validityMismatches,
  };
}
