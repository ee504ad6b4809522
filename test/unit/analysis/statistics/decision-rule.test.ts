/**
 * Operating characteristics of compare_run_sets' decision rule, measured on seeded synthetic samples shaped
 * like this machine's timing noise (noise-model.ts: 8 % lognormal CV, 5 % slow outliers ×1.1–1.6, a slow
 * drift shared by both treatments of a block). Every cell runs the rule on `seedsPerCell` independent seeded
 * data sets and counts its decisions; the counts are exact for this rule, so the table is asserted as a
 * whole and any change to the rule shows up here.
 *
 * Reading the table (practical threshold 5 %, α = 0.05, lower is better):
 * - work factor 1 (identical treatments): regressed + improved is the false-positive rate;
 * - work factor 1.05 (a change exactly at the threshold): regressed is the rate of calling a practically
 *   irrelevant change a regression;
 * - larger factors: regressed is the power.
 *
 * When the rule changes (issue 13 is expected to gain power), bump `measuredFor` to the new
 * decisionRuleVersion and replace `expectedCounts` with the measured table this test prints on failure.
 * The bounds in the last test are what any rule must keep.
 */
import { beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { compareSamples, decisionRuleVersion, type Decision, type Pairing } from "../../../../src/analysis/statistics/compare.ts";
import { syntheticRuns } from "./noise-model.ts";

// 2,000 comparisons with 2,000 bootstrap resamples each (the rule's default is 10,000; at these sizes the
// decisions of the two agree in all but a handful of borderline cases).
setDefaultTimeout(120_000);

const measuredFor = "ci_beyond_practical_threshold_and_rank_test.v1";
const seedsPerCell = 100;
const resamples = 2_000;
const workFactors = [1, 1.05, 1.1, 1.2, 1.5] as const;
const sampleSizes = [10, 20] as const;
const pairings: Pairing[] = ["paired", "unpaired"];

type Counts = Record<Decision, number>;

/**
 * Decisions per cell, keyed `pairing n=<per side> x<work factor>`, measured for `measuredFor`. Summary:
 * false positives 0–1 % (paired n=10: 1 of 100 identical pairs called regressed); a change exactly at the
 * threshold is called regressed 2–6 % of the time; power 20–35 % at +10 %, 73–98 % at +20 %, 99–100 % at +50 %.
 */
const expectedCounts: Record<string, Counts> = {
  "paired n=10 x1": { regressed: 1, improved: 0, equivalent: 2, inconclusive: 97 },
  "paired n=10 x1.05": { regressed: 2, improved: 0, equivalent: 0, inconclusive: 98 },
  "paired n=10 x1.1": { regressed: 20, improved: 0, equivalent: 1, inconclusive: 79 },
  "paired n=10 x1.2": { regressed: 73, improved: 0, equivalent: 0, inconclusive: 27 },
  "paired n=10 x1.5": { regressed: 99, improved: 0, equivalent: 0, inconclusive: 1 },
  "paired n=20 x1": { regressed: 0, improved: 0, equivalent: 4, inconclusive: 96 },
  "paired n=20 x1.05": { regressed: 6, improved: 0, equivalent: 0, inconclusive: 94 },
  "paired n=20 x1.1": { regressed: 35, improved: 0, equivalent: 0, inconclusive: 65 },
  "paired n=20 x1.2": { regressed: 96, improved: 0, equivalent: 0, inconclusive: 4 },
  "paired n=20 x1.5": { regressed: 100, improved: 0, equivalent: 0, inconclusive: 0 },
  "unpaired n=10 x1": { regressed: 0, improved: 0, equivalent: 0, inconclusive: 100 },
  "unpaired n=10 x1.05": { regressed: 2, improved: 0, equivalent: 0, inconclusive: 98 },
  "unpaired n=10 x1.1": { regressed: 25, improved: 0, equivalent: 0, inconclusive: 75 },
  "unpaired n=10 x1.2": { regressed: 78, improved: 0, equivalent: 0, inconclusive: 22 },
  "unpaired n=10 x1.5": { regressed: 100, improved: 0, equivalent: 0, inconclusive: 0 },
  "unpaired n=20 x1": { regressed: 0, improved: 0, equivalent: 1, inconclusive: 99 },
  "unpaired n=20 x1.05": { regressed: 4, improved: 0, equivalent: 0, inconclusive: 96 },
  "unpaired n=20 x1.1": { regressed: 31, improved: 0, equivalent: 0, inconclusive: 69 },
  "unpaired n=20 x1.2": { regressed: 98, improved: 0, equivalent: 0, inconclusive: 2 },
  "unpaired n=20 x1.5": { regressed: 100, improved: 0, equivalent: 0, inconclusive: 0 },
};

function cellKey(pairing: Pairing, perSide: number, workFactor: number): string {
  return `${pairing} n=${perSide} x${workFactor}`;
}

function measure(pairing: Pairing, perSide: number, workFactor: number, cellIndex: number): Counts {
  const counts: Counts = { regressed: 0, improved: 0, equivalent: 0, inconclusive: 0 };
  for (let seed = 0; seed < seedsPerCell; seed += 1) {
    const runs = syntheticRuns({ seed: 100_000 * (cellIndex + 1) + seed, perSide, workFactor, blocks: pairing === "paired" });
    const result = compareSamples({ ...runs, pairing, polarity: "lower_is_better", seed, resamples });
    counts[result.decision] += 1;
  }
  return counts;
}

const measured: Record<string, Counts> = {};
beforeAll(() => {
  let cellIndex = 0;
  for (const pairing of pairings)
    for (const perSide of sampleSizes)
      for (const workFactor of workFactors) {
        measured[cellKey(pairing, perSide, workFactor)] = measure(pairing, perSide, workFactor, cellIndex);
        cellIndex += 1;
      }
});

describe("the decision rule's power and false-positive rate on seeded synthetic noise", () => {
  test("the table was measured for the rule in force", () => {
    expect(decisionRuleVersion).toBe(measuredFor);
  });

  test("decisions per cell are exactly the measured table", () => {
    expect(measured).toEqual(expectedCounts);
  });

  test("bounds any rule must keep: false positives at most α, full power for a 50 % change at 20 per side", () => {
    for (const pairing of pairings)
      for (const perSide of sampleSizes) {
        const identical = measured[cellKey(pairing, perSide, 1)]!;
        expect((identical.regressed + identical.improved) / seedsPerCell).toBeLessThanOrEqual(0.05);
        for (const workFactor of workFactors) expect(measured[cellKey(pairing, perSide, workFactor)]!.improved).toBe(0);
      }
    for (const pairing of pairings) expect(measured[cellKey(pairing, 20, 1.5)]!.regressed / seedsPerCell).toBeGreaterThanOrEqual(0.95);
  });
});
