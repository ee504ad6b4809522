import { expect, test } from "bun:test";
import { frameKey } from "../../../src/domain/evidence.ts";
import { FrameKeySet } from "../../../src/domain/frame-key-set.ts";

test("answers as a Set of the same keys would, across growth, repeats long after first sight, and keys of other shapes", () => {
  const set = new FrameKeySet();
  const reference = new Set<string>();
  const keys: string[] = [];
  for (let index = 0; index < 30_000; index += 1) {
    keys.push(frameKey({ language: "trace", function: `ProfilerStep#${index}`, file: null, line: null }));
  }
  // Keys the table cannot decode: another prefix, upper-case digits, another length.
  keys.push("f_ABCDEF0123456789abcdef01", "g_0123456789abcdef01234567", "f_0123", "");
  // Every key twice, the second time long after the recent keys forgot it, then the first ones again.
  for (const key of [...keys, ...keys, ...keys.slice(0, 100)]) {
    const added = !reference.has(key);
    reference.add(key);
    expect(set.add(key)).toBe(added);
  }
  expect(set.size).toBe(reference.size);
  set.clear();
  expect(set.size).toBe(0);
  expect(set.add(keys[0] as string)).toBe(true);
});
