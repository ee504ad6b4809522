import { describe, expect, test } from "bun:test";
import { boundedRangeText, lineRanges } from "../../../src/analysis/line-ranges.ts";

describe("line ranges", () => {
  test("without statements, a range runs over consecutive numbers", () => {
    expect(lineRanges([40, 12, 13, 14, 15])).toEqual(["12-15", "40"]);
    expect(lineRanges([])).toEqual([]);
  });

  test("with statements, a range spans consecutive statements across blank lines, and a statement not in the set breaks it", () => {
    const statements = [1, 2, 3, 4, 7, 8, 11, 12, 20, 30];
    expect(lineRanges([3, 4, 7], statements)).toEqual(["3-7"]);
    expect(lineRanges([3, 8], statements)).toEqual(["3", "8"]);
    expect(lineRanges([12, 20, 30], statements)).toEqual(["12-30"]);
  });

  test("a long list is cut at a range boundary within the characters and says how many ranges were left out", () => {
    const ranges = Array.from({ length: 200 }, (_, index) => String(index * 3));
    const text = boundedRangeText(ranges, 100);
    expect(text.length).toBeLessThanOrEqual(100);
    const kept = text.split(", ").slice(0, -1);
    expect(kept).toEqual(ranges.slice(0, kept.length));
    expect(text.endsWith(`… +${200 - kept.length} more`)).toBe(true);
    expect(boundedRangeText(["1-2", "5"], 100)).toBe("1-2, 5");
    expect(boundedRangeText(["123456789"], 5)).toBe("… +1 more");
  });
});
