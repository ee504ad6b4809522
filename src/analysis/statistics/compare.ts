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
import { defaultConfidenceLevel, defaultResamples, type BootstrapIntervalMethod } from "./bootstrap.ts";
import { decide, directionOf, estimateChange } from "./compare-decision.ts";
import type { Description } from "./descriptive.ts";
import type { RankTestMethod } from "./rank-tests.ts";
import {
  countsOf,
  describeSide,
  eligibleSamples,
  estimateInputs,
  failedTrialReasons,
  type Findings,
  noiseChecks,
  pairingOf,
  settingsOf,
  shortSampleReasons,
} from "./sample-checks.ts";

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

/** Merges statistical and compatibility mismatches into one validity: any invalidating → invalid, etc. */
export function deriveValidity(mismatches: readonly Mismatch[]): { validity: Validity; mismatches: Mismatch[] } {
  const validity: Validity = mismatches.some((mismatch) => mismatch.severity === "invalidating")
    ? "invalid"
    : mismatches.length > 0
      ? "exploratory"
      : "valid";
  return { validity, mismatches: [...mismatches] };
}

/** The comparison of two sides' samples by the decision rule above; every check's findings are listed in the result. */
export function compareSamples(input: CompareSamplesInput): ComparisonStatistics {
  const settings = settingsOf(input);
  const findings: Findings = { reasons: [], warnings: [], mismatches: [] };
  const { eligible, invalid } = eligibleSamples(input, findings);
  const counts = countsOf(input, settings, eligible, invalid);
  const pairing = pairingOf(input);
  const perSide = { baseline: describeSide(eligible.baseline), candidate: describeSide(eligible.candidate) };
  failedTrialReasons(counts, settings, findings);
  shortSampleReasons(perSide, input.minimum_sample_duration_ns, findings);
  const { pairs, sizeForInterval } = estimateInputs(pairing, eligible, settings.minimumSamples, counts, findings);
  noiseChecks(pairing, pairs, perSide, settings, findings);
  const bootstrap = {
    seed: input.seed,
    resamples: settings.resamples,
    confidence_level: settings.level,
    interval: input.interval ?? "bca",
  };
  const estimated = estimateChange(pairs, eligible, pairing, sizeForInterval, bootstrap, findings);
  const { estimate, interval } = estimated;
  const decision = decide(
    estimated,
    { threshold: settings.threshold, level: settings.level, polarity: input.polarity, pairing, sizeForInterval },
    findings,
  );
  return {
    estimand: "ratio_candidate_over_baseline",
    estimator: pairing === "paired" ? "median_paired_log_ratio" : "ratio_of_medians",
    pairing,
    polarity: input.polarity,
    practical_threshold: settings.threshold,
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
    p_value: estimated.pValue,
    test: estimated.test,
    direction: directionOf(interval),
    decision,
    decision_rule: decisionRuleVersion,
    reasons: findings.reasons,
    warnings: findings.warnings,
    counts,
    per_side: perSide,
    validity_mismatches: findings.mismatches,
  };
}
