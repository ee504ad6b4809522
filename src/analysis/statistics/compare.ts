/**
 * compareSamples: the statistical core of `compare_run_sets`. Pure and deterministic.
 *
 * Estimand: the ratio candidate/baseline of the primary metric, estimated on the log scale
 * (log-ratio-interval.ts):
 * - paired (runs come from blocks): the geometric mean of the per-block ratios, exp(mean log(c/b)); blocks
 *   present on both sides form the pairs; several runs of one side in one block are reduced to their
 *   median first. Interval: Student t on the log ratios, n − 1 degrees of freedom.
 * - unpaired: the ratio of geometric means; interval: Welch t on the log values.
 * The p-value is the t test of ratio = 1 on the same standard error; it is reported, the verdict is the interval's.
 *
 * DECISION RULE (`decisionRuleVersion`), with t = practical_threshold and [L, U] the interval at confidence_level
 * (default 0.99):
 *   1. Fewer than 2 values (pairs) on a side: no interval; the ratio is `descriptive` (reason descriptive_only,
 *      validity at best exploratory). No values at all: `inconclusive`.
 *   2. Any blocking reason → `inconclusive` (all blocking reasons are listed):
 *      too_few_samples    eligible samples on a side (paired: complete pairs) < minimum_samples (default 5);
 *      failed_trials      failed/attempted on a side > maximum_failed_fraction (default 0: any failure blocks,
 *                         because failures can be treatment-correlated and survivors then look faster);
 *      invalid_values     a value is non-finite or ≤ 0 (a ratio is undefined); such samples are excluded;
 *      high_variation     per-measurement relative noise > maximum_cv (default 0.25), on the log scale, as
 *                         the smaller of the standard deviation and 1.4826·MAD (noise is high only when both
 *                         say so: one outlier inflates the first, the second is unstable at 5 values); of each
 *                         side when unpaired, of the log ratios divided by √2 when paired (a ratio carries the
 *                         noise of two measurements), so block-to-block drift that pairing cancels does not count;
 *      too_many_outliers  from 20 values (pairs) on: share of outliers by modified z-score > 3.5 (paired:
 *                         among log ratios; unpaired: per side) > maximum_outlier_fraction (default 0.2).
 *                         Below 20 the MAD of a few values is too unstable to call anything an outlier: on
 *                         pure normal data the check would block 6 % of comparisons of 5 values and 0.9 % of
 *                         10, against 0.05 % of 20 (descriptive.test.ts). Outliers are never dropped; any
 *                         are listed per side and in an `outliers_present` warning, and they widen the t
 *                         interval, which keeps them from producing a verdict on their own;
 *      samples_too_short  minimum_sample_duration_ns given and some sample is shorter.
 *   3. L > 1 + t or U < 1 − t (the whole interval beyond the threshold band):
 *      lower_is_better:  above → `regressed`, below → `improved`; higher_is_better: the reverse;
 *      neutral:          never improved/regressed; `inconclusive` (change_without_polarity), `direction` says which way.
 *   4. Else 1 − t ≤ L and U ≤ 1 + t → `equivalent` (for every polarity).
 *   5. Else `inconclusive` (ci_spans_threshold).
 * Why t intervals on logs: timing noise is multiplicative and right-skewed, close to normal on the log
 * scale, and the t interval keeps its level at 5 samples, where the exact signed-rank test cannot go below
 * p = 0.0625 and a bootstrap interval of 5 medians is just [min, max] (93.75 % coverage). Why 0.99 and a
 * threshold: with 5 values per side and 10 % noise, identical treatments are called different in 1 % of
 * seeded simulations at 0.95 and 0.15 % at 0.99, while a 2× change is still called in ≥ 96 %; requiring the
 * interval beyond ±t rather than merely excluding 1 is what keeps a tiny, irrelevant difference from being
 * a verdict when samples are many. The measured operating characteristics are in docs/statistics.md.
 */
import { decide, directionOf, estimateChange } from "./compare-decision.ts";
import type { Description } from "./descriptive.ts";
import type { LogRatioEstimator, LogRatioIntervalMethod, LogRatioTest } from "./log-ratio-interval.ts";
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
/** `descriptive`: a ratio without an interval (fewer than 2 values on a side), never a verdict. */
export type Decision = "improved" | "regressed" | "equivalent" | "inconclusive" | "descriptive";
export type Side = "baseline" | "candidate";

export type ReasonCode =
  | "too_few_samples"
  | "failed_trials"
  | "invalid_values"
  | "high_variation"
  | "too_many_outliers"
  | "samples_too_short"
  | "descriptive_only"
  | "change_without_polarity"
  | "ci_spans_threshold"
  | "ci_beyond_threshold"
  | "ci_within_threshold";

export type WarningCode = "outliers_present" | "noisy_samples" | "unmatched_blocks" | "duplicate_block_samples" | "samples_without_block";

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
  /** Default 0.99. */
  confidence_level?: number;
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

export type ComparisonInterval = {
  lower: number;
  upper: number;
  level: number;
  method: LogRatioIntervalMethod;
  degrees_of_freedom: number;
  log_standard_error: number;
};

export type ComparisonStatistics = {
  estimand: "ratio_candidate_over_baseline";
  estimator: LogRatioEstimator;
  pairing: Pairing;
  polarity: Polarity;
  practical_threshold: number;
  /** Ratio candidate/baseline; null when a side has no eligible sample. */
  estimate: number | null;
  /** estimate − 1. */
  relative_change: number | null;
  ci: ComparisonInterval | null;
  p_value: number | null;
  test: LogRatioTest | null;
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
 * exactly the case that should block.
 */
export const outlierMethod = "modified_z_score_3.5" as const;

export const decisionRuleVersion = "t_interval_of_log_ratio_beyond_practical_threshold.v2";

export const compareDefaults = {
  practical_threshold: 0.05,
  confidence_level: 0.99,
  minimum_samples: 5,
  maximum_cv: 0.25,
  /** Non-blocking warning level (pyperf warns at σ ≥ 10 % of the mean). */
  warning_cv: 0.1,
  maximum_outlier_fraction: 0.2,
  maximum_failed_fraction: 0,
} as const;

/** Fewer values than this on a side (or pairs) and there is no interval: the ratio is descriptive. */
export const minimumForInterval = 2;

/** Fewer values (pairs) than this and outliers are reported but never block (see the decision rule). */
export const minimumForOutlierBlocking = 20;

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
  const { pairs } = estimateInputs(pairing, eligible, settings.minimumSamples, counts, findings);
  noiseChecks(pairing, pairs, eligible, perSide, settings, findings);
  const estimated = estimateChange(pairs, eligible, pairing, settings.level, findings);
  const { estimate, interval } = estimated;
  const decision = decide(estimated, { threshold: settings.threshold, polarity: input.polarity }, findings);
  return {
    estimand: "ratio_candidate_over_baseline",
    estimator: pairing === "paired" ? "geometric_mean_of_paired_ratios" : "ratio_of_geometric_means",
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
            degrees_of_freedom: interval.degrees_of_freedom,
            log_standard_error: interval.log_standard_error,
          },
    p_value: interval?.p_value ?? null,
    test: interval?.test ?? null,
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
