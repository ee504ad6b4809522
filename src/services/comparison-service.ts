import { canonicalJson, digestOf } from "../domain/canonical-json.ts";
import { type FlameoxError, invalidInput, notFound, runNotFound, workspaceInvalid } from "../domain/errors.ts";
import {
  compatibilityMismatches,
  compatibilityRuleVersion,
  isFailedOutcome,
  metricPerRunSql,
  type MemberFacts,
} from "../analysis/comparison.ts";
import { differentialHotspots, selfWeightsPerRun, stackUnitOf, type DifferentialHotspots } from "../analysis/differential.ts";
import { toNumber } from "../analysis/evidence-query.ts";
import { hotspotGrowth, scalingSeries, type HotspotGrowth, type ScalingSeries } from "../analysis/scaling.ts";
import {
  compareSamples,
  compareDefaults,
  deriveValidity,
  type ComparisonStatistics,
  type Mismatch,
  type Polarity,
  type Sample,
  type Validity,
} from "../analysis/statistics/compare.ts";
import { corpusHead } from "../store/corpus.ts";
import { EvidenceView } from "../store/evidence-query.ts";
import { currentBundles } from "../store/evidence-registry.ts";
import { readRun, type RunManifest } from "../store/run-store.ts";
import type { ProgressReporter } from "./progress.ts";
import type { RunSet } from "../store/run-set-store.ts";
import type { RunSetService } from "./run-set-service.ts";
import type { EvidenceReceipt, EvidenceRecord, EvidenceRecordStore } from "../store/evidence-record-store.ts";
import type { ExperimentStore, Experiment, Trial } from "../store/experiment-store.ts";
import type { WorkspaceHandle } from "../store/workspace-handle.ts";

export const comparisonRecipe = "compare_run_sets.v1";
export const scalingRecipe = "analyze_scaling.v1";
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
  resamples?: number | null;
  minimum_samples?: number | null;
  pairing?: "auto" | "paired" | "unpaired" | null;
  hotspot_limit?: number | null;
};

type SideSummary = {
  id: string;
  kind: "run_set" | "run";
  membership_digest: string;
  experiment_id: string | null;
  members: number;
  treatment: string | null;
};

export type FailedTrial = {
  side: "baseline" | "candidate";
  run_id: string;
  trial_id: string | null;
  outcome: string;
  reason: string | null;
};

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
    random_seed: number;
    resamples: number;
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

export type { EvidenceReceipt, EvidenceRecord };

export type ScalingRequest = {
  experiment_id?: string | null;
  run_set_id?: string | null;
  size_parameter?: string | null;
  metric?: string | null;
  confidence_level?: number | null;
  hotspot_limit?: number | null;
};

export type ScalingResult = {
  schema_version: 1;
  recipe: typeof scalingRecipe;
  corpus_commit_id: string;
  source: { kind: "experiment" | "run_set"; id: string };
  size_parameter: string;
  metric: string;
  unit: string | null;
  series: (ScalingSeries & {
    factors: Record<string, unknown>;
    hotspot_growth: HotspotGrowth[];
    fastest_growing_hotspot: HotspotGrowth | null;
  })[];
  counts: { runs: number; eligible_runs: number; failed_or_excluded: number; missing_metric: number; sizes: number };
  missing_sizes: string[];
  hotspot_evidence: { status: "available" | "unavailable"; unit: string | null; reason: string };
  limitations: string[];
  next_tool: string | null;
};

type Side = "baseline" | "candidate";

function metricUnitsOf(rows: { units: string }[]): string[] {
  return [
    ...new Set(
      rows.flatMap((row) =>
        String(row.units ?? "")
          .split(",")
          .filter((unit) => unit !== ""),
      ),
    ),
  ].sort();
}

/**
 * compare_run_sets, record_comparison and analyze_scaling. Read-only recipes pin the corpus head once
 * and read exactly the evidence bundles current at that commit; record_* persist the identical result
 * with its inputs and digest.
 */
export class ComparisonService {
  constructor(
    private readonly workspace: WorkspaceHandle,
    private readonly runSets: RunSetService,
    private readonly experiments: ExperimentStore,
    private readonly evidenceRecords: EvidenceRecordStore,
  ) {}

