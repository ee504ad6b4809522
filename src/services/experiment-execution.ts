import type { ExperimentConfig, WorkloadConfig } from "../config/project-config-schema.ts";
import { processCancelled, toFlameoxError } from "../domain/errors.ts";
import type { PlannedTrial } from "../domain/experiment.ts";
import { experimentResourceUri, trialCollectionResourceUri, trialResourceUri } from "../domain/resource-uris.ts";
import { corpusHead } from "../store/corpus.ts";
import { type Experiment, type ExperimentProtocol, type ExperimentStore, protocolOf, type Trial } from "../store/experiment-store.ts";
import type { WorkspaceHandle } from "../store/workspace-handle.ts";
import type { ComparisonService } from "./comparison-service.ts";
import { bestEffortProgress, type ProgressReporter } from "./progress.ts";
import { numericLevels } from "./scaling-service.ts";
import type { RunSetService } from "./run-set-service.ts";
import type { TrialProtocol, TrialRunner } from "./trial-runner.ts";

/** What run_experiment is bound to; a change between plan and run refuses the plan. */
export type ExperimentIntent = ExperimentProtocol &
  TrialProtocol & {
    workspace_id: string;
    experiment_name: string;
    analysis: ExperimentConfig["analysis"];
    trials: PlannedTrial[];
  };

export type ExperimentReceipt = {
  schema_version: 1;
  experiment_id: string;
  status: Experiment["status"];
  planned_trials: number;
  attempted_trials: number;
  counts: Experiment["counts"];
  run_set_ids: string[];
  run_sets: Experiment["run_sets"];
  comparison_id: string | null;
  comparison: {
    /** The measurement compared (the experiment's primary metric), so the ratio can be read. */
    metric: string;
    decision: string;
    validity: string;
    estimate: number | null;
    ci: { lower: number; upper: number; level: number } | null;
  } | null;
  first_failure_trial_id: string | null;
  first_failure_resource_uri: string | null;
  corpus_commit_id: string;
  limitations: string[];
  resource_uri: string;
  trial_collection_resource_uri: string;
  next_tool: string;
  /** next_tool's complete arguments for this experiment. */
  next_arguments: Record<string, unknown>;
};

function emptyCounts(): Experiment["counts"] {
  return {
    attempted: 0,
    unattempted: 0,
    succeeded: 0,
    failed: 0,
    timed_out: 0,
    cancelled: 0,
    invalid: 0,
    unsupported: 0,
    infrastructure_failed: 0,
  };
}

/** The record and its trials (all unattempted) as they are published before the first trial runs. */
function protocolRecords(intent: ExperimentIntent, definition: ExperimentConfig): { experiment: Experiment; trials: Trial[] } {
  const experimentId = crypto.randomUUID();
  const experiment: Experiment = {
    schema_version: 1,
    experiment_id: experimentId,
    name: intent.experiment_name,
    definition,
    ...protocolOf(intent),
    planned_trials: intent.trials.length,
    status: "running",
    counts: { ...emptyCounts(), unattempted: intent.trials.length },
    run_sets: [],
    comparison_id: null,
    first_failure_trial_id: null,
    limitations: [],
    created_at: new Date().toISOString(),
    finished_at: null,
    resource_uri: experimentResourceUri(experimentId),
    trial_collection_resource_uri: trialCollectionResourceUri(experimentId),
  };
  const trials: Trial[] = intent.trials.map((planned) => {
    const trialId = `${experimentId}.t${planned.ordinal}`;
    return {
      schema_version: 1,
      ...planned,
      trial_id: trialId,
      experiment_id: experimentId,
      parameters: { ...intent.parameters, ...planned.factors },
      run_id: null,
      outcome: "unattempted",
      failure_class: null,
      failure_message: null,
      execution_status: null,
      validation_status: null,
      oracle: null,
      started_at: null,
      finished_at: null,
      resource_uri: trialResourceUri(experimentId, trialId),
    };
  });
  return { experiment, trials };
}

/**
 * Runs a consumed experiment plan: publishes the protocol and every trial (as unattempted) before
 * the first one runs, then runs the trials in the realized order. Failed, timed-out and unstartable
 * trials are recorded and the experiment goes on; only cancellation stops it (the remaining trials
 * stay unattempted). Afterwards one run set is frozen per treatment and, for a two-treatment
 * performance experiment, the comparison is recorded.
 */
