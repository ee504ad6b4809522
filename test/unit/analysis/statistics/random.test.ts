import { describe, expect, test } from "bun:test";
import { createRandom, deriveSeed, shuffle } from "../../../../src/analysis/statistics/random.ts";

describe("seeded random", () => {
  test("same seed, same stream; different seed, different stream", () => {
    const first = createRandom(42);
    const second = createRandom(42);
    const other = createRandom(43);
    const a = Array.from({ length: 16 }, () => first.nextUint32());
    const b = Array.from({ length: 16 }, () => second.nextUint32());
    const c = Array.from({ length: 16 }, () => other.nextUint32());
    expect(a).toEqual(b);
    expect(a).not.toEqual(c);
  });

  test("accepts bigint and large integer seeds and rejects fractional ones", () => {
    expect(createRandom(2n ** 40n).nextUint32()).toBe(createRandom(2n ** 40n).nextUint32());
    expect(createRandom(2 ** 40).nextFloat()).not.toBe(createRandom(2 ** 40 + 1).nextFloat());
    expect(() => createRandom(1.5)).toThrow(RangeError);
  });

  test("floats lie in [0, 1) and are roughly uniform", () => {
    const random = createRandom(7);
    const buckets = new Array<number>(10).fill(0);
    for (let index = 0; index < 100_000; index += 1) {
      const value = random.nextFloat();
      expect(value >= 0 && value < 1).toBe(true);
      buckets[Math.floor(value * 10)] = (buckets[Math.floor(value * 10)] ?? 0) + 1;
    }
    for (const count of buckets) expect(Math.abs(count - 10_000)).toBeLessThan(500);
  });

  test("nextInt stays in range and gaussians have mean 0 and sd 1", () => {
    const random = createRandom(9);
    let total = 0;
    let squares = 0;
    for (let index = 0; index < 50_000; index += 1) {
      const value = random.nextInt(7);
      expect(Number.isInteger(value) && value >= 0 && value < 7).toBe(true);
      const gaussian = random.nextGaussian();
      total += gaussian;
      squares += gaussian * gaussian;
    }
    expect(Math.abs(total / 50_000)).toBeLessThan(0.03);
    expect(Math.abs(squares / 50_000 - 1)).toBeLessThan(0.05);
  });

  test("shuffle is a seeded permutation that leaves its input alone", () => {
    const items = Array.from({ length: 20 }, (_, index) => index);
    const once = shuffle(items, 5);
    expect(shuffle(items, 5)).toEqual(once);
    expect(shuffle(items, 6)).not.toEqual(once);
    expect([...once].sort((left, right) => left - right)).toEqual(items);
    expect(items).toEqual(Array.from({ length: 20 }, (_, index) => index));
  });

  test("derived seeds depend on parent and label only", () => {
    expect(deriveSeed(1, "block-3")).toBe(deriveSeed(1, "block-3"));
    expect(deriveSeed(1, "block-3")).not.toBe(deriveSeed(1, "block-4"));
    expect(deriveSeed(1, "block-3")).not.toBe(deriveSeed(2, "block-3"));
  });
});
