/** The records of artifact pipelines and their stage-by-stage comparison. */
import type { pipelineStageStatuses } from "./requests/pipelines.ts";

export type PipelineStageStatus = (typeof pipelineStageStatuses)[number];

export type PipelineStage = {
  name: string;
  ordinal: number;
  predecessor: string | null;
  status: PipelineStageStatus;
  registration_id: string | null;
  /** Resolved from the registration when the stage was registered. */
  artifact_id: string | null;
  byte_length: number | null;
  format: string;
  format_schema: string;
  extractor: string | null;
  extractor_version: string | null;
  structural_summary: Record<string, string | number | boolean> | null;
  elapsed_ns: number | null;
  limitations: string[];
};

export type ArtifactPipeline = {
  schema_version: 1;
  pipeline_id: string;
  run_id: string;
  pipeline_name: string;
  pipeline_schema: string;
  producer: string;
  producer_version: string;
  stages: PipelineStage[];
  limitations: string[];
  created_at: string;
  resource_uri: string;
};

/**
 * What register_artifact_pipeline answers: the identity and each stage's place, status and output,
 * without the producer summaries (the pipeline resource has everything). Bounded for a tool result.
 */
export type PipelineReceipt = Omit<ArtifactPipeline, "stages"> & {
  stages: Pick<PipelineStage, "name" | "ordinal" | "status" | "artifact_id" | "byte_length">[];
  stage_count: number;
  stages_truncated: boolean;
};

export type StageClassification =
  /** Present in both with the same artifact. */
  | "identical"
  /** A different artifact whose producer summary (if any) is the same. */
  | "content_changed"
  /** The producer summaries differ. */
  | "changed"
  /** Only in the candidate / only in the baseline. */
  | "added"
  | "missing"
  /** At least one side has no artifact to compare (skipped, unavailable, failed). */
  | "uninspectable"
  /** Format, format schema or extractor differ: the outputs are not comparable. */
  | "incompatible";

export type SideValue<Value> = { baseline: Value; candidate: Value };

export type StageComparison = {
  name: string;
  classification: StageClassification;
  ordinal: SideValue<number | null>;
  /** The stage's position among the stages both pipelines have differs. */
  reordered: boolean;
  status: SideValue<PipelineStageStatus | null>;
  status_changed: boolean;
  artifact_id: SideValue<string | null>;
  byte_length: SideValue<number | null> & { delta: number | null };
  /** Keys whose producer summary values differ (at most 10; long strings cut to 80 characters). */
  summary_differences: { key: string; baseline: string | number | boolean | null; candidate: string | number | boolean | null }[];
  summary_differences_total: number;
  /** Row counts of flameox's own evidence for each side's artifact, where an extractor has run on both. */
  evidence: SideValue<Record<string, number>> | null;
};

export type PipelineComparison = {
  schema_version: 1;
  baseline_pipeline_id: string;
  candidate_pipeline_id: string;
  compatible: boolean;
  identity_differences: { field: string; baseline: string; candidate: string }[];
  counts: Record<StageClassification, number>;
  first_divergent_stage: string | null;
  stages: StageComparison[];
  total: number;
  returned: number;
  truncated: boolean;
  next_cursor: string | null;
  notes: string[];
  result_digest: string;
};