export class ExperimentExecution {
  constructor(
    private readonly workspace: WorkspaceHandle,
    private readonly experiments: ExperimentStore,
    private readonly trialRunner: TrialRunner,
    private readonly runSets: RunSetService,
    private readonly comparisons: ComparisonService,
  ) {}

  async execute(
    intent: ExperimentIntent,
    definition: ExperimentConfig,
    workload: WorkloadConfig,
    options: { signal?: AbortSignal; progress?: ProgressReporter },
  ): Promise<ExperimentReceipt> {
    const report = bestEffortProgress(options.progress, intent.trials.length + 4);
    await report(1, "planning: experiment plan and workload definition validated");
    const { experiment, trials } = protocolRecords(intent, definition);
    this.experiments.insert(experiment, trials);
    await report(2, "warming_up: experiment protocol published");
    let cancelled = false;
    for (const trial of trials) {
      if (options.signal?.aborted) {
        cancelled = true;
        break;
      }
      await report(
        1.5 + trial.ordinal,
        `capturing: trial ${trial.ordinal}/${trials.length} running (${intent.treatment_factor}=${trial.treatment})`,
      );
      await this.trialRunner.run(trial, intent, workload, options.signal);
      this.experiments.saveTrial(trial);
      await report(
        2 + trial.ordinal,
        `capturing: trial ${trial.ordinal}/${trials.length} published (${trial.block_id}, ${intent.treatment_factor}=${trial.treatment})`,
      );
      if (trial.outcome === "cancelled") {
        cancelled = true;
        break;
      }
    }
    this.tally(experiment, trials);
    this.freezeTreatments(experiment, intent, trials);
    await report(intent.trials.length + 3, "analyzing: variants and frozen run sets published");
    const comparison = await this.compareTreatments(experiment, intent, cancelled);
    if (experiment.counts.attempted < trials.length && !cancelled)
      experiment.limitations.push(`${trials.length - experiment.counts.attempted} trial(s) were not attempted.`);
    experiment.status = cancelled ? "cancelled" : "completed";
    experiment.finished_at = new Date().toISOString();
    this.experiments.saveExperiment(experiment);
    await report(intent.trials.length + 4, "completed: experiment comparison and result complete");
    if (cancelled) {
      throw processCancelled(
        `Experiment ${experiment.experiment_id} was cancelled after ${experiment.counts.attempted} of ${trials.length} trials; the rest are recorded as unattempted.`,
        {
          details: { experiment_id: experiment.experiment_id, attempted_trials: experiment.counts.attempted },
          remediation: ["Inspect get_experiment; plan the experiment again to collect a complete set."],
          next: { tool: "get_experiment", arguments: { experiment_id: experiment.experiment_id } },
        },
      );
    }
    return this.receipt(experiment, intent, comparison);
  }

  private tally(experiment: Experiment, trials: Trial[]): void {
    const tallied = emptyCounts();
    for (const trial of trials) {
      tallied[trial.outcome] += 1;
      if (trial.outcome !== "unattempted") tallied.attempted += 1;
    }
    experiment.counts = tallied;
    experiment.first_failure_trial_id =
      trials.find((trial) => !["succeeded", "unattempted", "unsupported"].includes(trial.outcome))?.trial_id ?? null;
  }

  /**
   * One frozen run set per treatment: succeeded trials included, the others excluded with their outcome as
   * reason; warm-up trials are members (their runs stay findable) but never included.
   */
  private freezeTreatments(experiment: Experiment, intent: ExperimentIntent, trials: Trial[]): void {
    for (const treatment of intent.treatments) {
      const members = trials
        .filter((trial) => trial.treatment === treatment && trial.run_id !== null)
        .map((trial) => ({
          run_id: trial.run_id!,
          trial_id: trial.trial_id,
          included: trial.outcome === "succeeded" && trial.warmup !== true,
          reason:
            trial.outcome === "succeeded"
              ? trial.warmup === true
                ? "warm-up trial"
                : null
              : `trial outcome was ${trial.outcome}${trial.failure_class ? ` (${trial.failure_class})` : ""}`,
        }));
      if (members.length === 0) {
        experiment.limitations.push(
          `Treatment ${intent.treatment_factor}=${treatment} has no recorded run, so no run set was frozen for it.`,
        );
        continue;
      }
      const runSet = this.runSets.freezeMembers(members, {
        experiment_id: experiment.experiment_id,
        treatment_factor: intent.treatment_factor,
        treatment,
      });
      experiment.run_sets.push({ treatment, run_set_id: runSet.run_set_id });
    }
  }

