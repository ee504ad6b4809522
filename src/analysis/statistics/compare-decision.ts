/**
 * The estimate, its t interval and test, then the verdict by the decision rule documented in compare.ts:
 * a directional verdict needs the whole interval beyond the practical threshold; an interval inside the
 * threshold band is equivalence; a ratio without an interval is only descriptive.
 */
import { type ComparisonStatistics, type Decision, minimumForInterval, type Pairing, type Polarity, type Sample } from "./compare.ts";
import { type LogRatioInterval, pairedLogRatioInterval, welchLogRatioInterval } from "./log-ratio-interval.ts";
import { type Findings, formatPercent, formatRatio, type Pairs } from "./sample-checks.ts";

export type Estimate = { estimate: number | null; interval: LogRatioInterval | null };

function geometricMeanRatio(baseline: readonly number[], candidate: readonly number[]): number {
  const meanLog = (values: readonly number[]) => values.reduce((total, value) => total + Math.log(value), 0) / values.length;
  return Math.exp(meanLog(candidate) - meanLog(baseline));
}

/** Paired: geometric mean of the block ratios with a paired t interval; unpaired: ratio of geometric means with Welch's. */
export function estimateChange(
  pairs: Pairs | null,
  eligible: { baseline: Sample[]; candidate: Sample[] },
  pairing: Pairing,
  level: number,
  findings: Findings,
): Estimate {
  const result: Estimate = { estimate: null, interval: null };
  const [baseline, candidate] =
    pairs !== null
      ? [Array.from(pairs.baseline), Array.from(pairs.candidate)]
      : [eligible.baseline.map((sample) => sample.value), eligible.candidate.map((sample) => sample.value)];
  if (baseline.length === 0 || candidate.length === 0) return result;
  result.estimate = geometricMeanRatio(baseline, candidate);
  const enough = Math.min(baseline.length, candidate.length) >= minimumForInterval;
  if (enough) {
    result.interval =
      pairing === "paired" ? pairedLogRatioInterval(baseline, candidate, level) : welchLogRatioInterval(baseline, candidate, level);
    return result;
  }
  const message = `An interval needs at least ${minimumForInterval} ${pairing === "paired" ? "complete pairs" : "eligible samples per side"}; with ${baseline.length} baseline and ${candidate.length} candidate value(s) the ratio ${formatRatio(result.estimate)} is descriptive only.`;
  findings.reasons.push({ code: "descriptive_only", message });
  findings.mismatches.push({ code: "insufficient_samples_for_interval", message, severity: "exploratory" });
  return result;
}

export function directionOf(interval: LogRatioInterval | null): ComparisonStatistics["direction"] {
  if (interval === null) return "indeterminate";
  return interval.lower > 1 ? "increase" : interval.upper < 1 ? "decrease" : "indeterminate";
}

/** Only when nothing blocks and an interval exists does the rule reach a verdict; the reason that decided is added. */
export function decide(estimated: Estimate, rule: { threshold: number; polarity: Polarity }, findings: Findings): Decision {
  const { interval } = estimated;
  if (interval === null) return estimated.estimate === null ? "inconclusive" : "descriptive";
  if (findings.reasons.length > 0) return "inconclusive";
  const { threshold } = rule;
  const ciText = `CI [${formatRatio(interval.lower)}, ${formatRatio(interval.upper)}] at ${formatPercent(interval.level)}`;
  const bandText = `[${formatRatio(1 - threshold)}, ${formatRatio(1 + threshold)}]`;
  const above = interval.lower > 1 + threshold;
  const below = interval.upper < 1 - threshold;
  if (above || below) {
    if (rule.polarity === "neutral") {
      findings.reasons.push({
        code: "change_without_polarity",
        message: `The metric shows an ${above ? "increase" : "decrease"} (${ciText}, beyond ${bandText}), but with neutral polarity a change is neither an improvement nor a regression; declare polarity to get a verdict.`,
      });
      return "inconclusive";
    }
    findings.reasons.push({
      code: "ci_beyond_threshold",
      message: `The ${ciText} lies wholly ${above ? "above" : "below"} ${bandText} (practical threshold ${formatPercent(threshold)}).`,
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
