/**
 * The closed vocabularies that requests, stored rows and results share. Each list is written once here;
 * the store's types, the services' checks and the request schemas all derive from it.
 */
export const executionStatuses = ["not_applicable", "planned", "running", "succeeded", "failed", "timed_out", "cancelled"] as const;
export type ExecutionStatus = (typeof executionStatuses)[number];

export const validationStatuses = ["not_requested", "pending", "passed", "failed", "inconclusive", "unsupported", "cancelled"] as const;
export type ValidationStatus = (typeof validationStatuses)[number];

export const runTypes = ["execution", "import"] as const;
export type RunType = (typeof runTypes)[number];

export const trialOutcomes = [
  "unattempted",
  "succeeded",
  "failed",
  "timed_out",
  "cancelled",
  "invalid",
  "unsupported",
  "infrastructure_failed",
] as const;
export type TrialOutcome = (typeof trialOutcomes)[number];

export const artifactKinds = [
  "execution_trace",
  "sample_profile",
  "memory_profile",
  "benchmark_samples",
  "python_startup",
  "test_execution",
  "execution_coverage",
  "semantic_observations",
  "process_output",
  "validation_output",
  "collector_metadata",
  "analysis_result",
  "otlp_trace",
  "core_dump",
  "sanitizer_report",
  "source_snapshot",
  "process_tree_snapshot",
  "experiment_configuration",
] as const;
export type ArtifactKind = (typeof artifactKinds)[number];

/** The curated recipes record_analysis may persist (services/analysis-recipes.ts holds one per name). */
export const analysisRecipeNames = ["accelerator_launches", "execution", "failures", "hotspots", "memory", "pytorch", "scaling"] as const;
export type AnalysisRecipeName = (typeof analysisRecipeNames)[number];

/** What get_evidence can look up: a superset of what a finding may cite (generations and observations). */
export const evidenceLookupTypes = ["analysis", "artifact", "comparison", "generation", "observation", "run", "run_set", "trial"] as const;
export type EvidenceLookupType = (typeof evidenceLookupTypes)[number];
