import { isFailedOutcome, metricPerRun } from "../analysis/comparison.ts";
import { metricUnitsOf } from "../analysis/comparison-sides.ts";
import { selfWeightsPerRun, stackUnitOf } from "../analysis/differential.ts";
import { toNumber } from "../analysis/evidence-query.ts";
import { type HotspotGrowth, hotspotGrowth, type ScalingSeries, scalingSeries } from "../analysis/scaling.ts";
import { canonicalJson } from "../domain/canonical-json.ts";
import { type FlameoxError, invalidInput, notFound } from "../domain/errors.ts";
import { corpusHead } from "../store/corpus.ts";
import { currentBundles } from "../store/evidence-registry.ts";
import { withBundles } from "./evidence-scope.ts";
import type { Experiment, ExperimentStore } from "../store/experiment-store.ts";
import { readRun } from "../store/run-store.ts";
import type { WorkspaceHandle } from "../store/workspace-handle.ts";
import { defaultMetric } from "./comparison-service.ts";
import type { ProgressReporter } from "./progress.ts";
import type { RunSetService } from "./run-set-service.ts";

export const scalingRecipe = "analyze_scaling.v1";

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

/** One existing run, its parameters (a trial's factors where it has them) and whether it counts. */
type Entry = { run_id: string; parameters: Record<string, unknown>; ok: boolean };

/** The runs a scaling request covers, the size parameter, and what the source says about metric and confidence. */
type Population = {
  source: ScalingResult["source"];
  entries: Entry[];
  sizeParameter: string;
  plannedSizes: string[];
  metric: string;
  confidence: number;
  limitations: string[];
};

function positiveNumber(value: unknown): number | null {
  const number = typeof value === "number" ? value : typeof value === "string" && value.trim() !== "" ? Number(value) : Number.NaN;
  return Number.isFinite(number) && number > 0 ? number : null;
}

