/**
 * The checks compareSamples makes before any estimate: inputs in range, which values can enter a ratio,
 * the counts, failed trials, too-short samples, too few samples, noise and outliers. Each check adds its
 * blocking reasons, warnings and validity mismatches to the shared findings, in the order the result lists them.
 */
import { describe, detectOutliers, madNormalConsistency, median, medianAbsoluteDeviation, standardDeviation } from "./descriptive.ts";
import {
  type CompareSamplesInput,
  type ComparisonStatistics,
  compareDefaults,
  type Mismatch,
  minimumForOutlierBlocking,
  outlierMethod,
  type Pairing,
  type Reason,
  type Sample,
  type SideDescription,
  type Warning,
} from "./compare.ts";

export type Findings = { reasons: Reason[]; warnings: Warning[]; mismatches: Mismatch[] };

type PerSide<T> = { baseline: T; candidate: T };
const sides = ["baseline", "candidate"] as const;

/** The input's limits with their defaults, each checked to be in range. */
export type CompareSettings = {
  threshold: number;
  level: number;
  minimumSamples: number;
  maximumCv: number;
  maximumOutlierFraction: number;
  maximumFailedFraction: number;
  failed: PerSide<number>;
  excluded: PerSide<number>;
};

export function requireNumber(name: string, value: number, low: number, high: number, openLow = false, openHigh = false): void {
  const okLow = openLow ? value > low : value >= low;
  const okHigh = openHigh ? value < high : value <= high;
  if (!(Number.isFinite(value) && okLow && okHigh)) throw new RangeError(`${name} out of range: ${value}`);
}

export function formatPercent(value: number): string {
  return `${(value * 100).toFixed(2)}%`;
}

export function formatRatio(value: number): string {
  return value.toFixed(4);
}

export type Pairs = { baseline: Float64Array; candidate: Float64Array; blocks: string[] };

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

export function buildPairs(baseline: readonly Sample[], candidate: readonly Sample[], warnings: Warning[]): Pairs {
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

export function describeSide(samples: readonly Sample[]): SideDescription {
  const description = describe(
    samples.map((sample) => sample.value),
    outlierMethod,
  );
  return {
    ...description,
    outlier_run_ids: description.outliers.indices.map((index) => (samples[index] as Sample).run_id),
  };
}

export function settingsOf(input: CompareSamplesInput): CompareSettings {
  const settings: CompareSettings = {
    threshold: input.practical_threshold ?? compareDefaults.practical_threshold,
    level: input.confidence_level ?? compareDefaults.confidence_level,
    minimumSamples: input.minimum_samples ?? compareDefaults.minimum_samples,
    maximumCv: input.maximum_cv ?? compareDefaults.maximum_cv,
    maximumOutlierFraction: input.maximum_outlier_fraction ?? compareDefaults.maximum_outlier_fraction,
    maximumFailedFraction: input.maximum_failed_fraction ?? compareDefaults.maximum_failed_fraction,
    failed: { baseline: input.failed_counts?.baseline ?? 0, candidate: input.failed_counts?.candidate ?? 0 },
    excluded: { baseline: input.excluded?.baseline ?? 0, candidate: input.excluded?.candidate ?? 0 },
  };
  requireNumber("practical_threshold", settings.threshold, 0, 1, false, true);
  requireNumber("confidence_level", settings.level, 0, 1, true, true);
  requireNumber("minimum_samples", settings.minimumSamples, 1, Number.MAX_SAFE_INTEGER);
  requireNumber("maximum_cv", settings.maximumCv, 0, Infinity, true);
  requireNumber("maximum_outlier_fraction", settings.maximumOutlierFraction, 0, 1);
  requireNumber("maximum_failed_fraction", settings.maximumFailedFraction, 0, 1);
  for (const side of sides) {
    if (!Number.isInteger(settings.failed[side]) || settings.failed[side] < 0)
      throw new RangeError(`failed_counts.${side} must be a non-negative integer`);
    if (!Number.isInteger(settings.excluded[side]) || settings.excluded[side] < 0)
      throw new RangeError(`excluded.${side} must be a non-negative integer`);
  }
  return settings;
}

/** A ratio needs finite positive values; the others are excluded, and their presence invalidates the comparison. */
export function eligibleSamples(input: CompareSamplesInput, findings: Findings): { eligible: PerSide<Sample[]>; invalid: PerSide<number> } {
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
    findings.reasons.push({ code: "invalid_values", message });
    findings.mismatches.push({ code: "nonpositive_values", message, severity: "invalidating" });
  }
  return { eligible, invalid };
}

