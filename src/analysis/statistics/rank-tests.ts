/**
 * Two-sided rank tests used next to the bootstrap CI. They make no normality assumption, which matters for
 * timing data (right-skewed, occasional outliers).
 *
 * Conventions follow SciPy so that numbers can be cross-checked:
 * - Mann–Whitney: `statistic` is U of the first sample; two-sided p from max(U₁, U₂).
 * - Wilcoxon signed-rank: zero differences are dropped ("wilcox"); `statistic` is min(W⁺, W⁻).
 * - Exact null distributions when there are no ties (and, for Wilcoxon, no zeros) and the sample is small
 *   enough for exact integer counts in a double; otherwise the normal approximation with tie correction
 *   and, by default, a continuity correction of ½.
 */
import { normalSurvival } from "./distributions.ts";
import type { Numbers } from "./descriptive.ts";

export type RankTestMethod =
  | "mann_whitney_u_exact_two_sided"
  | "mann_whitney_u_normal_approximation_two_sided"
  | "wilcoxon_signed_rank_exact_two_sided"
  | "wilcoxon_signed_rank_normal_approximation_two_sided";

export type RankTestResult = {
  method: RankTestMethod;
  statistic: number;
  p_value: number;
  /** Standard normal score; null for exact tests. */
  z: number | null;
  continuity_correction: boolean;
  tie_correction: boolean;
  /** Observations that entered the ranks (Wilcoxon: non-zero differences). */
  n_effective: number;
};

export type RankTestOptions = {
  method?: "auto" | "exact" | "normal_approximation";
  /** Continuity correction for the normal approximation; default true. */
  continuity?: boolean;
};

/** Largest n₁ + n₂ for the automatic exact Mann–Whitney: C(50, 25) ≈ 1.3e14 is still an exact double. */
export const mannWhitneyExactLimit = 50;
/** Largest n for the automatic exact Wilcoxon: 2^50 subsets stay exact in a double. */
export const wilcoxonExactLimit = 50;

type Ranking = { ranks: Float64Array; tieSizes: number[] };

/** Average ("mid") ranks, 1-based, plus the sizes of tie groups longer than one. */
function rankWithTies(values: Numbers): Ranking {
  const order = Array.from({ length: values.length }, (_, index) => index);
  order.sort((left, right) => (values[left] as number) - (values[right] as number));
  const ranks = new Float64Array(values.length);
  const tieSizes: number[] = [];
  let start = 0;
  while (start < order.length) {
    let end = start + 1;
    const value = values[order[start] as number] as number;
    while (end < order.length && values[order[end] as number] === value) end += 1;
    const averageRank = (start + 1 + end) / 2;
    for (let position = start; position < end; position += 1) ranks[order[position] as number] = averageRank;
    if (end - start > 1) tieSizes.push(end - start);
    start = end;
  }
  return { ranks, tieSizes };
}

function requireFinite(values: Numbers, name: string): void {
  for (let index = 0; index < values.length; index += 1) {
    if (!Number.isFinite(values[index] as number)) throw new RangeError(`${name} contains a non-finite value`);
  }
}

/**
 * Counts of U = 0..m·n under H₀ for sample sizes m, n: the coefficients of the Gaussian binomial
 * [m+n choose m]_q, built as ∏ₖ (1 − q^{n+k}) / (1 − q^k) so every intermediate is an integer polynomial.
 */
function mannWhitneyCounts(m: number, n: number): Float64Array {
  const size = m * n + 1;
  const counts = new Float64Array(size);
  counts[0] = 1;
  for (let k = 1; k <= m; k += 1) {
    const shift = n + k;
    for (let u = size - 1; u >= shift; u -= 1) counts[u] = (counts[u] as number) - (counts[u - shift] as number);
    for (let u = k; u < size; u += 1) counts[u] = (counts[u] as number) + (counts[u - k] as number);
  }
  return counts;
}

/** Counts of W⁺ = 0..n(n+1)/2 under H₀: subsets of {1..n} by sum. */
function signedRankCounts(n: number): Float64Array {
  const size = (n * (n + 1)) / 2 + 1;
  const counts = new Float64Array(size);
  counts[0] = 1;
  for (let k = 1; k <= n; k += 1) {
    for (let sum = size - 1; sum >= k; sum -= 1) counts[sum] = (counts[sum] as number) + (counts[sum - k] as number);
  }
  return counts;
}

/** P(X ≥ value) from integer counts (value rounded up to the lattice). */
function upperTailFromCounts(counts: Float64Array, value: number, total: number): number {
  let tail = 0;
  for (let index = Math.max(0, Math.ceil(value - 1e-9)); index < counts.length; index += 1) tail += counts[index] as number;
  return tail / total;
}

/** P(X ≤ value) from integer counts. */
function lowerTailFromCounts(counts: Float64Array, value: number, total: number): number {
  let tail = 0;
  const last = Math.min(counts.length - 1, Math.floor(value + 1e-9));
  for (let index = 0; index <= last; index += 1) tail += counts[index] as number;
  return tail / total;
}

