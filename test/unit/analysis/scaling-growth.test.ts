import { expect, test } from "bun:test";
import { hotspotGrowth, scalingSeries } from "../../../src/analysis/scaling.ts";

test("hotspotGrowth ranks the function whose self weight grows fastest first", () => {
  const sizes = [100, 200, 400, 800, 1600];
  const runSizes = new Map<string, number>();
  const weights = sizes.flatMap((size, index) => {
    const runs = [`r${index}a`, `r${index}b`];
    for (const run of runs) runSizes.set(run, size);
    return runs.flatMap((run) => [
      { run_id: run, frame_id: "fn_flat", function: "flat", file: "a.py", self_weight: 1000 },
      { run_id: run, frame_id: "fn_lin", function: "lin", file: "a.py", self_weight: 10 * size },
      { run_id: run, frame_id: "fn_quad", function: "quad", file: "a.py", self_weight: 0.01 * size * size },
    ]);
  });
  const ranking = hotspotGrowth(weights, runSizes);
  expect(ranking.map((entry) => entry.function)).toEqual(["quad", "lin", "flat"]);
  expect(ranking[0]!.exponent!).toBeCloseTo(2, 5);
  expect(ranking[1]!.exponent!).toBeCloseTo(1, 5);
  expect(ranking[0]!.largest_size_weight).toBeCloseTo(0.01 * 1600 * 1600, 5);
});

test("functions seen at fewer than three sizes are not ranked", () => {
  const runSizes = new Map([
    ["a", 1],
    ["b", 2],
    ["c", 3],
  ]);
  const ranking = hotspotGrowth(
    [
      { run_id: "a", frame_id: "fn_x", function: "x", file: null, self_weight: 1 },
      { run_id: "b", frame_id: "fn_x", function: "x", file: null, self_weight: 2 },
    ],
    runSizes,
  );
  expect(ranking).toEqual([]);
});

test("scalingSeries groups by series and size and fits each series", () => {
  const observations = [1, 2, 4, 8, 16].flatMap((size) => [
    { run_id: `l${size}`, size, series: "linear", cost: 5 + 3 * size },
    { run_id: `q${size}`, size, series: "quadratic", cost: 5 + size * size },
  ]);
  const series = scalingSeries(observations, 0.95);
  expect(series.map((entry) => entry.series)).toEqual(["linear", "quadratic"]);
  expect(series[0]!.fit.best_model).toBe("linear");
  expect(series[1]!.fit.best_model).toBe("quadratic");
  expect(series[0]!.points.map((point) => point.size)).toEqual([1, 2, 4, 8, 16]);
});