  private get database() {
    return this.workspace.state().database;
  }

  private trial(trialId: string | null): Trial | null {
    return trialId ? this.experiments.findTrial(trialId) : null;
  }

  private facts(runSet: RunSet): { member: RunSet["members"][number]; facts: MemberFacts; manifest: RunManifest }[] {
    return runSet.members.map((member) => {
      const manifest = readRun(this.database, member.run_id);
      if (!manifest) {
        throw runNotFound(member.run_id, {
          message: `Run ${member.run_id} of run set ${runSet.run_set_id} no longer exists.`,
          remediation: ["Freeze a new run set of existing runs."],
        });
      }
      const trial = this.trial(member.trial_id);
      const outcome = trial ? trial.outcome : manifest.run_type === "import" ? "not_applicable" : manifest.execution_status;
      const observations =
        trial?.oracle?.strength === "cross_treatment_equivalence" && trial.oracle.receipt
          ? { [trial.oracle.receipt.case_id]: canonicalJson(trial.oracle.receipt.observed ?? null) }
          : null;
      return {
        member,
        manifest,
        facts: {
          run_id: member.run_id,
          trial_id: member.trial_id,
          block_id: member.block_id,
          included: member.included,
          outcome,
          workload_definition_id: manifest.workload_definition_id,
          environment_id: manifest.environment_id,
          source_state_id: manifest.source_state_id,
          adapter: manifest.adapter,
          adapter_options_digest: digestOf(manifest.adapter_options ?? {}),
          validation_status: manifest.validation_status,
          oracle_observations: observations,
        },
      };
    });
  }

  private experimentOf(id: string | null): Experiment | null {
    return id ? this.experiments.find(id) : null;
  }

