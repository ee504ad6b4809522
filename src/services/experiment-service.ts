import { randomHex } from "../domain/random.ts";
import type { ExperimentConfig, Scalar, WorkloadConfig } from "../config/project-config-schema.ts";
import { resolveWorkloadInvocation, scalarText } from "../config/workload-template.ts";
import { loadWorkspacePolicy } from "../config/workspace-policy.ts";
import { canonicalJson, digestOf } from "../domain/canonical-json.ts";
import { notFound, planRefused, undeclared, workspaceInvalid } from "../domain/errors.ts";
import { type ExperimentStatistics, type PlannedTrial, polarityOfMetric, type TrialOutcome } from "../domain/experiment.ts";
import { effectiveFactors, type OrderSummary, realizeOrder, summarizeOrder } from "../analysis/experiment-design.ts";
import { type DetectableChange, designSensitivity } from "../analysis/experiment-sensitivity.ts";
import { type Experiment, type ExperimentProtocol, type ExperimentStore, protocolOf, type Trial } from "../store/experiment-store.ts";
import type { PlanTokenStore } from "../store/plan-tokens.ts";
import type { WorkspaceHandle } from "../store/workspace-handle.ts";
import type { CaptureService } from "./capture-service.ts";
import type { ExperimentExecution, ExperimentIntent, ExperimentReceipt } from "./experiment-execution.ts";
import type { InvestigationService } from "./investigation-service.ts";
import { bestEffortProgress, defaultHeartbeatIntervalMs, heartbeatProgress, type ProgressReporter } from "./progress.ts";
import type { WorkloadService } from "./workload-service.ts";
import { keysetPage, resumeAfter } from "./keyset-page.ts";

export type { ExperimentIntent, ExperimentReceipt };

export const maximumTrialPage = 1000;

/** The trials a plan lists; the whole order is recorded by run_experiment and order_digest covers it. */
export const planOrderPreview = 6;
const fullOrderLocation =
  "The whole order (order_digest covers it) is recorded when run_experiment starts; list_experiment_trials with its experiment_id pages it.";

export type PlanExperimentRequest = {
  experiment_name: string;
  adapter: string;
  adapter_options?: Record<string, unknown>;
  parameters: Record<string, Scalar>;
  investigation_id?: string | null;
  hypothesis_id?: string | null;
};

export type ExperimentPlan = {
  schema_version: 1;
  plan_id: string;
  experiment_name: string;
  adapter_options: Record<string, unknown>;
} & ExperimentProtocol & {
    trial_count: number;
    /** The first trials of the realized randomized-complete-block order (order_digest covers all of it). */
    order: PlannedTrial[];
    order_truncated: boolean;
    /** Counts over the whole order: trials per treatment and per block, warm-ups, which treatment opens each block. */
    order_summary: OrderSummary;
    /** Where the whole order can be read. */
    full_order: string;
    /** The smallest change any two treatments can be told apart by (performance experiments only). */
    detectable_change: DetectableChange | null;
    execution_policy: "trusted_local";
    warnings: string[];
    created_at: string;
    expires_at: string;
    next_tool: "run_experiment";
  };

export type TrialCollection = {
  schema_version: 1;
  experiment_id: string;
  trials: Trial[];
  total: number;
  returned: number;
  truncated: boolean;
  next_cursor: string | null;
};

/**
 * The performance statistics an experiment declares; the categorical default compares the adapter's own
 * time instead (lower is better), and an undeclared polarity is the metric's own (lower is better for
 * times and bytes), else neutral.
 */
function statisticsOf(experiment: ExperimentConfig, seed: number, performanceMetric: string): ExperimentStatistics {
  const categorical = experiment.primary_metric === "categorical_outcome";
  return {
    primary_metric: categorical ? performanceMetric : experiment.primary_metric,
    polarity: experiment.polarity ?? polarityOfMetric(experiment.primary_metric) ?? "neutral",
    practical_threshold: experiment.practical_threshold,
    confidence_level: experiment.confidence_level,
    estimand: experiment.estimand,
    random_seed: seed,
  };
}

