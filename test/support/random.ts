/** The one deterministic PRNG of tests and benchmarks (mulberry32): seeded inputs are the same on every run and machine. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let value = state;
    value = Math.imul(value ^ (value >>> 15), value | 1);
    value ^= value + Math.imul(value ^ (value >>> 7), value | 61);
    return ((value ^ (value >>> 14)) >>> 0) / 4294967296;
  };
}

/** The items in a seeded random order (Fisher–Yates with `seededRandom`), shuffled in place and returned. */
export function seededShuffle<T>(items: T[], seed: number): T[] {
  const next = seededRandom(seed);
  for (let index = items.length - 1; index > 0; index--) {
    const other = Math.floor(next() * (index + 1));
    [items[index], items[other]] = [items[other] as T, items[index] as T];
  }
  return items;
}
