/**
 * Descriptive statistics over plain numbers. Inputs are never mutated; the `*InPlace` helpers work on
 * scratch buffers their caller owns (median, quantiles).
 */

export type Numbers = ArrayLike<number>;

function requireNonEmpty(values: Numbers, what: string): void {
  if (values.length === 0) throw new RangeError(`${what} of an empty sample is undefined`);
}

function sortedCopy(values: Numbers): Float64Array {
  const copy = Float64Array.from(values as ArrayLike<number>);
  copy.sort();
  return copy;
}

/**
 * k-th smallest (0-based) of buffer[0..length) by Hoare-partition quickselect with a median-of-three pivot.
 * Reorders the buffer. Average O(n), which keeps medians of large samples cheap.
 */
export function selectInPlace(buffer: Float64Array, length: number, k: number): number {
  let left = 0;
  let right = length - 1;
  while (right > left) {
    if (right === left + 1) {
      // Two left: order them directly (median-of-three would read one slot twice).
      if ((buffer[right] as number) < (buffer[left] as number)) {
        const held = buffer[left] as number;
        buffer[left] = buffer[right] as number;
        buffer[right] = held;
      }
      return buffer[k] as number;
    }
    const middle = (left + right) >>> 1;
    // Median of three, placed so that buffer[left] ≤ buffer[middle] ≤ buffer[right].
    // Plain temporaries: a destructuring swap allocates an array in the hottest loop of the bootstrap.
    let a = buffer[left] as number;
    let b = buffer[middle] as number;
    let c = buffer[right] as number;
    let held: number;
    if (b < a) {
      held = a;
      a = b;
      b = held;
    }
    if (c < b) {
      held = b;
      b = c;
      c = held;
      if (b < a) {
        held = a;
        a = b;
        b = held;
      }
    }
    buffer[left] = a;
    buffer[middle] = b;
    buffer[right] = c;
    const pivot = b;
    let i = left;
    let j = right;
    while (i <= j) {
      while ((buffer[i] as number) < pivot) i += 1;
      while ((buffer[j] as number) > pivot) j -= 1;
      if (i <= j) {
        const held = buffer[i] as number;
        buffer[i] = buffer[j] as number;
        buffer[j] = held;
        i += 1;
        j -= 1;
      }
    }
    if (k <= j) right = j;
    else if (k >= i) left = i;
    else return buffer[k] as number;
  }
  return buffer[k] as number;
}

/** Median of buffer[0..length); reorders the buffer. */
export function medianInPlace(buffer: Float64Array, length: number): number {
  const half = length >>> 1;
  const upper = selectInPlace(buffer, length, half);
  if (length % 2 === 1) return upper;
  // After selecting `half`, everything in [0, half) is ≤ upper; the lower middle is their maximum.
  let lower = -Infinity;
  for (let index = 0; index < half; index += 1) {
    const value = buffer[index] as number;
    if (value > lower) lower = value;
  }
  return (lower + upper) / 2;
}

export function median(values: Numbers): number {
  requireNonEmpty(values, "median");
  const buffer = Float64Array.from(values as ArrayLike<number>);
  return medianInPlace(buffer, buffer.length);
}

/** Quantile of an already ascending-sorted sample, Hyndman & Fan type 7 (R's default, NumPy "linear"). */
export function quantileSorted(sorted: Numbers, probability: number): number {
  requireNonEmpty(sorted, "quantile");
  if (!(probability >= 0 && probability <= 1)) throw new RangeError(`probability must be in [0, 1], got ${probability}`);
  const position = (sorted.length - 1) * probability;
  const below = Math.floor(position);
  const above = Math.min(below + 1, sorted.length - 1);
  const fraction = position - below;
  const low = sorted[below] as number;
  const high = sorted[above] as number;
  return fraction === 0 ? low : low + (high - low) * fraction;
}

/** Type-7 quantile (linear interpolation between order statistics). */
export function quantile(values: Numbers, probability: number): number {
  return quantileSorted(sortedCopy(values), probability);
}

export function quantiles(values: Numbers, probabilities: readonly number[]): number[] {
  const sorted = sortedCopy(values);
  return probabilities.map((probability) => quantileSorted(sorted, probability));
}

export function mean(values: Numbers): number {
  requireNonEmpty(values, "mean");
  let total = 0;
  for (let index = 0; index < values.length; index += 1) total += values[index] as number;
  return total / values.length;
}

/** Sample standard deviation (n − 1 denominator); 0 for a single value. */
export function standardDeviation(values: Numbers): number {
  requireNonEmpty(values, "standard deviation");
  if (values.length < 2) return 0;
  const centre = mean(values);
  let squares = 0;
  for (let index = 0; index < values.length; index += 1) {
    const deviation = (values[index] as number) - centre;
    squares += deviation * deviation;
  }
  return Math.sqrt(squares / (values.length - 1));
}