  /** The automatic comparison: only for a performance experiment of two treatments and no other factor. */
  private async compareTreatments(
    experiment: Experiment,
    intent: ExperimentIntent,
    cancelled: boolean,
  ): Promise<ExperimentReceipt["comparison"]> {
    const single = intent.treatments.length === 2 && Object.keys(intent.factors).length === 1;
    if (!single) {
      experiment.limitations.push(
        "No automatic comparison: it is recorded only for two treatments and no other factor; call compare_run_sets on the frozen run sets (or analyze_scaling for a size factor).",
      );
      return null;
    }
    if (cancelled || intent.analysis !== "performance" || experiment.run_sets.length !== 2) return null;
    try {
      const receipt = await this.comparisons.record({
        baseline: experiment.run_sets[0]!.run_set_id,
        candidate: experiment.run_sets[1]!.run_set_id,
      });
      experiment.comparison_id = receipt.ref_id;
      return {
        metric: intent.statistics.primary_metric,
        decision: receipt.decision ?? "inconclusive",
        validity: receipt.validity ?? "invalid",
        estimate: receipt.estimate ?? null,
        ci: receipt.ci ?? null,
      };
    } catch (error) {
      experiment.limitations.push(`The automatic comparison could not be recorded: ${toFlameoxError(error).message}`);
      return null;
    }
  }

  private receipt(experiment: Experiment, intent: ExperimentIntent, comparison: ExperimentReceipt["comparison"]): ExperimentReceipt {
    return {
      schema_version: 1,
      experiment_id: experiment.experiment_id,
      status: experiment.status,
      planned_trials: experiment.planned_trials,
      attempted_trials: experiment.counts.attempted,
      counts: experiment.counts,
      run_set_ids: experiment.run_sets.map((entry) => entry.run_set_id),
      run_sets: experiment.run_sets,
      comparison_id: experiment.comparison_id,
      comparison,
      first_failure_trial_id: experiment.first_failure_trial_id,
      first_failure_resource_uri: experiment.first_failure_trial_id
        ? trialResourceUri(experiment.experiment_id, experiment.first_failure_trial_id)
        : null,
      corpus_commit_id: corpusHead(this.workspace.state().database).commit_id,
      limitations: experiment.limitations,
      resource_uri: experiment.resource_uri,
      trial_collection_resource_uri: experiment.trial_collection_resource_uri,
      ...nextStep(experiment, intent),
    };
  }
}

/**
 * Where the receipt sends an agent, with complete arguments: the recorded comparison; the growth fit of a
 * sweep over more than two numeric sizes (whatever the other factors: each of their combinations is a
 * series); the first two treatments' run sets; or, with fewer than two run sets, the trials that say why.
 */
function nextStep(experiment: Experiment, intent: ExperimentIntent): Pick<ExperimentReceipt, "next_tool" | "next_arguments"> {
  if (experiment.comparison_id)
    return { next_tool: "get_evidence", next_arguments: { ref_type: "comparison", ref_id: experiment.comparison_id } };
  const levels = intent.factors[intent.treatment_factor];
  if (levels && levels.length > 2 && numericLevels(levels))
    return {
      next_tool: "analyze_scaling",
      next_arguments: { experiment_id: experiment.experiment_id, size_parameter: intent.treatment_factor },
    };
  const [baseline, candidate] = experiment.run_sets;
  if (baseline && candidate)
    return {
      next_tool: "compare_run_sets",
      next_arguments: { baseline_run_set_id: baseline.run_set_id, candidate_run_set_id: candidate.run_set_id },
    };
  return { next_tool: "list_experiment_trials", next_arguments: { experiment_id: experiment.experiment_id } };
}
