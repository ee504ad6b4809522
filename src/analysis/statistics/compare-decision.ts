/**
 * The estimate, its interval and the rank test, then the verdict by the decision rule documented in
 * compare.ts: a directional verdict needs the whole interval beyond the practical threshold and a
 * significant rank test; an interval inside the threshold band is equivalence.
 */
import {
  type BootstrapInterval,
  type BootstrapIntervalMethod,
  bootstrapMedianPairedLogRatio,
  bootstrapRatioOfMedians,
} from "./bootstrap.ts";
import { type ComparisonStatistics, type Decision, minimumForInterval, type Pairing, type Polarity, type Sample } from "./compare.ts";
import { median } from "./descriptive.ts";
import { mannWhitneyU, type RankTestMethod, wilcoxonSignedRank } from "./rank-tests.ts";
import { type Findings, formatPercent, formatRatio, type Pairs } from "./sample-checks.ts";

export type Estimate = { estimate: number | null; interval: BootstrapInterval | null; pValue: number | null; test: RankTestMethod | null };

/** Paired: exp(median log ratio) with the signed-rank test; unpaired: ratio of medians with Mann–Whitney U. */
export function estimateChange(
  pairs: Pairs | null,
  eligible: { baseline: Sample[]; candidate: Sample[] },
  pairing: Pairing,
  sizeForInterval: number,
  bootstrap: { seed: number | bigint; resamples: number; confidence_level: number; interval: BootstrapIntervalMethod },
  findings: Findings,
): Estimate {
  const result: Estimate = { estimate: null, interval: null, pValue: null, test: null };
  if (pairs !== null) {
    if (pairs.blocks.length > 0) {
      const logRatios = pairs.baseline.map((value, index) => Math.log((pairs.candidate[index] as number) / value));
      result.estimate = Math.exp(median(logRatios));
      const rank = wilcoxonSignedRank(logRatios);
      result.pValue = rank.p_value;
      result.test = rank.method;
    }
    if (sizeForInterval >= minimumForInterval) result.interval = bootstrapMedianPairedLogRatio(pairs.baseline, pairs.candidate, bootstrap);
  } else {
    const baselineValues = eligible.baseline.map((sample) => sample.value);
    const candidateValues = eligible.candidate.map((sample) => sample.value);
    if (baselineValues.length > 0 && candidateValues.length > 0) {
      result.estimate = median(candidateValues) / median(baselineValues);
      const rank = mannWhitneyU(baselineValues, candidateValues);
      result.pValue = rank.p_value;
      result.test = rank.method;
    }
    if (sizeForInterval >= minimumForInterval) result.interval = bootstrapRatioOfMedians(baselineValues, candidateValues, bootstrap);
  }
  if (result.interval === null) {
    const message = `An interval needs at least ${minimumForInterval} ${pairing === "paired" ? "complete pairs" : "eligible samples per side"}.`;
    findings.reasons.push({ code: "ci_unavailable", message });
    findings.mismatches.push({ code: "insufficient_samples_for_interval", message, severity: "exploratory" });
  } else if (result.interval.fallback_reason !== null) {
    findings.warnings.push({ code: "bootstrap_fallback", message: `${result.interval.method}: ${result.interval.fallback_reason}.` });
  }
  return result;
}

export function directionOf(interval: BootstrapInterval | null): ComparisonStatistics["direction"] {
  if (interval === null) return "indeterminate";
  return interval.lower > 1 ? "increase" : interval.upper < 1 ? "decrease" : "indeterminate";
}

/** Only when nothing blocks and an interval exists does the rule reach a verdict; the reason that decided is added. */
export function decide(
  estimated: Estimate,
  rule: { threshold: number; level: number; polarity: Polarity; pairing: Pairing; sizeForInterval: number },
  findings: Findings,
): Decision {
  const { interval, pValue, test } = estimated;
  if (findings.reasons.length > 0 || interval === null) return "inconclusive";
  const { threshold, level } = rule;
  const alpha = 1 - level;
  const ciText = `CI [${formatRatio(interval.lower)}, ${formatRatio(interval.upper)}] at ${formatPercent(level)}`;
  const bandText = `[${formatRatio(1 - threshold)}, ${formatRatio(1 + threshold)}]`;
  const above = interval.lower > 1 + threshold;
  const below = interval.upper < 1 - threshold;
  if (above || below) {
    const change = above ? "increase" : "decrease";
    if (!(pValue !== null && pValue < alpha)) {
      findings.reasons.push({
        code: "rank_test_not_significant",
        message: `The ${ciText} lies beyond ${bandText}, but the ${test} p-value ${pValue?.toPrecision(3)} is not below ${alpha.toPrecision(3)}${
          rule.pairing === "paired" && rule.sizeForInterval <= 5
            ? " (with 5 or fewer pairs the exact signed-rank test cannot reach p < 0.0625)"
            : ""
        }.`,
      });
      return "inconclusive";
    }
    if (rule.polarity === "neutral") {
      findings.reasons.push({
        code: "change_without_polarity",
        message: `The metric shows a ${change} (${ciText}, beyond ${bandText}; p = ${pValue?.toPrecision(3)}), but with neutral polarity a change is neither an improvement nor a regression.`,
      });
      return "inconclusive";
    }
    findings.reasons.push({
      code: "ci_beyond_threshold",
      message: `The ${ciText} lies wholly ${above ? "above" : "below"} ${bandText} (practical threshold ${formatPercent(threshold)}) and the ${test} p-value is ${pValue?.toPrecision(3)} < ${alpha.toPrecision(3)}.`,
    });
    return (rule.polarity === "lower_is_better") === below ? "improved" : "regressed";
  }
  if (interval.lower >= 1 - threshold && interval.upper <= 1 + threshold) {
    findings.reasons.push({
      code: "ci_within_threshold",
      message: `The ${ciText} lies inside ${bandText}: any difference is smaller than the practical threshold ${formatPercent(threshold)}.`,
    });
    return "equivalent";
  }
  findings.reasons.push({
    code: "ci_spans_threshold",
    message: `The ${ciText} ${directionOf(interval) === "indeterminate" ? "includes 1.0 and" : "excludes 1.0 but"} crosses a bound of ${bandText}; more samples or less noise are needed for a verdict.`,
  });
  return "inconclusive";
}
