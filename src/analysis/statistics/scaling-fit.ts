/**
 * Cost-versus-size fits for `analyze_scaling`.
 *
 * Candidate models, each cost = a + b·g(n): constant (g = 0, one coefficient), linear (g = n),
 * n_log_n (g = n·ln n), quadratic (g = n²).
 *
 * Fit: weighted least squares with weights 1/cost², i.e. minimizing squared *relative* residuals. Timing noise
 * is multiplicative (a few percent of the value at every size); unweighted least squares would let the largest
 * sizes decide everything and make small-size curvature invisible.
 *
 * Selection: lowest AICc (AIC with the small-sample correction; plain AIC when there are too few points for
 * it), computed from the weighted residual sum of squares with the noise variance counted as a parameter.
 * Models within `indistinguishable_delta` (default 2, Burnham & Anderson's "substantial support") of the best
 * are reported in a `models_indistinguishable` reason and `distinguishable` is false; the best is still named.
 *
 * Independent cross-check: the log-log slope (power-law exponent) by ordinary least squares on
 * (ln n, ln cost), with a Student-t CI. It is what `fastestGrowing` ranks by, since it compares across
 * series without committing to a model family. With a large constant term it understates the asymptotic
 * exponent over small sizes; that is a property of the data range, reported, not corrected.
 */
import { studentTQuantile } from "./distributions.ts";

export type ScalingPoint = { size: number; cost: number };
export type ScalingModelName = "constant" | "linear" | "n_log_n" | "quadratic";

export type ScalingModelFit = {
  model: ScalingModelName;
  complexity: "O(1)" | "O(n)" | "O(n log n)" | "O(n^2)";
  /** cost ≈ intercept + slope·g(n); slope is 0 for the constant model. */
  coefficients: { intercept: number; slope: number };
  /** Weighted R² (same weights as the fit); 0 for the constant model by construction. */
  r_squared: number;
  weighted_residual_sum_of_squares: number;
  parameters: number;
  aic: number;
  /** AICc, or AIC when points ≤ parameters + 1. */
  aicc: number;
  bic: number;
  /** aicc − min aicc. */
  delta_aicc: number;
};

export type ExponentEstimate = {
  value: number;
  lower: number;
  upper: number;
  level: number;
  /** R² of the log-log line. */
  r_squared: number;
  method: "ols_log_log_slope_student_t";
};

export type ScalingReason = { code: string; message: string };

export type ScalingAnalysis = {
  fit_method: "weighted_least_squares_relative_residuals";
  selection: "minimum_aicc";
  points: number;
  distinct_sizes: number;
  models: ScalingModelFit[];
  best_model: ScalingModelName | null;
  distinguishable: boolean;
  exponent_estimate: ExponentEstimate | null;
  reasons: ScalingReason[];
};

export type ScalingOptions = {
  confidence_level?: number;
  /** ΔAICc below which two models are reported as indistinguishable. Default 2. */
  indistinguishable_delta?: number;
};

/** Fewer distinct sizes cannot separate a line from a curve. */
export const minimumDistinctSizes = 3;

const modelTransforms: Record<Exclude<ScalingModelName, "constant">, (size: number) => number> = {
  linear: (size) => size,
  n_log_n: (size) => size * Math.log(size),
  quadratic: (size) => size * size,
};

const complexityByModel: Record<ScalingModelName, ScalingModelFit["complexity"]> = {
  constant: "O(1)",
  linear: "O(n)",
  n_log_n: "O(n log n)",
  quadratic: "O(n^2)",
};

function informationCriteria(residualSum: number, points: number, coefficients: number) {
  // The noise variance is estimated too, hence + 1. A perfect fit gets a floor so logs stay finite.
  const parameters = coefficients + 1;
  const logLikelihoodTerm = points * Math.log(Math.max(residualSum, Number.MIN_VALUE) / points);
  const aic = logLikelihoodTerm + 2 * parameters;
  const aicc = points - parameters - 1 > 0 ? aic + (2 * parameters * (parameters + 1)) / (points - parameters - 1) : aic;
  const bic = logLikelihoodTerm + parameters * Math.log(points);
  return { aic, aicc, bic, parameters: coefficients };
}