  async compare(request: CompareRunSetsRequest, progress?: ProgressReporter): Promise<ComparisonResult> {
    const baseline = this.runSets.resolve(request.baseline);
    const candidate = this.runSets.resolve(request.candidate);
    const head = corpusHead(this.database);
    await progress?.(0, 2, "Comparison snapshot pinned");
    const sameExperiment =
      baseline.runSet.experiment_id !== null && baseline.runSet.experiment_id === candidate.runSet.experiment_id
        ? baseline.runSet.experiment_id
        : null;
    const experiment = this.experimentOf(sameExperiment);
    const declared = experiment?.statistics ?? null;
    const metric = request.metric ?? declared?.primary_metric ?? defaultMetric;
    const parameters = {
      polarity: request.polarity ?? declared?.polarity ?? "lower_is_better",
      practical_threshold: request.practical_threshold ?? declared?.practical_threshold ?? compareDefaults.practical_threshold,
      confidence_level: request.confidence_level ?? declared?.confidence_level ?? compareDefaults.confidence_level,
      random_seed: request.random_seed ?? declared?.random_seed ?? 0,
      resamples: request.resamples ?? compareDefaults.resamples,
      minimum_samples: request.minimum_samples ?? compareDefaults.minimum_samples,
      source: (request.polarity != null ||
      request.practical_threshold != null ||
      request.confidence_level != null ||
      request.random_seed != null
        ? "request"
        : declared
          ? "experiment"
          : "defaults") as "request" | "experiment" | "defaults",
    };
    const sides = { baseline: this.facts(baseline.runSet), candidate: this.facts(candidate.runSet) };
    const failed = { baseline: 0, candidate: 0 };
    const excluded = { baseline: 0, candidate: 0 };
    const failedTrials: FailedTrial[] = [];
    const eligibleRuns: Record<Side, { run_id: string; block: string | null }[]> = { baseline: [], candidate: [] };
    for (const side of ["baseline", "candidate"] as const) {
      for (const { member, facts } of sides[side]) {
        if (isFailedOutcome(facts.outcome) || (member.included && facts.validation_status === "failed")) {
          failed[side] += 1;
          failedTrials.push({
            side,
            run_id: member.run_id,
            trial_id: member.trial_id,
            outcome: facts.validation_status === "failed" && !isFailedOutcome(facts.outcome) ? "validation_failed" : facts.outcome,
            reason: member.reason,
          });
        } else if (!member.included) {
          excluded[side] += 1;
        } else {
          eligibleRuns[side].push({ run_id: member.run_id, block: sameExperiment ? member.block_id : null });
        }
      }
    }
    const allEligible = [...eligibleRuns.baseline, ...eligibleRuns.candidate].map((entry) => entry.run_id);
    const bundles = allEligible.flatMap((runId) => currentBundles(this.database, { runId, maxSequence: head.sequence }));
    const view = await EvidenceView.open(
      this.workspace.open(),
      bundles.map((bundle) => bundle.bundle_id),
    );
    let metricRows: { run_id: string; value: unknown; units: string }[];
    let differential: DifferentialHotspots;
    try {
      metricRows = await view.rows<{ run_id: string; value: unknown; units: string }>(metricPerRunSql(metric, allEligible));
      differential = await differentialHotspots(
        view,
        eligibleRuns.baseline.map((entry) => entry.run_id),
        eligibleRuns.candidate.map((entry) => entry.run_id),
        request.hotspot_limit ?? 10,
      );
    } finally {
      view.close();
    }
    await progress?.(1, 2, "Comparison query complete");
    const units = metricUnitsOf(metricRows);
    const valueByRun = new Map(metricRows.map((row) => [row.run_id, toNumber(row.value)]));
    const samples: Record<Side, Sample[]> = { baseline: [], candidate: [] };
    const missingMetric = { baseline: 0, candidate: 0 };
    for (const side of ["baseline", "candidate"] as const) {
      for (const entry of eligibleRuns[side]) {
        const value = valueByRun.get(entry.run_id);
        if (value === undefined) missingMetric[side] += 1;
        else samples[side].push({ run_id: entry.run_id, value, block: entry.block });
      }
    }
    const statistics = compareSamples({
      baseline: samples.baseline,
      candidate: samples.candidate,
      pairing: request.pairing && request.pairing !== "auto" ? request.pairing : "auto",
      polarity: parameters.polarity,
      practical_threshold: parameters.practical_threshold,
      confidence_level: parameters.confidence_level,
      seed: parameters.random_seed,
      resamples: parameters.resamples,
      minimum_samples: parameters.minimum_samples,
      failed_counts: failed,
      excluded: { baseline: excluded.baseline + missingMetric.baseline, candidate: excluded.candidate + missingMetric.candidate },
    });
    const mismatches: Mismatch[] = compatibilityMismatches(
      { baseline: sides.baseline.map((entry) => entry.facts), candidate: sides.candidate.map((entry) => entry.facts) },
      failed,
    );
    if (request.unit && units.length > 0 && units.some((unit) => unit !== request.unit)) {
      mismatches.push({
        code: "unit_mismatch",
        severity: "invalidating",
        message: `The metric ${metric} is recorded in ${units.join(", ")}, not the requested ${request.unit}.`,
      });
    } else if (units.length > 1) {
      mismatches.push({
        code: "unit_mismatch",
        severity: "invalidating",
        message: `The metric ${metric} is recorded in several units (${units.join(", ")}); values in different units cannot be compared.`,
      });
    }
    for (const side of ["baseline", "candidate"] as const) {
      if (samples[side].length === 0) {
        mismatches.push({
          code: "no_eligible_samples",
          severity: "invalidating",
          message: `The ${side} has no eligible value of ${metric} (${eligibleRuns[side].length} eligible run(s), ${failed[side]} failed, ${excluded[side]} excluded).`,
        });
      } else if (missingMetric[side] > 0) {
        mismatches.push({
          code: "missing_metric",
          severity: "exploratory",
          message: `${missingMetric[side]} eligible ${side} run(s) have no ${metric} value and were skipped.`,
        });
      }
    }
    mismatches.push(...statistics.validity_mismatches);
    const validity = deriveValidity(mismatches);
    const summary = (side: Side, resolved: typeof baseline): SideSummary => ({
      id: resolved.runSet.run_set_id,
      kind: resolved.kind,
      membership_digest: resolved.runSet.membership_digest,
      experiment_id: resolved.runSet.experiment_id,
      members: resolved.runSet.members.length,
      treatment: (resolved.runSet.selection.treatment as string | undefined) ?? sides[side][0]?.member.treatment ?? null,
    });
    const normalizedRequest = {
      metric,
      unit: request.unit ?? null,
      pairing: request.pairing ?? "auto",
      hotspot_limit: request.hotspot_limit ?? 10,
      ...parameters,
    };
    const comparisonId = digestOf({
      recipe: comparisonRecipe,
      request: normalizedRequest,
      baseline: baseline.runSet.membership_digest,
      candidate: candidate.runSet.membership_digest,
      corpus_commit_id: head.commit_id,
    });
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
    const limitations: string[] = [];
    if (statistics.pairing === "unpaired" && sameExperiment === null && (baseline.runSet.experiment_id || candidate.runSet.experiment_id)) {
      limitations.push(
        "The run sets come from different experiments (or only one from an experiment), so blocks cannot pair them; the comparison is unpaired.",
      );
    }
    await progress?.(2, 2, "Comparison result ready");
    return {
      schema_version: 1,
      comparison_id: comparisonId,
      recipe: comparisonRecipe,
      corpus_commit_id: head.commit_id,
      baseline: summary("baseline", baseline),
      candidate: summary("candidate", candidate),
      experiment_id: sameExperiment,
      metric,
      unit: units.length === 1 ? units[0]! : (request.unit ?? null),
      metric_source: "measurement",
      parameters,
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
      counts: {
        ...statistics.counts,
        members: { baseline: baseline.runSet.members.length, candidate: candidate.runSet.members.length },
        missing_metric: missingMetric,
      },
      per_side: { baseline: describe("baseline"), candidate: describe("candidate") },
      failed_trials: failedTrials.slice(0, 100),
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
      limitations,
      next_tool:
        validity.validity === "invalid"
          ? "freeze_run_set"
          : statistics.decision === "inconclusive"
            ? "plan_experiment"
            : "record_comparison",
    };
  }

