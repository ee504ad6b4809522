/**
 * Operating characteristics of compare_run_sets' decision rule, measured on seeded synthetic samples: for
 * every pairing × noise shape × noise level × samples per side, the rule runs on `identicalSeeds` data sets
 * of identical treatments (how often it calls them different: the false-positive rate) and on `effectSeeds`
 * data sets per work factor (how often it says regressed: the power). The counts are exact for this rule and
 * these seeds, so the table is generated here and must equal the one in docs/statistics.md: change the rule
 * and this test prints the new table to paste there (and bump `measuredFor`).
 *
 * Noise shapes (noise-model.ts): lognormal noise of the given CV with a 0.5 % per-block drift shared by both
 * treatments of a block; "+ outliers" adds slow outliers (5 % of runs ×1.1–1.6), the shape of this machine.
 */
import { beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { compareSamples, decisionRuleVersion, type Pairing } from "../../../../src/analysis/statistics/compare.ts";
import { minimumDetectableRatio } from "../../../../src/analysis/statistics/design-power.ts";
import { syntheticRuns } from "./noise-model.ts";

// About 290,000 comparisons; a few seconds alone, longer on a loaded machine.
setDefaultTimeout(180_000);

const measuredFor = "t_interval_of_log_ratio_beyond_practical_threshold.v2";
const identicalSeeds = 4_000;
const effectSeeds = 1_000;
const pairings: Pairing[] = ["paired", "unpaired"];
const shapes = [
  { name: "lognormal", outlierProbability: 0 },
  { name: "+ outliers", outlierProbability: 0.05 },
] as const;
const noiseLevels = [0.05, 0.1, 0.2] as const;
const sampleSizes = [5, 10, 20] as const;
const workFactors = [1.1, 1.2, 1.5, 2] as const;

type Cell = { pairing: Pairing; shape: (typeof shapes)[number]; cv: number; perSide: number };
type Row = Cell & { falsePositives: number; equivalent: number; regressed: number[] };

const beginMarker = "<!-- operating-characteristics:begin -->";
const endMarker = "<!-- operating-characteristics:end -->";

function decisions(cell: Cell, workFactor: number, seeds: number, seedBase: number) {
  const counts = { regressed: 0, improved: 0, equivalent: 0, inconclusive: 0, descriptive: 0 };
  const noise = { cv: cell.cv, outlierProbability: cell.shape.outlierProbability, driftPerBlock: 0.005 };
  for (let seed = 0; seed < seeds; seed += 1) {
    const runs = syntheticRuns({ seed: seedBase + seed, perSide: cell.perSide, workFactor, blocks: cell.pairing === "paired", noise });
    counts[compareSamples({ ...runs, pairing: cell.pairing, polarity: "lower_is_better" }).decision] += 1;
  }
  return counts;
}

function measure(): Row[] {
  const rows: Row[] = [];
  for (const pairing of pairings)
    for (const shape of shapes)
      for (const cv of noiseLevels)
        for (const perSide of sampleSizes) {
          const cell = { pairing, shape, cv, perSide };
          const seedBase = 10_000_000 * (rows.length + 1);
          const identical = decisions(cell, 1, identicalSeeds, seedBase);
          const regressed = workFactors.map(
            (workFactor, index) => decisions(cell, workFactor, effectSeeds, seedBase + 100_000 * (index + 1)).regressed,
          );
          rows.push({ ...cell, falsePositives: identical.regressed + identical.improved, equivalent: identical.equivalent, regressed });
        }
  return rows;
}

const percent = (count: number, total: number, digits: number) => `${((100 * count) / total).toFixed(digits)} %`;

function renderTable(rows: Row[]): string {
  const header = [
    "| pairing | noise | CV | n per side | identical: called different | identical: equivalent | " +
      workFactors.map((factor) => `×${factor}: regressed`).join(" | ") +
      " | detectable (80 %) |",
    `|${" --- |".repeat(6 + workFactors.length + 1)}`,
  ];
  const lines = rows.map((row) => {
    const detectable = minimumDetectableRatio({
      samples_per_side: row.perSide,
      pairing: row.pairing,
      noise_cv: row.cv,
      confidence_level: 0.99,
      practical_threshold: 0.05,
    });
    return `| ${row.pairing} | ${row.shape.name} | ${row.cv * 100} % | ${row.perSide} | ${percent(row.falsePositives, identicalSeeds, 3)} | ${percent(row.equivalent, identicalSeeds, 1)} | ${row.regressed.map((count) => percent(count, effectSeeds, 1)).join(" | ")} | ×${detectable.toFixed(2)} |`;
  });
  return [...header, ...lines].join("\n");
}

function documentedTable(): string {
  const text = readFileSync(join(import.meta.dir, "..", "..", "..", "..", "docs", "statistics.md"), "utf8");
  const begin = text.indexOf(beginMarker);
  const end = text.indexOf(endMarker);
  if (begin < 0 || end < begin) throw new Error(`docs/statistics.md has no ${beginMarker} … ${endMarker} block`);
  return text.slice(begin + beginMarker.length, end).trim();
}

let rows: Row[] = [];
beforeAll(() => {
  rows = measure();
});

const row = (pairing: Pairing, shape: string, cv: number, perSide: number) =>
  rows.find((entry) => entry.pairing === pairing && entry.shape.name === shape && entry.cv === cv && entry.perSide === perSide)!;

describe("the decision rule's power and false-positive rate on seeded synthetic noise", () => {
  test("the table was measured for the rule in force", () => {
    expect(decisionRuleVersion).toBe(measuredFor);
  });

  test("the table in docs/statistics.md is exactly the one these seeds produce", () => {
    const measured = renderTable(rows);
    if (measured !== documentedTable()) console.log(`Measured table for docs/statistics.md:\n${measured}`);
    expect(documentedTable()).toBe(measured);
  });

  test("identical treatments are called different in at most 0.5 % of simulations in every cell", () => {
    for (const entry of rows) expect(entry.falsePositives / identicalSeeds).toBeLessThanOrEqual(0.005);
  });

  test("twice the work with 5 per side at 10 % noise is regressed in ≥ 99 % (lognormal) and ≥ 95 % (with outliers)", () => {
    for (const pairing of pairings) {
      expect(row(pairing, "lognormal", 0.1, 5).regressed[3]! / effectSeeds).toBeGreaterThanOrEqual(0.99);
      expect(row(pairing, "+ outliers", 0.1, 5).regressed[3]! / effectSeeds).toBeGreaterThanOrEqual(0.95);
    }
  });

  test("power grows with the effect and with the samples", () => {
    for (const entry of rows) {
      for (let index = 1; index < workFactors.length; index += 1)
        expect(entry.regressed[index]!).toBeGreaterThanOrEqual(entry.regressed[index - 1]! - 0.02 * effectSeeds);
    }
    for (const pairing of pairings)
      for (const cv of noiseLevels)
        expect(row(pairing, "lognormal", cv, 20).regressed[1]!).toBeGreaterThan(row(pairing, "lognormal", cv, 5).regressed[1]!);
  });
});