export function numericLevels(levels: readonly unknown[] | undefined): boolean {
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

/** The experiment's declared scaling parameter, else its treatment factor, else any factor, with numeric levels. */
function experimentSizeParameter(experiment: Experiment): string | null {
  return (
    experiment.definition.scaling_parameter ??
    (numericLevels(experiment.factors[experiment.treatment_factor])
      ? experiment.treatment_factor
      : (Object.keys(experiment.factors).find((factor) => numericLevels(experiment.factors[factor])) ?? null))
  );
}

/** The one parameter every run has as a positive number, taking at least two values; anything else is ambiguous. */
function runSetSizeParameter(entries: Entry[]): string {
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
  return names[0]!;
}

/** One fit per series (the other parameters held fixed), each with the hotspots that grow fastest across its sizes. */
function fitSeries(
  observations: { run_id: string; size: number; series: string; cost: number }[],
  confidence: number,
  weights: Awaited<ReturnType<typeof selfWeightsPerRun>> | null,
  hotspotLimit: number,
): ScalingResult["series"] {
  return scalingSeries(observations, confidence).map((entry) => {
    const runSizes = new Map(
      observations
        .filter((observation) => observation.series === entry.series)
        .map((observation) => [observation.run_id, observation.size]),
    );
    const growth = weights
      ? hotspotGrowth(
          weights.filter((weight) => runSizes.has(weight.run_id)),
          runSizes,
          { limit: hotspotLimit },
        )
      : [];
    return {
      ...entry,
      factors: JSON.parse(entry.series) as Record<string, unknown>,
      hotspot_growth: growth,
      fastest_growing_hotspot: growth[0] ?? null,
    };
  });
}

/**
 * analyze_scaling: cost versus size over existing runs only, from an experiment's successful trials
 * (size = a factor) or a frozen run set's included runs (size = a run parameter). It never runs
 * missing trials; the fits describe the measured range and the hotspots that grow fastest in it.
 */
export class ScalingService {
  constructor(
    private readonly workspace: WorkspaceHandle,
    private readonly runSets: RunSetService,
    private readonly experiments: ExperimentStore,
  ) {}

  async analyze(request: ScalingRequest, progress?: ProgressReporter): Promise<ScalingResult> {
    const database = this.workspace.state().database;
    const head = corpusHead(database);
    await progress?.(0, 2, "Scaling snapshot pinned");
    if ((request.experiment_id ? 1 : 0) + (request.run_set_id ? 1 : 0) !== 1) {
      throw invalidInput(
        "Pass exactly one of experiment_id or run_set_id.",
        [{ field: "experiment_id", message: "exactly one of experiment_id or run_set_id", type: "value_error" }],
        { remediation: ["Name the experiment (or frozen run set) whose runs vary a size parameter."] },
      );
    }
    const population = request.experiment_id
      ? this.fromExperiment(request, request.experiment_id)
      : this.fromRunSet(request, request.run_set_id!);
    const { entries, sizeParameter, limitations } = population;
    const eligible = entries.filter((entry) => entry.ok && positiveNumber(entry.parameters[sizeParameter]) !== null);
    const runIds = eligible.map((entry) => entry.run_id);
    const { rows, stackUnit, weights } = await this.queryEvidence(head.sequence, population.metric, runIds);
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
        size: positiveNumber(entry.parameters[sizeParameter])!,
        series: seriesKey(entry.parameters),
        cost: values.get(entry.run_id)!,
      }));
    const observedSizes = new Set(observations.map((observation) => String(observation.size)));
    const missingSizes = population.plannedSizes.filter((size) => !observedSizes.has(String(positiveNumber(size) ?? size)));
    if (missingSizes.length > 0)
      limitations.push(
        `No successful run at size ${missingSizes.join(", ")}; collect them with plan_experiment/run_experiment (analyze_scaling never runs trials).`,
      );
    limitations.push("Fits describe the measured size range only; do not extrapolate beyond it.");
    const series = fitSeries(observations, population.confidence, stackUnit ? weights : null, request.hotspot_limit ?? 10);
    await progress?.(2, 2, "Scaling result ready");
    return {
      schema_version: 1,
      recipe: scalingRecipe,
      corpus_commit_id: head.commit_id,
      source: population.source,
      size_parameter: sizeParameter,
      metric: population.metric,
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

  /** The runs' metric values and, when they hold stack samples of one unit, each function's self weight per run. */
  private async queryEvidence(sequence: number, metric: string, runIds: string[]) {
    const bundles = runIds.flatMap((runId) => currentBundles(this.workspace.state().database, { runId, maxSequence: sequence }));
    return withBundles(
      this.workspace,
      bundles.map((bundle) => bundle.bundle_id),
      async (view) => {
        const rows = await metricPerRun(view, metric, runIds);
        const stackUnit = await stackUnitOf(view, runIds);
        const weights = stackUnit ? await selfWeightsPerRun(view, runIds, stackUnit) : [];
        return { rows, stackUnit, weights };
      },
    );
  }

  /** An experiment's attempted trials; its statistics supply the metric and confidence the request leaves out. */
  private fromExperiment(request: ScalingRequest, experimentId: string): Population {
    const experiment = this.experiments.find(experimentId);
    if (!experiment) throw notFound("experiment", experimentId, { remediation: ["Use the experiment_id returned by run_experiment."] });
    const trials = this.experiments.trialsOf(experiment.experiment_id);
    const sizeParameter = request.size_parameter ?? experimentSizeParameter(experiment);
    if (!sizeParameter || !experiment.factors[sizeParameter]) throw noSizeParameter(Object.keys(experiment.factors));
    const limitations: string[] = [];
    const unattempted = trials.filter((trial) => trial.outcome === "unattempted").length;
    if (unattempted > 0) limitations.push(`${unattempted} planned trial(s) were never attempted; analyze_scaling does not run them.`);
    return {
      source: { kind: "experiment", id: experiment.experiment_id },
      entries: trials
        .filter((trial) => trial.run_id !== null)
        .map((trial) => ({ run_id: trial.run_id!, parameters: trial.factors, ok: trial.outcome === "succeeded" })),
      sizeParameter,
      plannedSizes: experiment.factors[sizeParameter]!.map(String),
      metric: request.metric ?? experiment.statistics.primary_metric,
      confidence: request.confidence_level ?? experiment.statistics.confidence_level,
      limitations,
    };
  }

  /** A frozen run set's members; a member's trial (if any) supplies its factors and outcome. */
  private fromRunSet(request: ScalingRequest, runSetId: string): Population {
    const database = this.workspace.state().database;
    const runSet = this.runSets.get(runSetId);
    const entries = runSet.members.map((member) => {
      const manifest = readRun(database, member.run_id)!;
      const trial = member.trial_id ? this.experiments.findTrial(member.trial_id) : null;
      const outcome = trial ? trial.outcome : manifest.execution_status;
      return { run_id: member.run_id, parameters: trial?.factors ?? manifest.parameters, ok: member.included && !isFailedOutcome(outcome) };
    });
    return {
      source: { kind: "run_set", id: runSet.run_set_id },
      entries,
      sizeParameter: request.size_parameter ?? runSetSizeParameter(entries),
      plannedSizes: [],
      metric: request.metric ?? defaultMetric,
      confidence: request.confidence_level ?? 0.95,
      limitations: [],
    };
  }
}
