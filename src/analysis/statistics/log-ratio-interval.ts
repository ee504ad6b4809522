/**
 * Student t intervals for the ratio candidate/baseline, built on the log scale and mapped back with exp(·):
 * - paired:   θ = mean_i log(candidate_i / baseline_i), standard error s/√n, n − 1 degrees of freedom
 *   (block pairing cancels block-level drift);
 * - unpaired: θ = mean log(candidate) − mean log(baseline), Welch's standard error and
 *   Welch–Satterthwaite degrees of freedom (no equal-variance assumption).
 * exp(θ) is the geometric-mean ratio. Timings are right-skewed and their noise is multiplicative, so on
 * the log scale they are close to normal; that is what makes the t interval usable at 5 samples, where
 * rank tests and bootstrap intervals cannot reach the level they claim (decision rule in compare.ts).
 * The p-value is the two-sided t test of θ = 0 on the same standard error and degrees of freedom.
 */
import { mean, type Numbers } from "./descriptive.ts";
import { studentTCdf, studentTQuantile } from "./distributions.ts";

export type LogRatioEstimator = "geometric_mean_of_paired_ratios" | "ratio_of_geometric_means";
export type LogRatioIntervalMethod = "student_t_paired_log_ratio" | "welch_t_log_ratio";
export type LogRatioTest = "paired_t_test_log_ratio_two_sided" | "welch_t_test_log_ratio_two_sided";

export type LogRatioInterval = {
  estimator: LogRatioEstimator;
  /** exp(θ̂): the geometric-mean ratio candidate/baseline. */
  estimate: number;
  lower: number;
  upper: number;
  level: number;
  method: LogRatioIntervalMethod;
  /** Standard error of θ̂ (log scale); 0 when every log ratio is equal. */
  log_standard_error: number;
  degrees_of_freedom: number;
  test: LogRatioTest;
  p_value: number;
};

function sampleVariance(values: Float64Array): number {
  const centre = mean(values);
  let squares = 0;
  for (const value of values) squares += (value - centre) ** 2;
  return squares / (values.length - 1);
}

function logsOf(values: Numbers, name: string): Float64Array {
  const logs = new Float64Array(values.length);
  for (let index = 0; index < values.length; index += 1) {
    const value = values[index] as number;
    if (!(Number.isFinite(value) && value > 0))
      throw new RangeError(`${name} must hold finite positive values; a ratio is undefined otherwise`);
    logs[index] = Math.log(value);
  }
  return logs;
}

/** The interval and test from θ̂, its standard error and degrees of freedom; a zero standard error collapses the interval. */
function finish(
  theta: number,
  standardError: number,
  degrees: number,
  level: number,
  names: { estimator: LogRatioEstimator; method: LogRatioIntervalMethod; test: LogRatioTest },
): LogRatioInterval {
  if (!(level > 0 && level < 1)) throw new RangeError(`confidence_level must be in (0, 1), got ${level}`);
  let halfWidth = 0;
  let pValue = theta === 0 ? 1 : 0;
  if (standardError > 0) {
    halfWidth = studentTQuantile(1 - (1 - level) / 2, degrees) * standardError;
    pValue = Math.min(1, 2 * studentTCdf(-Math.abs(theta / standardError), degrees));
  }
  return {
    ...names,
    estimate: Math.exp(theta),
    lower: Math.exp(theta - halfWidth),
    upper: Math.exp(theta + halfWidth),
    level,
    log_standard_error: standardError,
    degrees_of_freedom: degrees,
    p_value: pValue,
  };
}

/** Paired: needs at least 2 pairs; pairs are matched by position. */
export function pairedLogRatioInterval(baseline: Numbers, candidate: Numbers, level: number): LogRatioInterval {
  if (baseline.length !== candidate.length) throw new RangeError("paired samples must have equal length");
  if (baseline.length < 2) throw new RangeError("a paired interval needs at least 2 pairs");
  const logBaseline = logsOf(baseline, "baseline");
  const logCandidate = logsOf(candidate, "candidate");
  const differences = logCandidate.map((value, index) => value - (logBaseline[index] as number));
  const n = differences.length;
  return finish(mean(differences), Math.sqrt(sampleVariance(differences) / n), n - 1, level, {
    estimator: "geometric_mean_of_paired_ratios",
    method: "student_t_paired_log_ratio",
    test: "paired_t_test_log_ratio_two_sided",
  });
}

/** Unpaired (Welch): needs at least 2 values per side. */
export function welchLogRatioInterval(baseline: Numbers, candidate: Numbers, level: number): LogRatioInterval {
  if (baseline.length < 2 || candidate.length < 2) throw new RangeError("a Welch interval needs at least 2 values per side");
  const logBaseline = logsOf(baseline, "baseline");
  const logCandidate = logsOf(candidate, "candidate");
  const baselineShare = sampleVariance(logBaseline) / logBaseline.length;
  const candidateShare = sampleVariance(logCandidate) / logCandidate.length;
  const variance = baselineShare + candidateShare;
  // Welch–Satterthwaite; with both variances zero the interval collapses and the degrees of freedom are moot.
  const degrees =
    variance > 0
      ? variance ** 2 / (baselineShare ** 2 / (logBaseline.length - 1) + candidateShare ** 2 / (logCandidate.length - 1))
      : logBaseline.length + logCandidate.length - 2;
  return finish(mean(logCandidate) - mean(logBaseline), Math.sqrt(variance), degrees, level, {
    estimator: "ratio_of_geometric_means",
    method: "welch_t_log_ratio",
    test: "welch_t_test_log_ratio_two_sided",
  });
}
