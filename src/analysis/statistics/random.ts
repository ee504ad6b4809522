/**
 * Seeded pseudo-random numbers. Everything that randomizes (block order, the seeded simulations of the tests)
 * takes a seed so that the same declaration or test always draws the same numbers.
 *
 * Generator: xoshiro128** (Blackman & Vigna), 32-bit state words so it stays in `Math.imul` territory
 * without BigInt on the hot path. The 128-bit state is filled from the seed with splitmix32, which
 * guarantees a non-zero state and decorrelates neighbouring seeds (seed 1 and seed 2 give unrelated streams).
 */

export type RandomSource = {
  /** Uniform integer in [0, 2^32). */
  nextUint32(): number;
  /** Uniform float in [0, 1) with 53 random bits. */
  nextFloat(): number;
  /** Uniform integer in [0, bound); bound must be a positive integer ≤ 2^32. Unbiased (rejection). */
  nextInt(bound: number): number;
  /** Standard normal deviate (Box–Muller; the spare value is cached). */
  nextGaussian(): number;
};

function splitmix32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x9e3779b9) >>> 0;
    let z = state;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
    return (z ^ (z >>> 16)) >>> 0;
  };
}

/** Folds an arbitrary non-negative integer seed (up to 2^53) into 32 bits without discarding the high part. */
function foldSeed(seed: number | bigint): number {
  if (typeof seed === "bigint") {
    let folded = 0;
    let rest = seed < 0n ? -seed : seed;
    while (rest > 0n) {
      folded = (Math.imul(folded, 0x01000193) ^ Number(rest & 0xffffffffn)) >>> 0;
      rest >>= 32n;
    }
    return folded;
  }
  if (!Number.isFinite(seed) || !Number.isInteger(seed)) {
    throw new RangeError(`seed must be an integer, got ${seed}`);
  }
  const magnitude = Math.abs(seed);
  const low = magnitude % 0x100000000;
  const high = Math.floor(magnitude / 0x100000000);
  return (Math.imul(high, 0x01000193) ^ low) >>> 0;
}

function rotl(value: number, shift: number): number {
  return ((value << shift) | (value >>> (32 - shift))) >>> 0;
}

export function createRandom(seed: number | bigint): RandomSource {
  const seeder = splitmix32(foldSeed(seed));
  let s0 = seeder();
  let s1 = seeder();
  let s2 = seeder();
  let s3 = seeder();
  if ((s0 | s1 | s2 | s3) === 0) s0 = 1;
  let spareGaussian: number | null = null;

  const nextUint32 = (): number => {
    const result = Math.imul(rotl(Math.imul(s1, 5) >>> 0, 7), 9) >>> 0;
    const t = (s1 << 9) >>> 0;
    s2 = (s2 ^ s0) >>> 0;
    s3 = (s3 ^ s1) >>> 0;
    s1 = (s1 ^ s2) >>> 0;
    s0 = (s0 ^ s3) >>> 0;
    s2 = (s2 ^ t) >>> 0;
    s3 = rotl(s3, 11);
    return result;
  };

  const nextFloat = (): number => {
    const high = nextUint32() >>> 5; // 27 bits
    const low = nextUint32() >>> 6; // 26 bits
    return (high * 67108864 + low) / 9007199254740992;
  };

  const nextInt = (bound: number): number => {
    if (!Number.isInteger(bound) || bound <= 0 || bound > 0x100000000) {
      throw new RangeError(`bound must be an integer in [1, 2^32], got ${bound}`);
    }
    // Rejection removes the modulo bias that would otherwise favour small indices in resampling.
    const limit = 0x100000000 - (0x100000000 % bound);
    for (;;) {
      const value = nextUint32();
      if (value < limit) return value % bound;
    }
  };

  const nextGaussian = (): number => {
    if (spareGaussian !== null) {
      const value = spareGaussian;
      spareGaussian = null;
      return value;
    }
    let u = 0;
    while (u === 0) u = nextFloat();
    const v = nextFloat();
    const radius = Math.sqrt(-2 * Math.log(u));
    spareGaussian = radius * Math.sin(2 * Math.PI * v);
    return radius * Math.cos(2 * Math.PI * v);
  };

  return { nextUint32, nextFloat, nextInt, nextGaussian };
}

/** Fisher–Yates shuffle in place; returns the same array. */
export function shuffleInPlace<T>(items: T[], random: RandomSource): T[] {
  for (let index = items.length - 1; index > 0; index -= 1) {
    const other = random.nextInt(index + 1);
    const held = items[index] as T;
    items[index] = items[other] as T;
    items[other] = held;
  }
  return items;
}

/** Seeded Fisher–Yates shuffle of a copy (e.g. the randomized treatment order inside a block). */
export function shuffle<T>(items: readonly T[], seedOrRandom: number | bigint | RandomSource): T[] {
  const random = typeof seedOrRandom === "object" ? seedOrRandom : createRandom(seedOrRandom);
  return shuffleInPlace([...items], random);
}

/**
 * Derives an independent child seed from a parent seed and a label (e.g. a block index), so that each
 * block's order does not depend on how many random numbers earlier blocks consumed.
 */
export function deriveSeed(seed: number | bigint, label: string | number): number {
  let hash = foldSeed(seed) ^ 0x811c9dc5;
  const text = String(label);
  for (let index = 0; index < text.length; index += 1) {
    hash = Math.imul(hash ^ text.charCodeAt(index), 0x01000193) >>> 0;
  }
  return splitmix32(hash)();
}
