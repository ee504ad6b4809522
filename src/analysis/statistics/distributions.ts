/**
 * The few distribution functions the tests and intervals need, written from their defining series and
 * continued fractions (no tables of fitted coefficients to mistype), accurate to ~1e-14 relative.
 */

const inverseSqrtTwoPi = 0.3989422804014327;

export function normalDensity(x: number): number {
  return inverseSqrtTwoPi * Math.exp(-0.5 * x * x);
}

/** Upper tail Q(x) = P(Z > x) for x ≥ 0, keeping relative accuracy far into the tail. */
function upperTailNonNegative(x: number): number {
  if (x < 3) {
    // Marsaglia's series: Φ(x) = ½ + φ(x)·(x + x³/3 + x⁵/(3·5) + …), converges for all x, fast for small x.
    let term = x;
    let total = x;
    const square = x * x;
    for (let k = 3; k < 400; k += 2) {
      term *= square / k;
      const next = total + term;
      if (next === total) break;
      total = next;
    }
    return 0.5 - normalDensity(x) * total;
  }
  // Laplace continued fraction Q(x) = φ(x) / (x + 1/(x + 2/(x + 3/(x + …)))), by modified Lentz.
  const tiny = 1e-300;
  let f = x;
  let c = x;
  let d = 0;
  for (let k = 1; k < 500; k += 1) {
    d = x + k * d;
    d = d === 0 ? tiny : d;
    c = x + k / c;
    c = c === 0 ? tiny : c;
    d = 1 / d;
    const delta = c * d;
    f *= delta;
    if (Math.abs(delta - 1) < 1e-16) break;
  }
  return normalDensity(x) / f;
}

/** Φ(x). */
export function normalCdf(x: number): number {
  if (Number.isNaN(x)) return Number.NaN;
  if (x === Infinity) return 1;
  if (x === -Infinity) return 0;
  return x >= 0 ? 1 - upperTailNonNegative(x) : upperTailNonNegative(-x);
}

/** 1 − Φ(x), accurate in the upper tail. */
export function normalSurvival(x: number): number {
  if (Number.isNaN(x)) return Number.NaN;
  if (x === Infinity) return 0;
  if (x === -Infinity) return 1;
  return x >= 0 ? upperTailNonNegative(x) : 1 - upperTailNonNegative(-x);
}

/** Φ⁻¹(p) by bracketing bisection refined with Newton steps on the accurate CDF. */
export function normalQuantile(probability: number): number {
  if (Number.isNaN(probability) || probability < 0 || probability > 1) return Number.NaN;
  if (probability === 0) return -Infinity;
  if (probability === 1) return Infinity;
  if (probability === 0.5) return 0;
  if (probability > 0.5) return -normalQuantile(1 - probability);
  // Lower half: solve Q(−x) = p via the tail function, which keeps precision for tiny p.
  let low = -40;
  let high = 0;
  for (let iteration = 0; iteration < 60; iteration += 1) {
    const middle = (low + high) / 2;
    if (upperTailNonNegative(-middle) > probability) high = middle;
    else low = middle;
  }
  let x = (low + high) / 2;
  for (let iteration = 0; iteration < 4; iteration += 1) {
    const density = normalDensity(x);
    if (density === 0) break;
    const step = (upperTailNonNegative(-x) - probability) / density;
    if (!Number.isFinite(step)) break;
    x -= step;
  }
  return x;
}

/** ln Γ(x) for x > 0 (Lanczos, g = 7, n = 9; the standard published coefficients). */
export function logGamma(x: number): number {
  const coefficients = [
    0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059, 12.507343278686905,
    -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7,
  ];
  if (x < 0.5) return Math.log(Math.PI / Math.abs(Math.sin(Math.PI * x))) - logGamma(1 - x);
  const shifted = x - 1;
  let series = coefficients[0] as number;
  for (let index = 1; index < 9; index += 1) series += (coefficients[index] as number) / (shifted + index);
  const t = shifted + 7.5;
  return 0.5 * Math.log(2 * Math.PI) + (shifted + 0.5) * Math.log(t) - t + Math.log(series);
}

/** Continued fraction for the regularized incomplete beta (modified Lentz). */
function betaContinuedFraction(a: number, b: number, x: number): number {
  const tiny = 1e-300;
  let c = 1;
  let d = 1 - ((a + b) * x) / (a + 1);
  d = Math.abs(d) < tiny ? tiny : d;
  d = 1 / d;
  let h = d;
  for (let m = 1; m <= 1000; m += 1) {
    const m2 = 2 * m;
    let numerator = (m * (b - m) * x) / ((a + m2 - 1) * (a + m2));
    d = 1 + numerator * d;
    d = Math.abs(d) < tiny ? tiny : d;
    c = 1 + numerator / c;
    c = Math.abs(c) < tiny ? tiny : c;
    d = 1 / d;
    h *= d * c;
    numerator = (-(a + m) * (a + b + m) * x) / ((a + m2) * (a + m2 + 1));
    d = 1 + numerator * d;
    d = Math.abs(d) < tiny ? tiny : d;
    c = 1 + numerator / c;
    c = Math.abs(c) < tiny ? tiny : c;
    d = 1 / d;
    const delta = d * c;
    h *= delta;
    if (Math.abs(delta - 1) < 1e-15) break;
  }
  return h;
}

/** Regularized incomplete beta I_x(a, b). */
export function regularizedIncompleteBeta(x: number, a: number, b: number): number {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const logFront = logGamma(a + b) - logGamma(a) - logGamma(b) + a * Math.log(x) + b * Math.log1p(-x);
  const front = Math.exp(logFront);
  if (x < (a + 1) / (a + b + 2)) return (front * betaContinuedFraction(a, b, x)) / a;
  return 1 - (front * betaContinuedFraction(b, a, 1 - x)) / b;
}

/** Student t CDF with `degrees` degrees of freedom. */
export function studentTCdf(t: number, degrees: number): number {
  if (Number.isNaN(t)) return Number.NaN;
  if (t === Infinity) return 1;
  if (t === -Infinity) return 0;
  const tail = 0.5 * regularizedIncompleteBeta(degrees / (degrees + t * t), degrees / 2, 0.5);
  return t >= 0 ? 1 - tail : tail;
}

/** Student t quantile by bisection on the CDF (called a handful of times per fit; speed is irrelevant). */
export function studentTQuantile(probability: number, degrees: number): number {
  if (Number.isNaN(probability) || probability < 0 || probability > 1) return Number.NaN;
  if (probability === 0) return -Infinity;
  if (probability === 1) return Infinity;
  if (probability === 0.5) return 0;
  if (probability < 0.5) return -studentTQuantile(1 - probability, degrees);
  let low = 0;
  let high = 1;
  while (studentTCdf(high, degrees) < probability) {
    high *= 2;
    if (high > 1e12) return Infinity;
  }
  for (let iteration = 0; iteration < 200; iteration += 1) {
    const middle = (low + high) / 2;
    if (studentTCdf(middle, degrees) < probability) low = middle;
    else high = middle;
    if (high - low <= 1e-13 * Math.max(1, high)) break;
  }
  return (low + high) / 2;
}
