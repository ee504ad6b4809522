/** The records of reductions: the plan an agent reviews, the result and every attempt. */
import type { PlanReductionInput, ReductionEngine, ReductionLimitsInput, ReductionPartitioner } from "./requests/reductions.ts";

/** The variable that names the candidate file a predicate workload must judge. */
export const reductionCandidateVariable = "FLAMEOX_REDUCTION_CANDIDATE";

export const nativeEngineVersion = "ddmin-1";

export type ReductionPlan = {
  schema_version: 1;
  /** The single-use token execute_reduction takes. */
  plan_id: string;
  reduction_id: string;
  request_digest: string;
  original: { artifact_id: string; byte_length: number; kind: string; unit_count: number };
  partitioner: ReductionPartitioner;
  engine: { name: ReductionEngine; version: string };
  predicate: { workload_name: string; workload_definition_id: string; argv: string[]; cwd: string; candidate_variable: string };
  limits: ReductionLimitsInput;
  created_at: string;
  expires_at: string;
  warnings: string[];
};

export type ReductionDisposition =
  | "running"
  /** A smaller candidate that still makes the predicate exit 0 was stored. */
  | "succeeded"
  /** Nothing could be removed. */
  | "unchanged"
  /** The predicate did not exit 0 on the original: there is nothing to preserve. */
  | "original_not_interesting"
  /** The predicate could not be trusted (it failed to run, disagreed with itself on the original, or the result did not revalidate). */
  | "inconclusive"
  | "cancelled";

export type AttemptClassification = "interesting" | "not_interesting" | "timed_out" | "contradictory" | "failed_to_run";

export type ReductionAttempt = {
  attempt: number;
  candidate_digest: string;
  units: number;
  byte_length: number;
  removed_units: number;
  dependency_added_units: number;
  classification: AttemptClassification;
  cache_status: "miss" | "hit";
  exit_codes: (number | null)[];
  duration_ms: number;
  became_best: boolean;
};

export type AttemptCounts = {
  /** Predicate executions (a repetition counts once per run). */
  predicate_runs: number;
  candidates: number;
  cache_hits: number;
  interesting: number;
  not_interesting: number;
  timed_out: number;
  contradictory: number;
  dependency_closure_no_op: number;
};

export type ReductionRecord = {
  schema_version: 1;
  reduction_id: string;
  /** The public id of the plan that ran (a digest of its plan_id token; the token itself is never stored). */
  plan_digest: string;
  disposition: ReductionDisposition;
  engine: { name: ReductionEngine; version: string };
  partitioner: ReductionPartitioner;
  predicate: { workload_name: string; workload_definition_id: string };
  limits: ReductionLimitsInput;
  original_artifact_id: string;
  /** The reduced artifact (disposition succeeded), stored in run_id. */
  final_artifact_id: string | null;
  /** The smallest interesting candidate when the reduction stopped before claiming a result. */
  best_known_artifact_id: string | null;
  run_id: string | null;
  units: { original: number; final: number };
  byte_lengths: { original: number; final: number };
  attempt_counts: AttemptCounts;
  minimality: "one_minimal" | "not_claimed";
  budget_exhausted: "max_attempts" | "wall_time" | null;
  final_revalidation: "passed" | "failed" | "not_run";
  limitations: string[];
  started_at: string;
  finished_at: string | null;
};

/** Counts of a reduction that has judged nothing yet; the engines fill them in as they go. */
export function emptyAttemptCounts(): AttemptCounts {
  return {
    predicate_runs: 0,
    candidates: 0,
    cache_hits: 0,
    interesting: 0,
    not_interesting: 0,
    timed_out: 0,
    contradictory: 0,
    dependency_closure_no_op: 0,
  };
}

/**
 * The record a reduction starts with, the same for every engine: running, nothing reduced yet, no
 * minimality claimed until the engine can show it. `counts` is the engine's live counts object.
 */
export function startingReductionRecord(
  intent: ReductionIntent,
  planDigest: string,
  originalByteLength: number,
  counts: AttemptCounts,
): ReductionRecord {
  return {
    schema_version: 1,
    reduction_id: intent.reduction_id,
    plan_digest: planDigest,
    disposition: "running",
    engine: { name: intent.request.engine, version: intent.engine_version },
    partitioner: intent.request.partitioner,
    predicate: { workload_name: intent.predicate.workload_name, workload_definition_id: intent.predicate.workload_definition_id },
    limits: intent.request.limits,
    original_artifact_id: intent.original.artifact_id,
    final_artifact_id: null,
    best_known_artifact_id: null,
    run_id: null,
    units: { original: intent.unit_count, final: intent.unit_count },
    byte_lengths: { original: originalByteLength, final: originalByteLength },
    attempt_counts: counts,
    minimality: "not_claimed",
    budget_exhausted: null,
    final_revalidation: "not_run",
    limitations: [],
    started_at: new Date().toISOString(),
    finished_at: null,
  };
}

export type ReductionResult = ReductionRecord & {
  attempts: { rows: ReductionAttempt[]; total: number; returned: number; truncated: boolean; next_cursor: string | null };
  resource_uri: string;
  final_artifact_resource_uri: string | null;
};

/** What plan_reduction bound and execute_reduction rechecks. */
export type ReductionIntent = {
  workspace_id: string;
  reduction_id: string;
  request: PlanReductionInput;
  request_digest: string;
  original: {
    artifact_id: string;
    sha256: string;
    byte_length: number;
    stored_path: string;
    extension: string;
    kind: string;
    format: string | null;
    media_type: string | null;
    display_name: string;
    sensitivity: string;
  };
  unit_count: number;
  engine_version: string;
  /** The managed provider a provider engine (shrinkray) runs from, bound at planning. */
  engine_provider?: EngineProvider;
  predicate: {
    workload_name: string;
    workload_definition_id: string;
    /** argv[0] is the executable resolved at planning. */
    argv: string[];
    cwd: string;
    environment: Record<string, string>;
    executable_digest: string;
  };
  policy_digest: string;
};

/** A provider engine's binding: the environment it runs from and the identity execution rechecks. */
export type EngineProvider = {
  /** `providers/<name>/<version>`. */
  label: string;
  /** The environment's interpreter, which runs the engine's launcher. */
  python: string;
  /** Digest of the verified receipt, the interpreter and the engine's executable. */
  identity: string;
};
