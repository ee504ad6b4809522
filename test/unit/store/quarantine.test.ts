import { describe, expect, test } from "bun:test";
import { beyondQuarantineBounds, type QuarantineEntry, quarantineBounds } from "../../../src/store/quarantine.ts";

const day = 24 * 3600 * 1000;
const now = Date.parse("2025-06-01T00:00:00Z");

function entry(id: string, ageDays: number, bytes: number): QuarantineEntry {
  return {
    schema_version: 1,
    quarantine_id: id,
    state: "quarantined",
    reason: "partial outputs",
    run_id: null,
    origin: `staging/${id}`,
    created_at: new Date(now - ageDays * day).toISOString(),
    created_ms: now - ageDays * day,
    bytes,
  };
}

describe("the quarantine's bound", () => {
  test("entries past the age bound go, then the oldest until count and bytes fit", () => {
    const ids = (entries: QuarantineEntry[]) => entries.map((item) => item.quarantine_id);
    expect(ids(beyondQuarantineBounds([entry("old", 15, 1), entry("recent", 1, 1)], now))).toEqual(["old"]);
    const many = Array.from({ length: quarantineBounds.maxEntries + 3 }, (_, index) => entry(`e${index}`, 10 - index * 0.1, 1));
    expect(ids(beyondQuarantineBounds(many, now))).toEqual(["e0", "e1", "e2"]);
    const heavy = [entry("a", 3, quarantineBounds.maxBytes / 2), entry("b", 2, quarantineBounds.maxBytes / 2), entry("c", 1, 10)];
    expect(ids(beyondQuarantineBounds(heavy, now))).toEqual(["a"]);
    expect(beyondQuarantineBounds([entry("fits", 13, quarantineBounds.maxBytes)], now)).toEqual([]);
  });
});
