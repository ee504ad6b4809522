import { expect, test } from "bun:test";
import { boundedProjection } from "../../../src/services/bounded-projection.ts";

const drop = new Set(["schema_version", "next_cursor"]);

test("lists keep their first items, dropped fields go, and what was cut is said", () => {
  const projected = boundedProjection(
    {
      schema_version: 1,
      next_cursor: "abc",
      total: 9,
      hotspots: Array.from({ length: 9 }, (_, index) => ({ rank: index + 1, function: `f${index}` })),
      summary: { note: "x".repeat(1000) },
    },
    { items: 5, characters: 3_500, drop },
  );
  expect(Object.keys(projected.value!)).toEqual(["total", "hotspots", "summary"]);
  expect((projected.value!.hotspots as unknown[]).length).toBe(5);
  expect((projected.value!.summary as { note: string }).note.length).toBe(300);
  expect(projected.omitted).toEqual(["hotspots: first 5 of 9"]);
});

test("a field the service adds later comes through, bounded like the rest", () => {
  // As when a memory result gains a ranking of what is still allocated at exit.
  const projected = boundedProjection(
    { peak_bytes: 10, retained_at_exit: Array.from({ length: 20 }, (_, index) => ({ function: `g${index}`, bytes: index })) },
    { items: 5, characters: 3_500, drop },
  );
  expect((projected.value!.retained_at_exit as unknown[]).length).toBe(5);
});

test("fewer items per list when five do not fit, and nothing rather than too much", () => {
  const wide = { rows: Array.from({ length: 10 }, () => ({ text: "y".repeat(280) })) };
  const fitted = boundedProjection(wide, { items: 5, characters: 1_000, drop });
  expect((fitted.value!.rows as unknown[]).length).toBe(3);
  expect(JSON.stringify(fitted.value).length).toBeLessThanOrEqual(1_000);
  const tooLarge = boundedProjection(wide, { items: 5, characters: 200, drop });
  expect(tooLarge.value).toBeNull();
  expect(tooLarge.omitted[0]).toContain("does not fit");
});