/** Mann–Whitney U test (Wilcoxon rank-sum), two-sided, of `first` vs `second`. */
export function mannWhitneyU(first: Numbers, second: Numbers, options: RankTestOptions = {}): RankTestResult {
  requireFinite(first, "first sample");
  requireFinite(second, "second sample");
  const n1 = first.length;
  const n2 = second.length;
  if (n1 === 0 || n2 === 0) throw new RangeError("Mann–Whitney U needs at least one value per sample");
  const continuity = options.continuity ?? true;
  const combined = new Float64Array(n1 + n2);
  combined.set(first as ArrayLike<number>, 0);
  combined.set(second as ArrayLike<number>, n1);
  const { ranks, tieSizes } = rankWithTies(combined);
  let rankSumFirst = 0;
  for (let index = 0; index < n1; index += 1) rankSumFirst += ranks[index] as number;
  const u1 = rankSumFirst - (n1 * (n1 + 1)) / 2;
  const u2 = n1 * n2 - u1;
  const larger = Math.max(u1, u2);
  const hasTies = tieSizes.length > 0;
  const requested = options.method ?? "auto";
  const exact = requested === "exact" || (requested === "auto" && !hasTies && n1 + n2 <= mannWhitneyExactLimit);
  if (exact) {
    const counts = mannWhitneyCounts(n1, n2);
    let total = 0;
    for (let index = 0; index < counts.length; index += 1) total += counts[index] as number;
    const pValue = Math.min(1, 2 * upperTailFromCounts(counts, larger, total));
    return {
      method: "mann_whitney_u_exact_two_sided",
      statistic: u1,
      p_value: pValue,
      z: null,
      continuity_correction: false,
      tie_correction: false,
      n_effective: n1 + n2,
    };
  }
  const n = n1 + n2;
  let tieTerm = 0;
  for (const size of tieSizes) tieTerm += size * size * size - size;
  const variance = ((n1 * n2) / 12) * (n + 1 - tieTerm / (n * (n - 1)));
  const centre = (n1 * n2) / 2;
  let z = 0;
  let pValue = 1;
  if (variance > 0) {
    z = (larger - centre - (continuity ? 0.5 : 0)) / Math.sqrt(variance);
    pValue = Math.min(1, 2 * normalSurvival(z));
  }
  return {
    method: "mann_whitney_u_normal_approximation_two_sided",
    statistic: u1,
    p_value: pValue,
    z,
    continuity_correction: continuity,
    tie_correction: hasTies,
    n_effective: n,
  };
}

/**
 * Wilcoxon signed-rank test, two-sided, on paired differences (e.g. log(candidate/baseline) per block).
 * Pass one array of differences, or two equal-length arrays (differences = second − first).
 */
export function wilcoxonSignedRank(differencesOrFirst: Numbers, second?: Numbers, options: RankTestOptions = {}): RankTestResult {
  let differences: Float64Array;
  if (second === undefined) {
    differences = Float64Array.from(differencesOrFirst as ArrayLike<number>);
  } else {
    if (second.length !== differencesOrFirst.length) throw new RangeError("paired samples must have equal length");
    differences = new Float64Array(second.length);
    for (let index = 0; index < second.length; index += 1) {
      differences[index] = (second[index] as number) - (differencesOrFirst[index] as number);
    }
  }
  requireFinite(differences, "differences");
  const continuity = options.continuity ?? true;
  const nonZero = differences.filter((value) => value !== 0);
  const n = nonZero.length;
  const zerosDropped = differences.length - n;
  if (n === 0) {
    return {
      method: "wilcoxon_signed_rank_normal_approximation_two_sided",
      statistic: 0,
      p_value: 1,
      z: 0,
      continuity_correction: continuity,
      tie_correction: false,
      n_effective: 0,
    };
  }
  const magnitudes = nonZero.map(Math.abs);
  const { ranks, tieSizes } = rankWithTies(magnitudes);
  let positive = 0;
  for (let index = 0; index < n; index += 1) if ((nonZero[index] as number) > 0) positive += ranks[index] as number;
  const totalRank = (n * (n + 1)) / 2;
  const negative = totalRank - positive;
  const smaller = Math.min(positive, negative);
  const hasTies = tieSizes.length > 0;
  const requested = options.method ?? "auto";
  const exact = requested === "exact" || (requested === "auto" && !hasTies && zerosDropped === 0 && n <= wilcoxonExactLimit);
  if (exact) {
    const counts = signedRankCounts(n);
    const total = 2 ** n;
    const pValue = Math.min(1, 2 * lowerTailFromCounts(counts, smaller, total));
    return {
      method: "wilcoxon_signed_rank_exact_two_sided",
      statistic: smaller,
      p_value: pValue,
      z: null,
      continuity_correction: false,
      tie_correction: false,
      n_effective: n,
    };
  }
  let tieTerm = 0;
  for (const size of tieSizes) tieTerm += size * size * size - size;
  const variance = (n * (n + 1) * (2 * n + 1)) / 24 - tieTerm / 48;
  const centre = totalRank / 2;
  let z = 0;
  let pValue = 1;
  if (variance > 0) {
    const offset = positive - centre;
    const correction = continuity ? 0.5 * Math.sign(offset) : 0;
    z = (offset - correction) / Math.sqrt(variance);
    pValue = Math.min(1, 2 * normalSurvival(Math.abs(z)));
  }
  return {
    method: "wilcoxon_signed_rank_normal_approximation_two_sided",
    statistic: smaller,
    p_value: pValue,
    z,
    continuity_correction: continuity,
    tie_correction: hasTies,
    n_effective: n,
  };
}
