/** Requests of run sets, comparisons, scaling fits and recorded analyses. */
import * as v from "valibot";
import { analysisRecipeNames } from "../vocabulary.ts";
import { described, identifier, identifierText, mapKey, optionalOrNull, text } from "./fields.ts";
import { optionalComparison, phase } from "./evidence.ts";

const runIds = v.pipe(v.array(identifierText), v.minLength(1), v.maxLength(10000));

export const RunSetMember = v.strictObject({
  run_id: identifier("Run id."),
  trial_id: optionalOrNull(identifier("Trial of this run.")),
  included: v.optional(described(v.boolean(), "false excludes it."), true),
  reason: optionalOrNull(text(500, "Why excluded.")),
});

export const FreezeRunSetRequest = v.strictObject({
  run_ids: optionalOrNull(described(runIds, "Runs of the set.")),
  members: optionalOrNull(described(v.pipe(v.array(RunSetMember), v.minLength(1), v.maxLength(10000)), "Or members, with inclusion.")),
  selection: optionalOrNull(described(v.record(mapKey, v.union([v.string(), v.number(), v.boolean(), v.null()])), "How runs were chosen.")),
});

const integerWithin = (minimum: number, maximum: number, description: string) =>
  optionalOrNull(described(v.pipe(v.number(), v.integer(), v.minValue(minimum), v.maxValue(maximum)), description));

export const hotspotLimit = integerWithin(1, 100, "Hotspots to list.");

/** compare_run_sets and record_comparison. Omitted parameters come from the experiment when both sets share one. */
export const CompareRunSetsRequest = v.strictObject({
  baseline_run_set_id: identifier("Run set or run id."),
  candidate_run_set_id: identifier("Run set or run id."),
  metric: optionalOrNull(text(200, "Default runtime.wall_time_ns.")),
  unit: optionalOrNull(text(50, "Expected unit.")),
  polarity: optionalOrNull(described(v.picklist(["lower_is_better", "higher_is_better", "neutral"]), "Which way is better.")),
  practical_threshold: optionalOrNull(described(v.pipe(v.number(), v.minValue(0), v.ltValue(1)), "Relevant change, 0.05 = 5%.")),
  confidence_level: optionalOrNull(described(v.pipe(v.number(), v.gtValue(0), v.ltValue(1)), "Default 0.99.")),
  random_seed: integerWithin(0, 2 ** 53 - 1, "Recorded only."),
  minimum_samples: integerWithin(1, 1000, "Min runs per side."),
  pairing: optionalOrNull(described(v.picklist(["auto", "paired", "unpaired"]), "auto pairs experiment blocks.")),
  hotspot_limit: hotspotLimit,
});

export const ScalingRequest = v.strictObject({
  experiment_id: optionalOrNull(identifier("Experiment id.")),
  run_set_id: optionalOrNull(identifier("Or a run set id.")),
  size_parameter: optionalOrNull(text(100, "Numeric size factor.")),
  metric: optionalOrNull(text(200, "Default runtime.wall_time_ns.")),
  hotspot_limit: integerWithin(1, 100, "Hotspots to rank."),
});

export const RecordAnalysisRequest = v.strictObject({
  recipe: described(v.picklist(analysisRecipeNames), "Analysis recipe."),
  input_id: optionalOrNull(identifier("Run/artifact id.")),
  comparison_input_id: optionalComparison,
  experiment_id: optionalOrNull(identifier("scaling: experiment.")),
  run_set_id: optionalOrNull(identifier("scaling: run set.")),
  size_parameter: optionalOrNull(text(100, "scaling: size factor.")),
  limit: integerWithin(1, 1000, "Rows; default the recipe's."),
  phase,
});

/** The comparison service names the two sides baseline and candidate; the tools and CLI name them as the contract does. */
export function compareServiceRequest(input: v.InferOutput<typeof CompareRunSetsRequest>) {
  const { baseline_run_set_id, candidate_run_set_id, ...parameters } = input;
  return { baseline: baseline_run_set_id, candidate: candidate_run_set_id, ...parameters };
}
