/**
 * Shaping for `analyze_scaling`: per-run costs grouped into series (one per combination of the other
 * factors) and sizes, fitted with `analyzeScaling` over every run's value (repetitions inform the fit's
 * noise), and hotspot growth ranked with `fastestGrowing` over the mean per-size self weight of each
 * function. Pure: the service reads runs and evidence, this only computes.
 */
import { median, medianAbsoluteDeviation } from "./statistics/descriptive.ts";
import { analyzeScaling, fastestGrowing, type GrowthRanking, type ScalingAnalysis } from "./statistics/scaling-fit.ts";

export type CostObservation = { run_id: string; size: number; series: string; cost: number };

export type ScalingPointSummary = { size: number; runs: number; median_cost: number; mad_cost: number };

export type ScalingSeries = {
  series: string;
  points: ScalingPointSummary[];
  fit: ScalingAnalysis;
};

export function scalingSeries(observations: readonly CostObservation[], confidenceLevel: number): ScalingSeries[] {
  const bySeries = new Map<string, CostObservation[]>();
  for (const observation of observations) {
    const list = bySeries.get(observation.series) ?? [];
    list.push(observation);
    bySeries.set(observation.series, list);
  }
  return [...bySeries.entries()]
    .sort(([left], [right]) => (left < right ? -1 : left > right ? 1 : 0))
    .map(([series, list]) => {
      const bySize = new Map<number, number[]>();
      for (const observation of list) bySize.set(observation.size, [...(bySize.get(observation.size) ?? []), observation.cost]);
      const points = [...bySize.entries()]
        .sort(([left], [right]) => left - right)
        .map(([size, costs]) => ({
          size,
          runs: costs.length,
          median_cost: median(costs),
          mad_cost: costs.length > 1 ? medianAbsoluteDeviation(costs) : 0,
        }));
      return {
        series,
        points,
        fit: analyzeScaling(
          list.map((observation) => ({ size: observation.size, cost: observation.cost })),
          { confidence_level: confidenceLevel },
        ),
      };
    });
}

export type FunctionWeight = { run_id: string; frame_id: string; function: string; file: string | null; self_weight: number };

export type HotspotGrowth = GrowthRanking & { function: string; file: string | null; sizes: number; largest_size_weight: number };

/**
 * Ranks functions by how fast their self weight grows with size. A function needs weight at ≥ 3 sizes
 * (fewer cannot be fitted); at most `candidates` of the heaviest functions are fitted so the cost stays
 * bounded. A run where a function has no samples counts as 0 for it, and 0 is left out of the log-log fit.
 */
export function hotspotGrowth(
  weights: readonly FunctionWeight[],
  runSizes: ReadonlyMap<string, number>,
  options: { candidates?: number; limit?: number } = {},
): HotspotGrowth[] {
  const runsPerSize = new Map<number, number>();
  for (const size of runSizes.values()) runsPerSize.set(size, (runsPerSize.get(size) ?? 0) + 1);
  const byFunction = new Map<string, { function: string; file: string | null; total: number; bySize: Map<number, number> }>();
  for (const weight of weights) {
    const size = runSizes.get(weight.run_id);
    if (size === undefined) continue;
    const entry = byFunction.get(weight.frame_id) ?? {
      function: weight.function,
      file: weight.file,
      total: 0,
      bySize: new Map<number, number>(),
    };
    entry.total += weight.self_weight;
    entry.bySize.set(size, (entry.bySize.get(size) ?? 0) + weight.self_weight);
    byFunction.set(weight.frame_id, entry);
  }
  const heaviest = [...byFunction.entries()]
    .filter(([, entry]) => entry.bySize.size >= 3)
    .sort(([leftKey, left], [rightKey, right]) => right.total - left.total || (leftKey < rightKey ? -1 : 1))
    .slice(0, options.candidates ?? 200);
  const series = heaviest.map(([key, entry]) => ({
    key,
    points: [...entry.bySize.entries()].map(([size, total]) => ({ size, cost: total / (runsPerSize.get(size) ?? 1) })),
  }));
  const ranking = fastestGrowing(series);
  const lookup = new Map(heaviest);
  return ranking.slice(0, options.limit ?? 10).map((rank) => {
    const entry = lookup.get(rank.key)!;
    const largest = Math.max(...entry.bySize.keys());
    return {
      ...rank,
      function: entry.function,
      file: entry.file,
      sizes: entry.bySize.size,
      largest_size_weight: (entry.bySize.get(largest) ?? 0) / (runsPerSize.get(largest) ?? 1),
    };
  });
}