export function countsOf(
  input: CompareSamplesInput,
  settings: CompareSettings,
  eligible: PerSide<Sample[]>,
  invalid: PerSide<number>,
): ComparisonStatistics["counts"] {
  const { failed, excluded } = settings;
  return {
    attempted: {
      baseline: input.baseline.length + failed.baseline + excluded.baseline,
      candidate: input.candidate.length + failed.candidate + excluded.candidate,
    },
    eligible: { baseline: eligible.baseline.length, candidate: eligible.candidate.length },
    failed,
    excluded: { baseline: excluded.baseline + invalid.baseline, candidate: excluded.candidate + invalid.candidate },
    pairs: null,
  };
}

/** "auto" pairs when every sample on both sides carries a block key (and there is a sample at all). */
export function pairingOf(input: CompareSamplesInput): Pairing {
  if (input.pairing !== "auto") return input.pairing;
  const all = [...input.baseline, ...input.candidate];
  return all.length > 0 && all.every((sample) => sample.block !== undefined && sample.block !== null) ? "paired" : "unpaired";
}

/** Failures can depend on the treatment, so more than the allowed share of them blocks a verdict. */
export function failedTrialReasons(counts: ComparisonStatistics["counts"], settings: CompareSettings, findings: Findings): void {
  for (const side of sides) {
    const attempted = counts.attempted[side];
    const failed = settings.failed[side];
    const share = attempted === 0 ? 0 : failed / attempted;
    if (failed > 0 && share > settings.maximumFailedFraction) {
      findings.reasons.push({
        code: "failed_trials",
        message: `${failed} of ${attempted} ${side} trial(s) failed (${formatPercent(share)} > allowed ${formatPercent(settings.maximumFailedFraction)}); failures can depend on the treatment, so the survivors are not a fair sample.`,
      });
    }
  }
}

export function shortSampleReasons(
  perSide: PerSide<SideDescription>,
  minimumDuration: number | null | undefined,
  findings: Findings,
): void {
  if (minimumDuration === undefined || minimumDuration === null) return;
  for (const side of sides) {
    const shortest = perSide[side].min;
    if (perSide[side].n > 0 && shortest < minimumDuration) {
      findings.reasons.push({
        code: "samples_too_short",
        message: `The shortest ${side} sample is ${shortest} ns, below the ${minimumDuration} ns minimum; timer resolution and start-up noise dominate such samples.`,
      });
    }
  }
}

/** The values entering the estimate: complete pairs when paired, each side otherwise; too few of them blocks. */
export function estimateInputs(
  pairing: Pairing,
  eligible: PerSide<Sample[]>,
  minimumSamples: number,
  counts: ComparisonStatistics["counts"],
  findings: Findings,
): { pairs: Pairs | null } {
  if (pairing === "paired") {
    const pairs = buildPairs(eligible.baseline, eligible.candidate, findings.warnings);
    counts.pairs = pairs.blocks.length;
    if (pairs.blocks.length < minimumSamples) {
      findings.reasons.push({
        code: "too_few_samples",
        message: `${pairs.blocks.length} complete pair(s); at least ${minimumSamples} are required for a verdict.`,
      });
    }
    return { pairs };
  }
  const short = sides.filter((side) => eligible[side].length < minimumSamples);
  if (short.length > 0) {
    findings.reasons.push({
      code: "too_few_samples",
      message: `${short.map((side) => `${side} has ${eligible[side].length}`).join(", ")} eligible sample(s); at least ${minimumSamples} per side are required for a verdict.`,
    });
  }
  return { pairs: null };
}

/**
 * Noise and outliers, measured on what the interval sees: log values (paired: log ratios, divided by √2
 * because a ratio carries the noise of two measurements).
 */
