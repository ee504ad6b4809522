/**
 * Requests of the reduction tools: plan a reduction of a stored artifact against a named predicate
 * workload, execute the single-use plan, read the result with its attempts.
 */
import * as v from "valibot";
import { cursor, described, identifier, limit, name, scalarMap } from "./fields.ts";
import { pageLimits } from "./limits.ts";
import { planId } from "./captures.ts";

/** How an artifact is cut into units the reducer may remove. */
export const reductionPartitioners = ["text_lines", "json_top_level", "jsonl_records", "chrome_trace_events"] as const;
export type ReductionPartitioner = (typeof reductionPartitioners)[number];

/** native_ddmin runs inside flameox; shrinkray runs ShrinkRay from its managed provider environment. */
export const reductionEngines = ["native_ddmin", "shrinkray"] as const;
export type ReductionEngine = (typeof reductionEngines)[number];

const integerBetween = (minimum: number, maximum: number) => v.pipe(v.number(), v.integer(), v.minValue(minimum), v.maxValue(maximum));
const secondsUpTo = (maximum: number) => v.pipe(v.number(), v.gtValue(0), v.maxValue(maximum));

export const ReductionLimits = v.strictObject({
  max_attempts: v.optional(described(integerBetween(1, 100_000), "Predicate runs."), 1000),
  wall_time_seconds: v.optional(described(secondsUpTo(86_400), "Seconds."), 900),
  predicate_timeout_seconds: v.optional(described(secondsUpTo(3600), "Per run."), 30),
  predicate_repetitions: v.optional(described(integerBetween(1, 20), "Must agree."), 1),
});

export const PlanReductionRequest = v.strictObject({
  request: described(
    v.strictObject({
      original_artifact_id: identifier("Artifact to reduce."),
      predicate_workload: name("Workload; exit 0 = keep."),
      predicate_parameters: v.optional(described(scalarMap, "Its parameters."), {}),
      partitioner: described(v.picklist(reductionPartitioners), "Units to remove."),
      engine: v.optional(described(v.picklist(reductionEngines), "Engine."), "native_ddmin"),
      limits: v.optional(described(ReductionLimits, "Budgets."), {}),
    }),
    "Reduction.",
  ),
});

export const ExecuteReductionRequest = v.strictObject({ plan_id: planId });

export const GetReductionRequest = v.strictObject({
  reduction_id: identifier("Reduction id."),
  limit: limit(pageLimits.reductionAttempts),
  cursor,
});

export type PlanReductionInput = v.InferOutput<typeof PlanReductionRequest>["request"];
export type ReductionLimitsInput = v.InferOutput<typeof ReductionLimits>;