  /** Same recipe as compare; persisted with its exact inputs, pinned commit and result digest. Deterministic ids make it idempotent. */
  async record(request: CompareRunSetsRequest, progress?: ProgressReporter): Promise<EvidenceReceipt> {
    const result = await this.compare(request, async (step, _total, message) => progress?.(step, 3, message));
    await progress?.(2, 3, "Publishing comparison provenance");
    const inputs = {
      request,
      baseline: { id: result.baseline.id, kind: result.baseline.kind, membership_digest: result.baseline.membership_digest },
      candidate: { id: result.candidate.id, kind: result.candidate.kind, membership_digest: result.candidate.membership_digest },
      run_ids: {
        baseline: this.runSets.resolve(request.baseline).runSet.members.map((member) => member.run_id),
        candidate: this.runSets.resolve(request.candidate).runSet.members.map((member) => member.run_id),
      },
    };
    const receipt = this.evidenceRecords.record({
      refType: "comparison",
      refId: result.comparison_id,
      recipe: comparisonRecipe,
      inputs,
      corpusCommitId: result.corpus_commit_id,
      result: result as unknown as Record<string, unknown>,
    });
    await progress?.(3, 3, "Comparison publication complete");
    return { ...receipt, decision: result.decision, validity: result.validity, estimate: result.estimate };
  }

  getEvidence(refType: string, refId: string): EvidenceRecord {
    if (refType !== "analysis" && refType !== "comparison") {
      throw workspaceInvalid(`Evidence ref_type must be 'analysis' or 'comparison', not '${refType}'.`, {
        details: { ref_type: refType },
        remediation: ["Use ref_type 'comparison' for record_comparison results and 'analysis' for record_analysis results."],
      });
    }
    const found = this.evidenceRecords.find(refType, refId);
    if (!found) {
      throw notFound(refType, refId, {
        field: "ref_id",
        message: `No recorded ${refType} ${refId} exists in this workspace.`,
        remediation: [
          refType === "comparison" ? "Persist a comparison with record_comparison." : "Persist an analysis with record_analysis.",
        ],
        list: { tool: refType === "comparison" ? "record_comparison" : "record_analysis" },
      });
    }
    return found;
  }