/** 1/Φ⁻¹(3/4): makes the MAD a consistent estimator of σ for normal data. */
export const madNormalConsistency = 1.482602218505602;

/** Median absolute deviation from the median. `scaled` multiplies by 1.4826 (σ-consistent). */
export function medianAbsoluteDeviation(values: Numbers, options: { scaled?: boolean } = {}): number {
  requireNonEmpty(values, "median absolute deviation");
  const centre = median(values);
  const deviations = new Float64Array(values.length);
  for (let index = 0; index < values.length; index += 1) deviations[index] = Math.abs((values[index] as number) - centre);
  const raw = medianInPlace(deviations, deviations.length);
  return options.scaled ? raw * madNormalConsistency : raw;
}

/** σ/μ (sample σ). NaN when the mean is 0. */
export function coefficientOfVariation(values: Numbers): number {
  const centre = mean(values);
  return centre === 0 ? Number.NaN : standardDeviation(values) / Math.abs(centre);
}

/**
 * 1.4826·MAD / median: the dispersion that governs a median-based estimate, and unlike σ/μ not blown up by
 * a single outlier. NaN when the median is 0.
 */
export function robustCoefficientOfVariation(values: Numbers): number {
  const centre = median(values);
  return centre === 0 ? Number.NaN : medianAbsoluteDeviation(values, { scaled: true }) / Math.abs(centre);
}

export type OutlierMethod = "tukey_fences_1.5_iqr" | "tukey_fences_3_iqr" | "modified_z_score_3.5";

export type OutlierReport = {
  method: OutlierMethod;
  /** Values outside [lower_fence, upper_fence] are outliers. */
  lower_fence: number;
  upper_fence: number;
  /** Positions in the input, ascending. */
  indices: number[];
};

/**
 * Flags outliers without removing them (criterion's practice: report, count, keep).
 * - `tukey_fences_1.5_iqr` / `tukey_fences_3_iqr`: outside [Q1 − k·IQR, Q3 + k·IQR], type-7 quartiles.
 * - `modified_z_score_3.5`: |x − median| / (1.4826·MAD) > 3.5 (Iglewicz & Hoaglin); no outliers when MAD = 0.
 */
export function detectOutliers(values: Numbers, method: OutlierMethod = "tukey_fences_1.5_iqr"): OutlierReport {
  if (values.length === 0) return { method, lower_fence: Number.NaN, upper_fence: Number.NaN, indices: [] };
  let lowerFence: number;
  let upperFence: number;
  if (method === "modified_z_score_3.5") {
    const centre = median(values);
    const spread = medianAbsoluteDeviation(values, { scaled: true });
    lowerFence = spread === 0 ? -Infinity : centre - 3.5 * spread;
    upperFence = spread === 0 ? Infinity : centre + 3.5 * spread;
  } else {
    const [first, third] = quantiles(values, [0.25, 0.75]) as [number, number];
    const multiplier = method === "tukey_fences_3_iqr" ? 3 : 1.5;
    const range = third - first;
    lowerFence = first - multiplier * range;
    upperFence = third + multiplier * range;
  }
  const indices: number[] = [];
  for (let index = 0; index < values.length; index += 1) {
    const value = values[index] as number;
    if (value < lowerFence || value > upperFence) indices.push(index);
  }
  return { method, lower_fence: lowerFence, upper_fence: upperFence, indices };
}

export type Description = {
  n: number;
  median: number;
  mean: number;
  standard_deviation: number;
  /** σ/μ. */
  cv: number;
  /** 1.4826·MAD/median. */
  robust_cv: number;
  /** Unscaled median absolute deviation. */
  mad: number;
  min: number;
  max: number;
  outliers: OutlierReport;
};

export function describe(values: Numbers, outlierMethod: OutlierMethod = "tukey_fences_1.5_iqr"): Description {
  if (values.length === 0) {
    return {
      n: 0,
      median: Number.NaN,
      mean: Number.NaN,
      standard_deviation: Number.NaN,
      cv: Number.NaN,
      robust_cv: Number.NaN,
      mad: Number.NaN,
      min: Number.NaN,
      max: Number.NaN,
      outliers: detectOutliers(values, outlierMethod),
    };
  }
  let min = Infinity;
  let max = -Infinity;
  for (let index = 0; index < values.length; index += 1) {
    const value = values[index] as number;
    if (value < min) min = value;
    if (value > max) max = value;
  }
  return {
    n: values.length,
    median: median(values),
    mean: mean(values),
    standard_deviation: standardDeviation(values),
    cv: coefficientOfVariation(values),
    robust_cv: robustCoefficientOfVariation(values),
    mad: medianAbsoluteDeviation(values),
    min,
    max,
    outliers: detectOutliers(values, outlierMethod),
  };
}