function fitModel(model: ScalingModelName, points: readonly ScalingPoint[]): Omit<ScalingModelFit, "delta_aicc"> {
  const weights = points.map((point) => 1 / (point.cost * point.cost));
  let weightSum = 0;
  let weightedCost = 0;
  for (let index = 0; index < points.length; index += 1) {
    weightSum += weights[index] as number;
    weightedCost += (weights[index] as number) * (points[index] as ScalingPoint).cost;
  }
  const meanCost = weightedCost / weightSum;
  let totalSum = 0;
  for (let index = 0; index < points.length; index += 1) {
    totalSum += (weights[index] as number) * ((points[index] as ScalingPoint).cost - meanCost) ** 2;
  }
  let intercept = meanCost;
  let slope = 0;
  if (model !== "constant") {
    const transform = modelTransforms[model];
    const g = points.map((point) => transform(point.size));
    // Scale g to order 1 before forming sums, so n² at large n does not cost precision.
    const scale = Math.max(...g.map(Math.abs)) || 1;
    let weightedG = 0;
    for (let index = 0; index < points.length; index += 1) weightedG += ((weights[index] as number) * (g[index] as number)) / scale;
    const meanG = weightedG / weightSum;
    let sxy = 0;
    let sxx = 0;
    for (let index = 0; index < points.length; index += 1) {
      const dx = (g[index] as number) / scale - meanG;
      sxy += (weights[index] as number) * dx * ((points[index] as ScalingPoint).cost - meanCost);
      sxx += (weights[index] as number) * dx * dx;
    }
    const scaledSlope = sxx > 0 ? sxy / sxx : 0;
    intercept = meanCost - scaledSlope * meanG;
    slope = scaledSlope / scale;
  }
  let residualSum = 0;
  const transform = model === "constant" ? () => 0 : modelTransforms[model];
  for (let index = 0; index < points.length; index += 1) {
    const point = points[index] as ScalingPoint;
    residualSum += (weights[index] as number) * (point.cost - intercept - slope * transform(point.size)) ** 2;
  }
  const criteria = informationCriteria(residualSum, points.length, model === "constant" ? 1 : 2);
  return {
    model,
    complexity: complexityByModel[model],
    coefficients: { intercept, slope },
    r_squared: totalSum > 0 ? 1 - residualSum / totalSum : model === "constant" ? 0 : 1,
    weighted_residual_sum_of_squares: residualSum,
    parameters: criteria.parameters,
    aic: criteria.aic,
    aicc: criteria.aicc,
    bic: criteria.bic,
  };
}

function logLogExponent(points: readonly ScalingPoint[], level: number): ExponentEstimate {
  const x = points.map((point) => Math.log(point.size));
  const y = points.map((point) => Math.log(point.cost));
  const count = points.length;
  const meanX = x.reduce((total, value) => total + value, 0) / count;
  const meanY = y.reduce((total, value) => total + value, 0) / count;
  let sxx = 0;
  let sxy = 0;
  let syy = 0;
  for (let index = 0; index < count; index += 1) {
    const dx = (x[index] as number) - meanX;
    const dy = (y[index] as number) - meanY;
    sxx += dx * dx;
    sxy += dx * dy;
    syy += dy * dy;
  }
  const slope = sxy / sxx;
  const residualSum = Math.max(0, syy - slope * sxy);
  const degrees = count - 2;
  const standardError = degrees > 0 ? Math.sqrt(residualSum / degrees / sxx) : Number.NaN;
  const critical = degrees > 0 ? studentTQuantile(1 - (1 - level) / 2, degrees) : Number.NaN;
  return {
    value: slope,
    lower: slope - critical * standardError,
    upper: slope + critical * standardError,
    level,
    r_squared: syy > 0 ? 1 - residualSum / syy : 1,
    method: "ols_log_log_slope_student_t",
  };
}