  /**
   * Cost versus size over existing runs only: an experiment's successful trials (size = a factor) or a
   * frozen run set's included runs (size = a run parameter). It never runs missing trials.
   */
  async scaling(request: ScalingRequest, progress?: ProgressReporter): Promise<ScalingResult> {
    const head = corpusHead(this.database);
    await progress?.(0, 2, "Scaling snapshot pinned");
    if ((request.experiment_id ? 1 : 0) + (request.run_set_id ? 1 : 0) !== 1) {
      throw invalidInput(
        "Pass exactly one of experiment_id or run_set_id.",
        [{ field: "experiment_id", message: "exactly one of experiment_id or run_set_id", type: "value_error" }],
        { remediation: ["Name the experiment (or frozen run set) whose runs vary a size parameter."] },
      );
    }
    type Entry = { run_id: string; parameters: Record<string, unknown>; ok: boolean };
    let entries: Entry[];
    let plannedSizes: string[] = [];
    let sizeParameter = request.size_parameter ?? null;
    let metric = request.metric ?? defaultMetric;
    let confidence = request.confidence_level ?? 0.95;
    let source: ScalingResult["source"];
    const limitations: string[] = [];
    if (request.experiment_id) {
      const experiment = this.experiments.find(request.experiment_id);
      if (!experiment)
        throw notFound("experiment", request.experiment_id, { remediation: ["Use the experiment_id returned by run_experiment."] });
      source = { kind: "experiment", id: experiment.experiment_id };
      metric = request.metric ?? experiment.statistics.primary_metric;
      confidence = request.confidence_level ?? experiment.statistics.confidence_level;
      const trials = this.experiments.trialsOf(experiment.experiment_id);
      sizeParameter ??=
        experiment.definition.scaling_parameter ??
        (numericLevels(experiment.factors[experiment.treatment_factor])
          ? experiment.treatment_factor
          : (Object.keys(experiment.factors).find((factor) => numericLevels(experiment.factors[factor])) ?? null));
      if (!sizeParameter || !experiment.factors[sizeParameter]) throw noSizeParameter(Object.keys(experiment.factors));
      plannedSizes = experiment.factors[sizeParameter]!.map(String);
      entries = trials
        .filter((trial) => trial.run_id !== null)
        .map((trial) => ({ run_id: trial.run_id!, parameters: trial.factors, ok: trial.outcome === "succeeded" }));
      const unattempted = trials.filter((trial) => trial.outcome === "unattempted").length;
      if (unattempted > 0) limitations.push(`${unattempted} planned trial(s) were never attempted; analyze_scaling does not run them.`);
    } else {
      const runSet = this.runSets.get(request.run_set_id!);
      source = { kind: "run_set", id: runSet.run_set_id };
      entries = runSet.members.map((member) => {
        const manifest = readRun(this.database, member.run_id)!;
        const trial = this.trial(member.trial_id);
        const outcome = trial ? trial.outcome : manifest.execution_status;
        return {
          run_id: member.run_id,
          parameters: trial?.factors ?? manifest.parameters,
          ok: member.included && !isFailedOutcome(outcome),
        };
      });
      if (!sizeParameter) {
        const names = [...new Set(entries.flatMap((entry) => Object.keys(entry.parameters)))].filter((name) => {
          const values = new Set(
            entries
              .map((entry) => entry.parameters[name])
              .filter((value) => positiveNumber(value) !== null)
              .map(String),
          );
          return values.size >= 2 && entries.every((entry) => positiveNumber(entry.parameters[name]) !== null);
        });
        if (names.length !== 1) throw noSizeParameter(names);
        sizeParameter = names[0]!;
      }
    }
    const eligible = entries.filter((entry) => entry.ok && positiveNumber(entry.parameters[sizeParameter!]) !== null);
    const runIds = eligible.map((entry) => entry.run_id);
    const bundles = runIds.flatMap((runId) => currentBundles(this.database, { runId, maxSequence: head.sequence }));
    const view = await EvidenceView.open(
      this.workspace.open(),
      bundles.map((bundle) => bundle.bundle_id),
    );
    let rows: { run_id: string; value: unknown; units: string }[];
    let stackUnit: string | null = null;
    let weights: Awaited<ReturnType<typeof selfWeightsPerRun>> = [];
    try {
      rows = await view.rows<{ run_id: string; value: unknown; units: string }>(metricPerRunSql(metric, runIds));
      stackUnit = await stackUnitOf(view, runIds);
      if (stackUnit) weights = await selfWeightsPerRun(view, runIds, stackUnit);
    } finally {
      view.close();
    }
    await progress?.(1, 2, "Scaling query complete");
    const units = metricUnitsOf(rows);
    if (units.length > 1) limitations.push(`The metric comes in several units (${units.join(", ")}); the fit mixes them.`);
    const values = new Map(rows.map((row) => [row.run_id, toNumber(row.value)]));
    const seriesKey = (parameters: Record<string, unknown>) =>
      canonicalJson(Object.fromEntries(Object.entries(parameters).filter(([name]) => name !== sizeParameter)));
    const observations = eligible
      .filter((entry) => values.has(entry.run_id))
      .map((entry) => ({
        run_id: entry.run_id,
        size: positiveNumber(entry.parameters[sizeParameter!])!,
        series: seriesKey(entry.parameters),
        cost: values.get(entry.run_id)!,
      }));
    const fitted = scalingSeries(observations, confidence);
    const observedSizes = new Set(observations.map((observation) => String(observation.size)));
    const missingSizes = plannedSizes.filter((size) => !observedSizes.has(String(positiveNumber(size) ?? size)));
    if (missingSizes.length > 0)
      limitations.push(
        `No successful run at size ${missingSizes.join(", ")}; collect them with plan_experiment/run_experiment (analyze_scaling never runs trials).`,
      );
    limitations.push("Fits describe the measured size range only; do not extrapolate beyond it.");
    const series = fitted.map((entry) => {
      const runSizes = new Map(
        observations
          .filter((observation) => observation.series === entry.series)
          .map((observation) => [observation.run_id, observation.size]),
      );
      const growth = stackUnit
        ? hotspotGrowth(
            weights.filter((weight) => runSizes.has(weight.run_id)),
            runSizes,
            { limit: request.hotspot_limit ?? 10 },
          )
        : [];
      return {
        ...entry,
        factors: JSON.parse(entry.series) as Record<string, unknown>,
        hotspot_growth: growth,
        fastest_growing_hotspot: growth[0] ?? null,
      };
    });
    await progress?.(2, 2, "Scaling result ready");
    return {
      schema_version: 1,
      recipe: scalingRecipe,
      corpus_commit_id: head.commit_id,
      source,
      size_parameter: sizeParameter!,
      metric,
      unit: units[0] ?? null,
      series,
      counts: {
        runs: entries.length,
        eligible_runs: eligible.length,
        failed_or_excluded: entries.length - eligible.length,
        missing_metric: eligible.length - observations.length,
        sizes: observedSizes.size,
      },
      missing_sizes: missingSizes,
      hotspot_evidence: stackUnit
        ? { status: "available", unit: stackUnit, reason: "Self weight per function and size, mean over the runs at each size." }
        : {
            status: "unavailable",
            unit: null,
            reason:
              "The runs hold no stack samples; run the experiment with a profiling adapter (e.g. py-spy) to rank which function grows fastest.",
          },
      limitations,
      next_tool: missingSizes.length > 0 ? "plan_experiment" : "record_analysis",
    };
  }
}

function positiveNumber(value: unknown): number | null {
  const number = typeof value === "number" ? value : typeof value === "string" && value.trim() !== "" ? Number(value) : Number.NaN;
  return Number.isFinite(number) && number > 0 ? number : null;
}

function numericLevels(levels: readonly unknown[] | undefined): boolean {
  return levels !== undefined && levels.length >= 2 && levels.every((level) => positiveNumber(level) !== null);
}

function noSizeParameter(candidates: string[]): FlameoxError {
  return invalidInput(
    candidates.length === 0
      ? "No numeric size parameter varies across these runs."
      : `Several parameters could be the size (${candidates.join(", ")}); name one with size_parameter.`,
    [{ field: "size_parameter", message: "name the numeric size parameter", type: "value_error" }],
    {
      details: { candidates },
      remediation: ["Pass size_parameter naming the numeric factor or workload parameter that sets the input size."],
    },
  );
}
