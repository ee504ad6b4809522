/**
 * Requests of the artifact-pipeline tools: a producer's multi-stage pipeline registered as stage
 * evidence (register_artifact_pipeline) and two registered pipelines compared stage by stage.
 */
import * as v from "valibot";
import { cursor, described, identifier, limit, mapKey, name, optionalOrNull } from "./fields.ts";
import { pageLimits } from "./limits.ts";

export const pipelineStageStatuses = ["available", "cached", "skipped", "unavailable", "failed"] as const;

/** A producer's facts about a stage's output, compared key by key; flat so every host can read its schema. */
const structuralSummary = v.pipe(
  v.record(mapKey, v.union([v.pipe(v.string(), v.maxLength(500)), v.number(), v.boolean()])),
  v.maxEntries(100),
);

const limitations = v.pipe(v.array(v.pipe(v.string(), v.minLength(1), v.maxLength(500))), v.maxLength(20));

export const PipelineStage = v.strictObject({
  name: name("Unique."),
  ordinal: described(v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(99)), "Order."),
  predecessor: optionalOrNull(name("Earlier stage.")),
  status: described(v.picklist(pipelineStageStatuses), "available/cached need registration_id."),
  registration_id: optionalOrNull(identifier("Output registration or artifact id.")),
  format: name("Format."),
  format_schema: name("Its version."),
  extractor: optionalOrNull(name("Summarizer.")),
  extractor_version: optionalOrNull(name("Its version.")),
  structural_summary: optionalOrNull(described(structuralSummary, "Flat facts.")),
  elapsed_ns: optionalOrNull(described(v.pipe(v.number(), v.integer(), v.minValue(0)), "Time.")),
  limitations: v.optional(described(limitations, "Caveats."), []),
});

export const RegisterPipelineRequest = v.strictObject({
  request: described(
    v.strictObject({
      run_id: identifier("Run id."),
      pipeline_name: name("Pipeline name."),
      pipeline_schema: name("Schema."),
      producer: name("Producer."),
      producer_version: name("Its version."),
      stages: described(v.pipe(v.array(PipelineStage), v.minLength(1), v.maxLength(100)), "Stages."),
      limitations: v.optional(described(limitations, "Caveats."), []),
    }),
    "Pipeline.",
  ),
});

export const ComparePipelinesRequest = v.strictObject({
  baseline_pipeline_id: identifier("Pipeline id."),
  candidate_pipeline_id: identifier("Pipeline id."),
  limit: limit(pageLimits.pipelineStages),
  cursor,
});

export type RegisterPipelineInput = v.InferOutput<typeof RegisterPipelineRequest>["request"];
export type PipelineStageInput = v.InferOutput<typeof PipelineStage>;
export type ComparePipelinesInput = v.InferOutput<typeof ComparePipelinesRequest>;