export function analyzeScaling(points: readonly ScalingPoint[], options: ScalingOptions = {}): ScalingAnalysis {
  const level = options.confidence_level ?? 0.95;
  const delta = options.indistinguishable_delta ?? 2;
  if (!(level > 0 && level < 1)) throw new RangeError(`confidence_level must be in (0, 1), got ${level}`);
  const reasons: ScalingReason[] = [];
  const usable = points.filter((point) => Number.isFinite(point.size) && point.size > 0 && Number.isFinite(point.cost) && point.cost > 0);
  if (usable.length < points.length) {
    reasons.push({
      code: "invalid_points",
      message: `${points.length - usable.length} point(s) with a non-positive or non-finite size or cost were left out.`,
    });
  }
  const distinctSizes = new Set(usable.map((point) => point.size)).size;
  const base = {
    fit_method: "weighted_least_squares_relative_residuals" as const,
    selection: "minimum_aicc" as const,
    points: usable.length,
    distinct_sizes: distinctSizes,
  };
  if (distinctSizes < minimumDistinctSizes) {
    reasons.push({
      code: "too_few_sizes",
      message: `${distinctSizes} distinct size(s); at least ${minimumDistinctSizes} are needed to tell growth rates apart.`,
    });
    return { ...base, models: [], best_model: null, distinguishable: false, exponent_estimate: null, reasons };
  }
  const fits = (["constant", "linear", "n_log_n", "quadratic"] as const).map((model) => fitModel(model, usable));
  const best = Math.min(...fits.map((fit) => fit.aicc));
  const models: ScalingModelFit[] = fits.map((fit) => ({ ...fit, delta_aicc: fit.aicc - best }));
  const ranked = [...models].sort((left, right) => left.aicc - right.aicc);
  const bestFit = ranked[0] as ScalingModelFit;
  const close = ranked.slice(1).filter((fit) => fit.delta_aicc < delta);
  if (close.length > 0) {
    reasons.push({
      code: "models_indistinguishable",
      message: `${[bestFit, ...close].map((fit) => `${fit.model} (ΔAICc ${fit.delta_aicc.toFixed(2)})`).join(", ")} fit about equally well; widen the size range or add repetitions.`,
    });
  }
  const sizeSpan = Math.max(...usable.map((point) => point.size)) / Math.min(...usable.map((point) => point.size));
  if (sizeSpan < 10) {
    reasons.push({
      code: "narrow_size_range",
      message: `Sizes span a factor of ${sizeSpan.toFixed(1)}; a range of at least 10× separates growth rates more reliably.`,
    });
  }
  const exponent = logLogExponent(usable, level);
  reasons.push({
    code: "best_model",
    message: `${bestFit.model} (${bestFit.complexity}) has the lowest AICc; log-log exponent ${exponent.value.toFixed(3)} [${exponent.lower.toFixed(3)}, ${exponent.upper.toFixed(3)}].`,
  });
  return {
    ...base,
    models,
    best_model: bestFit.model,
    distinguishable: close.length === 0,
    exponent_estimate: exponent,
    reasons,
  };
}

export type GrowthRanking = {
  key: string;
  rank: number;
  exponent: number | null;
  exponent_lower: number | null;
  exponent_upper: number | null;
  best_model: ScalingModelName | null;
  distinguishable: boolean;
};

/**
 * Ranks series (e.g. one per hotspot) by fitted log-log exponent, fastest growing first; series that cannot
 * be fitted come last; ties keep key order so the ranking is deterministic.
 */
export function fastestGrowing(
  series: readonly { key: string; points: readonly ScalingPoint[] }[],
  options: ScalingOptions = {},
): GrowthRanking[] {
  const analysed = series.map((entry) => ({ key: entry.key, analysis: analyzeScaling(entry.points, options) }));
  analysed.sort((left, right) => {
    const leftExponent = left.analysis.exponent_estimate?.value ?? -Infinity;
    const rightExponent = right.analysis.exponent_estimate?.value ?? -Infinity;
    if (leftExponent !== rightExponent) return rightExponent - leftExponent;
    return left.key < right.key ? -1 : left.key > right.key ? 1 : 0;
  });
  return analysed.map((entry, index) => ({
    key: entry.key,
    rank: index + 1,
    exponent: entry.analysis.exponent_estimate?.value ?? null,
    exponent_lower: entry.analysis.exponent_estimate?.lower ?? null,
    exponent_upper: entry.analysis.exponent_estimate?.upper ?? null,
    best_model: entry.analysis.best_model,
    distinguishable: entry.analysis.distinguishable,
  }));
}
