// A plan shows a few numbers about its realized order instead of the whole order.
import { describe, expect, test } from "bun:test";
import { summarizeOrder } from "../../../src/analysis/experiment-design.ts";
import type { PlannedTrial } from "../../../src/domain/experiment.ts";

describe("order summary", () => {
  const trial = (ordinal: number, block: string, position: number, treatment: string, warmup = false): PlannedTrial => ({
    ordinal,
    block_id: block,
    order_in_block: position,
    treatment,
    factors: { variant: treatment },
    warmup,
  });

  test("counts trials per treatment and block, warm-ups apart, and which treatment opens each block", () => {
    const order = [
      trial(1, "w1", 1, "base", true),
      trial(2, "w1", 2, "candidate", true),
      trial(3, "b1", 1, "candidate"),
      trial(4, "b1", 2, "base"),
      trial(5, "b2", 1, "base"),
      trial(6, "b2", 2, "candidate"),
      trial(7, "b3", 1, "candidate"),
    ];
    expect(summarizeOrder(order, ["base", "candidate"])).toEqual({
      trials: 7,
      warmup_trials: 2,
      blocks: 3,
      trials_per_block: { minimum: 1, maximum: 2 },
      trials_per_treatment: { base: 2, candidate: 3 },
      first_in_block: { base: 1, candidate: 2 },
      treatments_omitted: 0,
    });
  });

  test("a sweep of many levels lists the first 20 and counts the rest", () => {
    const levels = Array.from({ length: 25 }, (_, index) => `n${index}`);
    const summary = summarizeOrder(
      levels.map((level, index) => trial(index + 1, "b1", index + 1, level)),
      levels,
    );
    expect(Object.keys(summary.trials_per_treatment)).toEqual(levels.slice(0, 20));
    expect(summary.treatments_omitted).toBe(5);
  });
});
