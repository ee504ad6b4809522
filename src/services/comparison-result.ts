/**
 * The compare_run_sets request and result, and how a result is assembled from its parts: the
 * statistics, the validity and mismatches, the differential hotspots, and the next tool they call for.
 */
import { compatibilityRuleVersion } from "../analysis/comparison.ts";
import type { FailedTrial, Side } from "../analysis/comparison-sides.ts";
import type { DifferentialHotspots } from "../analysis/differential.ts";
import { type ComparisonStatistics, compareDefaults, type Mismatch, type Polarity, type Validity } from "../analysis/statistics/compare.ts";
import { type ExperimentStatistics, polarityOfMetric } from "../domain/experiment.ts";

export const comparisonRecipe = "compare_run_sets.v1";
export const defaultMetric = "runtime.wall_time_ns";

export type CompareRunSetsRequest = {
  /** A run set id, or a run id as a one-run set. */
  baseline: string;
  candidate: string;
  metric?: string | null;
  unit?: string | null;
  polarity?: Polarity | null;
  practical_threshold?: number | null;
  confidence_level?: number | null;
  random_seed?: number | null;
  minimum_samples?: number | null;
  pairing?: "auto" | "paired" | "unpaired" | null;
  hotspot_limit?: number | null;
};

export type SideSummary = {
  id: string;
  kind: "run_set" | "run";
  membership_digest: string;
  experiment_id: string | null;
  members: number;
  treatment: string | null;
};

export type { FailedTrial };

export type ComparisonResult = {
  schema_version: 1;
  comparison_id: string;
  recipe: typeof comparisonRecipe;
  corpus_commit_id: string;
  baseline: SideSummary;
  candidate: SideSummary;
  experiment_id: string | null;
  metric: string;
  unit: string | null;
  metric_source: "measurement";
  parameters: {
    polarity: Polarity;
    practical_threshold: number;
    confidence_level: number;
    /** Recorded with the comparison; the t-interval rule draws no random numbers, so it does not change the result. */
    random_seed: number;
    minimum_samples: number;
    source: "request" | "experiment" | "defaults";
  };
  estimand: ComparisonStatistics["estimand"];
  estimator: ComparisonStatistics["estimator"];
  pairing: ComparisonStatistics["pairing"];
  estimate: number | null;
  relative_change: number | null;
  ci: ComparisonStatistics["ci"];
  p_value: number | null;
  test: ComparisonStatistics["test"];
  direction: ComparisonStatistics["direction"];
  decision: ComparisonStatistics["decision"];
  decision_rule: string;
  reasons: ComparisonStatistics["reasons"];
  warnings: ComparisonStatistics["warnings"];
  validity: Validity;
  validity_rule: typeof compatibilityRuleVersion;
  mismatches: Mismatch[];
  counts: ComparisonStatistics["counts"] & {
    members: { baseline: number; candidate: number };
    missing_metric: { baseline: number; candidate: number };
  };
  per_side: {
    baseline: { n: number; median: number; robust_cv: number; min: number; max: number; outlier_run_ids: string[] };
    candidate: { n: number; median: number; robust_cv: number; min: number; max: number; outlier_run_ids: string[] };
  };
  failed_trials: FailedTrial[];
  differential_hotspots: DifferentialHotspots & { evidence: { status: "available" | "unavailable"; reason: string } };
  limitations: string[];
  next_tool: string | null;
};

/** The statistics parameters: the request's, else the experiment's declared ones, else the defaults; `source` says which. */
export function comparisonParameters(
  request: CompareRunSetsRequest,
  declared: ExperimentStatistics | null,
  metric: string,
): ComparisonResult["parameters"] {
  return {
    polarity: request.polarity ?? declared?.polarity ?? polarityOfMetric(metric) ?? "lower_is_better",
    practical_threshold: request.practical_threshold ?? declared?.practical_threshold ?? compareDefaults.practical_threshold,
    confidence_level: request.confidence_level ?? declared?.confidence_level ?? compareDefaults.confidence_level,
    random_seed: request.random_seed ?? declared?.random_seed ?? 0,
    minimum_samples: request.minimum_samples ?? compareDefaults.minimum_samples,
    source:
      request.polarity != null || request.practical_threshold != null || request.confidence_level != null || request.random_seed != null
        ? "request"
        : declared
          ? "experiment"
          : "defaults",
  };
}

/** The compare_run_sets result: the statistics, validity and differential hotspots, and the next tool they call for. */
export function comparisonResult(parts: {
  comparisonId: string;
  corpusCommitId: string;
  baseline: SideSummary;
  candidate: SideSummary;
  experimentId: string | null;
  metric: string;
  unit: string | null;
  parameters: ComparisonResult["parameters"];
  statistics: ComparisonStatistics;
  validity: { validity: Validity; mismatches: Mismatch[] };
  members: { baseline: number; candidate: number };
  missingMetric: { baseline: number; candidate: number };
  failedTrials: FailedTrial[];
  differential: DifferentialHotspots;
  limitations: string[];
}): ComparisonResult {
  const { statistics, validity, differential } = parts;
  const describe = (side: Side) => {
    const description = statistics.per_side[side];
    return {
      n: description.n,
      median: description.median,
      robust_cv: description.robust_cv,
      min: description.min,
      max: description.max,
      outlier_run_ids: description.outlier_run_ids,
    };
  };
  return {
    schema_version: 1,
    comparison_id: parts.comparisonId,
    recipe: comparisonRecipe,
    corpus_commit_id: parts.corpusCommitId,
    baseline: parts.baseline,
    candidate: parts.candidate,
    experiment_id: parts.experimentId,
    metric: parts.metric,
    unit: parts.unit,
    metric_source: "measurement",
    parameters: parts.parameters,
    estimand: statistics.estimand,
    estimator: statistics.estimator,
    pairing: statistics.pairing,
    estimate: statistics.estimate,
    relative_change: statistics.relative_change,
    ci: statistics.ci,
    p_value: statistics.p_value,
    test: statistics.test,
    direction: statistics.direction,
    decision: statistics.decision,
    decision_rule: statistics.decision_rule,
    reasons: statistics.reasons,
    warnings: statistics.warnings,
    validity: validity.validity,
    validity_rule: compatibilityRuleVersion,
    mismatches: validity.mismatches,
    counts: { ...statistics.counts, members: parts.members, missing_metric: parts.missingMetric },
    per_side: { baseline: describe("baseline"), candidate: describe("candidate") },
    failed_trials: parts.failedTrials.slice(0, 100),
    differential_hotspots: {
      ...differential,
      evidence:
        differential.unit === null
          ? {
              status: "unavailable",
              reason:
                "The runs hold no stack samples of one measure (time, or bytes) on both sides; capture with a profiling adapter (e.g. py-spy) to see which functions gained or lost time.",
            }
          : { status: "available", reason: `Shares of ${differential.unit} per function, each run weighted equally within its side.` },
    },
    limitations: parts.limitations,
    next_tool:
      validity.validity === "invalid"
        ? "freeze_run_set"
        : statistics.decision === "inconclusive" || statistics.decision === "descriptive"
          ? "plan_experiment"
          : "record_comparison",
  };
}