/**
 * What an experiment that names no metric compares: under pyperf, the benchmark's own timings
 * (`pyperf.<name>`), since pyperf calibrates its loops to a fixed duration and the process's wall time
 * then barely moves with the work; under any other adapter, the process's wall time.
 */
function defaultPerformanceMetric(adapter: string, options: Record<string, unknown>): string {
  if (adapter === "pyperf") return `pyperf.${typeof options.name === "string" ? options.name : "workload"}`;
  return "runtime.wall_time_ns";
}

/**
 * The realized order, refused when parameters override a factor, when nothing is left after the
 * exclusions, or when it exceeds max_trials; every distinct combination must render a valid command.
 */
function realizeValidDesign(
  experiment: ExperimentConfig,
  workload: WorkloadConfig,
  parameters: Record<string, Scalar>,
  factors: Record<string, Scalar[]>,
  treatment: string,
): PlannedTrial[] {
  const touched = Object.keys(parameters).filter((name) => Object.hasOwn(factors, name));
  if (touched.length > 0) {
    throw planRefused(
      "experiment",
      `parameters may not override the experiment's factors (${touched.join(", ")}); the design sets them per trial.`,
      {
        details: { parameters: touched },
        remediation: ["Pass only non-factor workload parameters, or change the factors in flameox.toml."],
      },
    );
  }
  const trials = realizeOrder(experiment, factors, treatment, experiment.random_seed);
  if (trials.length === 0)
    throw planRefused("experiment", "The experiment's design has no trials (every combination is excluded).", {
      remediation: ["Loosen the exclude rules in flameox.toml."],
    });
  if (trials.length > experiment.max_trials)
    throw planRefused("experiment", `The design has ${trials.length} trials, above max_trials = ${experiment.max_trials}.`, {
      details: { trials: trials.length, max_trials: experiment.max_trials },
      remediation: ["Lower blocks or factor levels, or raise max_trials."],
    });
  const seen = new Set<string>();
  for (const trial of trials) {
    const key = canonicalJson(trial.factors);
    if (seen.has(key)) continue;
    seen.add(key);
    resolveWorkloadInvocation(workload, { ...parameters, ...trial.factors });
  }
  return trials;
}

/** plan_experiment, run_experiment, get_experiment and the trial listings. */
export class ExperimentService {
  constructor(
    private readonly workspace: WorkspaceHandle,
    private readonly workloads: WorkloadService,
    private readonly captures: CaptureService,
    private readonly investigations: InvestigationService,
    private readonly plans: PlanTokenStore<"experiment", ExperimentIntent>,
    private readonly experiments: ExperimentStore,
    private readonly execution: ExperimentExecution,
    private readonly heartbeatIntervalMs = defaultHeartbeatIntervalMs,
  ) {}

  private async resolveExperiment(name: string) {
    const { config } = await this.workloads.requireConfig();
    const experiment = config.experiments?.[name];
    if (!experiment) {
      throw undeclared("experiment", name, {
        declared: Object.keys(config.experiments ?? {}),
        remediation: ["Call list_declared_workflows(kind='experiment') to see the declared experiments."],
      });
    }
    const { workload, definitionId } = await this.workloads.requireWorkload(experiment.workload);
    return {
      experiment,
      workload,
      workloadDefinitionId: definitionId,
      experimentDefinitionId: digestOf({ kind: "experiment", name, experiment }),
    };
  }

  private checkLinks(request: PlanExperimentRequest): void {
    if (request.investigation_id) this.investigations.getInvestigation(request.investigation_id);
    if (!request.hypothesis_id) return;
    const hypothesis = this.investigations.getHypothesis(request.hypothesis_id);
    if (request.investigation_id && hypothesis.investigation_id !== request.investigation_id) {
      throw workspaceInvalid(
        `Hypothesis ${request.hypothesis_id} belongs to investigation ${hypothesis.investigation_id}, not ${request.investigation_id}.`,
        {
          details: { hypothesis_id: request.hypothesis_id },
          remediation: ["Pass the hypothesis's own investigation_id."],
          next: { tool: "get_hypothesis", arguments: { hypothesis_id: request.hypothesis_id } },
        },
      );
    }
  }

