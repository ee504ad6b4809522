/**
 * What a design can detect under the decision rule of compare.ts: the smallest ratio candidate/baseline
 * whose t interval lies above 1 + practical_threshold with the given power, for lognormal noise of a given
 * coefficient of variation. Standard normal-theory approximation of the power of a one-sided t test,
 * log(ratio) = log(1 + t) + (t_{1−α/2, df} + t_{power, df}) · se; design-power.test.ts checks it against
 * seeded simulations of the rule itself.
 */
import { studentTQuantile } from "./distributions.ts";

export type PowerDesign = {
  /** Values per side (paired: complete pairs). */
  samples_per_side: number;
  pairing: "paired" | "unpaired";
  /** Assumed relative noise of one measurement (0.1 = 10 %). */
  noise_cv: number;
  confidence_level: number;
  practical_threshold: number;
  /** Default 0.8. */
  power?: number;
};

/** Standard error and degrees of freedom of the log-ratio estimate for equal sides. */
function samplingOf(design: PowerDesign): { standardError: number; degrees: number } {
  const sigma = Math.sqrt(Math.log1p(design.noise_cv * design.noise_cv));
  const n = design.samples_per_side;
  return design.pairing === "paired"
    ? { standardError: (Math.SQRT2 * sigma) / Math.sqrt(n), degrees: n - 1 }
    : { standardError: sigma * Math.sqrt(2 / n), degrees: 2 * n - 2 };
}

/** The smallest detectable ratio (> 1); Infinity with fewer than 2 values per side. */
export function minimumDetectableRatio(design: PowerDesign): number {
  if (design.samples_per_side < 2) return Number.POSITIVE_INFINITY;
  const { standardError, degrees } = samplingOf(design);
  const critical = studentTQuantile(1 - (1 - design.confidence_level) / 2, degrees);
  const powerQuantile = studentTQuantile(design.power ?? 0.8, degrees);
  return (1 + design.practical_threshold) * Math.exp((critical + powerQuantile) * standardError);
}

/** The fewest values per side (from `minimum`, at most 1000) that detect `ratio`; null when 1000 do not. */
export function samplesToDetect(design: Omit<PowerDesign, "samples_per_side">, ratio: number, minimum = 2): number | null {
  for (let n = Math.max(2, minimum); n <= 1000; n += 1) {
    if (minimumDetectableRatio({ ...design, samples_per_side: n }) <= ratio) return n;
  }
  return null;
}
