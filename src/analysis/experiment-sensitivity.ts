/**
 * What plan_experiment says about a design before anything runs: the smallest change two of its
 * treatments can be told apart by (design-power.ts, at an assumed noise), and the warnings for a design
 * that cannot reach a verdict at all or only for large changes.
 */
import type { ExperimentStatistics } from "../domain/experiment.ts";
import { compareDefaults } from "./statistics/compare.ts";
import { minimumDetectableRatio, samplesToDetect } from "./statistics/design-power.ts";

/** Per-measurement noise assumed for the estimate: short CPU-bound processes on a shared machine measure 5–8 %. */
export const assumedNoiseCv = 0.1;
/** Power the detectable change is quoted at. */
export const quotedPower = 0.8;
/** Warn when the design cannot detect a change smaller than this ratio. */
export const largestUsefulDetectableRatio = 1.5;
/** The change the warning says how many blocks would detect. */
const referenceRatio = 1.2;

export type DetectableChange = {
  /** Smallest ratio candidate/baseline (or its inverse) called regressed/improved with `power`; null when no verdict is possible. */
  ratio: number | null;
  samples_per_side: number;
  pairing: "paired";
  assumed_noise_cv: number;
  power: number;
  confidence_level: number;
  practical_threshold: number;
  /** Blocks that would detect a 20 % change under the same assumptions. */
  blocks_for_20_percent: number | null;
};

export function designSensitivity(
  blocks: number,
  statistics: ExperimentStatistics,
): { detectable_change: DetectableChange; warnings: string[] } {
  const assumptions = {
    pairing: "paired" as const,
    noise_cv: assumedNoiseCv,
    confidence_level: statistics.confidence_level,
    practical_threshold: statistics.practical_threshold,
    power: quotedPower,
  };
  const possible = blocks >= compareDefaults.minimum_samples;
  const ratio = possible ? minimumDetectableRatio({ ...assumptions, samples_per_side: blocks }) : null;
  const blocksFor20 = samplesToDetect(assumptions, referenceRatio, compareDefaults.minimum_samples);
  const warnings: string[] = [];
  const raise = blocksFor20 === null ? "" : ` ${blocksFor20} blocks would detect a ${Math.round((referenceRatio - 1) * 100)} % change.`;
  if (!possible) {
    warnings.push(
      `With blocks = ${blocks} each treatment gets ${blocks} measured trial(s); a comparison needs ${compareDefaults.minimum_samples} per side for a verdict, so it can only describe the ratio.${raise} Raise blocks with configure_experiment.`,
    );
  } else if (ratio !== null && ratio > largestUsefulDetectableRatio) {
    warnings.push(
      `This design detects only changes of ×${ratio.toFixed(2)} or more (${Math.round(quotedPower * 100)} % power at ${Math.round(assumedNoiseCv * 100)} % noise, interval at ${statistics.confidence_level} beyond ±${statistics.practical_threshold * 100} %); smaller ones end inconclusive.${raise}`,
    );
  }
  if (statistics.polarity === "neutral") {
    warnings.push(
      `polarity is neutral for metric ${statistics.primary_metric}: a change is reported with its direction but never called regressed or improved. Declare polarity (configure_experiment) for a verdict.`,
    );
  }
  return {
    detectable_change: {
      ratio,
      samples_per_side: blocks,
      pairing: "paired",
      assumed_noise_cv: assumedNoiseCv,
      power: quotedPower,
      confidence_level: statistics.confidence_level,
      practical_threshold: statistics.practical_threshold,
      blocks_for_20_percent: blocksFor20,
    },
    warnings,
  };
}