  /** Read-only: resolves the design, realizes the seeded order, validates every combination, issues a single-use token. */
  async plan(request: PlanExperimentRequest): Promise<ExperimentPlan> {
    const workspace = this.workspace.open();
    const policy = loadWorkspacePolicy(workspace.root);
    this.checkLinks(request);
    const { experiment, workload, workloadDefinitionId, experimentDefinitionId } = await this.resolveExperiment(request.experiment_name);
    const { factors, treatment } = effectiveFactors(request.experiment_name, experiment, Object.hasOwn(workload.parameters, "variant"));
    const trials = realizeValidDesign(experiment, workload, request.parameters, factors, treatment);
    // One real capture plan proves the adapter, executables and permissions before any trial runs.
    const probe = await this.captures.plan({
      workload_name: experiment.workload,
      adapter: request.adapter,
      parameters: { ...request.parameters, ...trials[0]!.factors },
      adapter_options: request.adapter_options ?? {},
      preflight_mode: "auto",
      capture_mode: "auto",
    });
    const warnings = [probe.warnings[0]!];
    const performanceMetric = defaultPerformanceMetric(probe.adapter, probe.adapter_options);
    if (experiment.primary_metric === "categorical_outcome") {
      warnings.push(
        `primary_metric is the default categorical_outcome; performance comparisons use ${performanceMetric} (lower is better) instead.`,
      );
    }
    const statistics = statisticsOf(experiment, experiment.random_seed, performanceMetric);
    const sensitivity = experiment.analysis === "performance" ? designSensitivity(experiment.blocks, statistics) : null;
    // The warnings speak of a verdict between two treatments; a size sweep is read by analyze_scaling instead.
    if (factors[treatment]!.length === 2) warnings.push(...(sensitivity?.warnings ?? []));
    const intent: ExperimentIntent = {
      workspace_id: workspace.id,
      experiment_name: request.experiment_name,
      experiment_definition_id: experimentDefinitionId,
      workload_name: experiment.workload,
      workload_definition_id: workloadDefinitionId,
      adapter: probe.adapter,
      adapter_options: probe.adapter_options,
      investigation_id: request.investigation_id ?? null,
      hypothesis_id: request.hypothesis_id ?? null,
      design: experiment.design,
      blocks: experiment.blocks,
      treatment_factor: treatment,
      treatments: factors[treatment]!.map(scalarText),
      factors,
      parameters: request.parameters,
      random_seed: statistics.random_seed,
      statistics,
      order_digest: digestOf(trials),
      analysis: experiment.analysis,
      oracle_strength: workload.oracle && workload.oracle.argv.length > 0 ? workload.oracle.strength : null,
      trials,
    };
    const planId = randomHex(32);
    const createdAt = new Date();
    const expiresAtMs = createdAt.getTime() + policy.limits.plan_ttl_seconds * 1000;
    this.plans.issue({ token: planId, intent, labels: { experiment_name: request.experiment_name }, createdAt, expiresAtMs });
    return {
      schema_version: 1,
      plan_id: planId,
      experiment_name: request.experiment_name,
      adapter_options: probe.adapter_options,
      ...protocolOf(intent),
      trial_count: trials.length,
      order: trials.slice(0, planOrderPreview),
      order_truncated: trials.length > planOrderPreview,
      order_summary: summarizeOrder(trials, intent.treatments),
      full_order: fullOrderLocation,
      detectable_change: sensitivity?.detectable_change ?? null,
      execution_policy: "trusted_local",
      warnings,
      created_at: createdAt.toISOString(),
      expires_at: new Date(expiresAtMs).toISOString(),
      next_tool: "run_experiment",
    };
  }