export function noiseChecks(
  pairing: Pairing,
  pairs: Pairs | null,
  eligible: PerSide<Sample[]>,
  perSide: PerSide<SideDescription>,
  settings: CompareSettings,
  findings: Findings,
): void {
  const noisy: string[] = [];
  if (pairs !== null && pairs.blocks.length >= 2) pairedNoise(pairs, settings, findings, noisy);
  else if (pairing === "unpaired") for (const side of sides) unpairedNoise(side, eligible[side], perSide[side], settings, findings, noisy);
  for (const side of sides) {
    const description = perSide[side];
    if (description.n >= 2 && description.cv > compareDefaults.warning_cv) noisy.push(`${side} σ/μ ${formatPercent(description.cv)}`);
    if (description.outliers.indices.length > 0) {
      findings.warnings.push({
        code: "outliers_present",
        message: `${description.outliers.indices.length} ${side} outlier(s) by ${description.outliers.method} (kept, not dropped): ${description.outlier_run_ids.join(", ")}.`,
      });
    }
  }
  if (noisy.length > 0) {
    findings.warnings.push({
      code: "noisy_samples",
      message: `Dispersion above ${formatPercent(compareDefaults.warning_cv)}: ${noisy.join("; ")}.`,
    });
  }
}

/**
 * The noise of log values as the smaller of their standard deviation and 1.4826·MAD: noise counts as high
 * only when both say so. The standard deviation of 5 values is stable on normal data but one outlier
 * inflates it; the MAD ignores outliers but at 5 values reads 10 % noise as over 25 % about once in 50.
 */
function logScaleNoise(logValues: ArrayLike<number>): number {
  return Math.min(standardDeviation(logValues), medianAbsoluteDeviation(logValues) * madNormalConsistency);
}

function pairedNoise(pairs: Pairs, settings: CompareSettings, findings: Findings, noisy: string[]): void {
  const logRatios = pairs.baseline.map((value, index) => Math.log((pairs.candidate[index] as number) / value));
  const perMeasurementNoise = logScaleNoise(logRatios) / Math.SQRT2;
  if (perMeasurementNoise > settings.maximumCv) {
    findings.reasons.push({
      code: "high_variation",
      message: `Per-measurement noise estimated from the paired log ratios (/ √2) is ${formatPercent(perMeasurementNoise)} (> ${formatPercent(settings.maximumCv)}).`,
    });
  } else if (perMeasurementNoise > compareDefaults.warning_cv) noisy.push(`paired log ratios ${formatPercent(perMeasurementNoise)}`);
  const ratioOutliers = detectOutliers(logRatios, outlierMethod);
  const share = ratioOutliers.indices.length / logRatios.length;
  if (logRatios.length >= minimumForOutlierBlocking && share > settings.maximumOutlierFraction) {
    findings.reasons.push({
      code: "too_many_outliers",
      message: `${ratioOutliers.indices.length} of ${logRatios.length} paired log ratios are outliers (${ratioOutliers.method}), above the allowed ${formatPercent(settings.maximumOutlierFraction)}.`,
    });
  }
}

function unpairedNoise(
  side: "baseline" | "candidate",
  samples: readonly Sample[],
  description: SideDescription,
  settings: CompareSettings,
  findings: Findings,
  noisy: string[],
): void {
  if (description.n < 2) return;
  const noise = logScaleNoise(samples.map((sample) => Math.log(sample.value)));
  if (noise > settings.maximumCv) {
    findings.reasons.push({
      code: "high_variation",
      message: `${side} noise on the log scale is ${formatPercent(noise)} (> ${formatPercent(settings.maximumCv)}).`,
    });
  } else if (noise > compareDefaults.warning_cv) noisy.push(`${side} log-scale noise ${formatPercent(noise)}`);
  const share = description.outliers.indices.length / description.n;
  if (description.n >= minimumForOutlierBlocking && share > settings.maximumOutlierFraction) {
    findings.reasons.push({
      code: "too_many_outliers",
      message: `${description.outliers.indices.length} of ${description.n} ${side} samples are outliers (${description.outliers.method}), above the allowed ${formatPercent(settings.maximumOutlierFraction)}.`,
    });
  }
}