  /** Consumes the plan, rechecks what it is bound to, then runs it (see ExperimentExecution). */
  async run(planId: string, options: { signal?: AbortSignal; progress?: ProgressReporter } = {}): Promise<ExperimentReceipt> {
    this.workspace.open();
    const outcome = this.plans.consume(planId, Date.now());
    if (!("intent" in outcome)) {
      const spent = outcome.spent;
      throw planRefused("experiment", `The experiment plan is missing, expired, or already consumed: it ${outcome.refused}.`, {
        details: { reason: outcome.refused, ...(spent ? { experiment_name: spent.experiment_name } : {}) },
        remediation: [
          "Call plan_experiment again and run the new plan_id. A consumed plan is never retryable: inspect get_experiment for its trials.",
        ],
        // The same experiment planned again with the same adapter, parameters and links; an unknown id says nothing.
        next: spent
          ? {
              tool: "plan_experiment",
              arguments: {
                experiment_name: spent.experiment_name,
                adapter: spent.adapter,
                adapter_options: spent.adapter_options,
                parameters: spent.parameters,
                ...(spent.investigation_id ? { investigation_id: spent.investigation_id } : {}),
                ...(spent.hypothesis_id ? { hypothesis_id: spent.hypothesis_id } : {}),
              },
            }
          : { tool: "list_declared_workflows", arguments: { kind: "experiment" } },
      });
    }
    const intent = outcome.intent;
    // Trials run for as long as they run: the heartbeat keeps a client's request timeout from firing meanwhile.
    const heartbeat = heartbeatProgress(options.progress, { intervalMs: this.heartbeatIntervalMs });
    try {
      await bestEffortProgress(heartbeat.report, intent.trials.length + 4)(0, "planning: experiment plan consumed");
      return await this.runConsumed(intent, { ...options, progress: heartbeat.report });
    } finally {
      heartbeat.stop();
    }
  }

  private async runConsumed(
    intent: ExperimentIntent,
    options: { signal?: AbortSignal; progress: ProgressReporter },
  ): Promise<ExperimentReceipt> {
    const workspace = this.workspace.open();
    const { experiment, workload, workloadDefinitionId, experimentDefinitionId } = await this.resolveExperiment(intent.experiment_name);
    const stale: string[] = [];
    if (experimentDefinitionId !== intent.experiment_definition_id) stale.push("the experiment definition changed");
    if (workloadDefinitionId !== intent.workload_definition_id) stale.push("the workload definition changed");
    if (intent.workspace_id !== workspace.id) stale.push("the workspace changed");
    if (stale.length > 0) {
      throw planRefused("experiment", `The experiment plan is stale: ${stale.join("; ")}. Nothing was run.`, {
        details: { reasons: stale },
        remediation: ["Call plan_experiment again."],
        replanArguments: { experiment_name: intent.experiment_name, adapter: intent.adapter, parameters: intent.parameters },
      });
    }
    return this.execution.execute(intent, experiment, workload, options);
  }

  getExperiment(experimentId: string): Experiment {
    const found = this.experiments.find(experimentId);
    if (!found) throw notFound("experiment", experimentId, { remediation: ["Use the experiment_id returned by run_experiment."] });
    return found;
  }

  listTrials(request: { experiment_id: string; limit: number; cursor: string | null; outcome?: TrialOutcome | null }): TrialCollection {
    const workspace = this.workspace.open();
    this.getExperiment(request.experiment_id);
    const limit = Math.min(request.limit, maximumTrialPage);
    const scope = digestOf({
      query: "list_experiment_trials",
      experiment_id: request.experiment_id,
      outcome: request.outcome ?? null,
      limit,
    });
    const binding = { secret: workspace.cursorSecret(), scope, snapshot: request.experiment_id };
    const after = resumeAfter<number>(binding, request.cursor) ?? 0;
    const { total, trials } = this.experiments.trialPage({
      experimentId: request.experiment_id,
      outcome: request.outcome ?? null,
      afterOrdinal: after,
      limit,
    });
    const { page, fields } = keysetPage(binding, trials, total, limit, (last) => last.ordinal);
    return { schema_version: 1, experiment_id: request.experiment_id, trials: page, ...fields };
  }

  getTrial(trialId: string, experimentId: string | null = null): Trial {
    const trial = this.experiments.findTrial(trialId);
    if (!trial || (experimentId !== null && trial.experiment_id !== experimentId)) {
      throw notFound("trial", trialId, {
        message: `No trial ${trialId}${experimentId ? ` in experiment ${experimentId}` : ""} exists.`,
        details: { experiment_id: experimentId },
        remediation: ["Call list_experiment_trials with the experiment_id to see its trials."],
        list: experimentId ? { tool: "list_experiment_trials", arguments: { experiment_id: experimentId, limit: 100 } } : null,
      });
    }
    return trial;
  }
}
