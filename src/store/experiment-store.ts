import type { ExperimentConfig, Scalar } from "../config/project-config-schema.ts";
import type { ExperimentStatistics, OracleReceipt, PlannedTrial, TrialOutcome } from "../domain/experiment.ts";

import type { ValidationStatus } from "./run-store.ts";
import type { StateSource } from "./sqlite.ts";

/**
 * What an experiment is, independent of its lifecycle: the realized design for one workload and
 * adapter. The plan, the bound intent and the stored record each carry exactly these fields.
 */
export type ExperimentProtocol = {
  experiment_definition_id: string;
  workload_name: string;
  workload_definition_id: string;
  adapter: string;
  investigation_id: string | null;
  hypothesis_id: string | null;
  design: string;
  blocks: number;
  treatment_factor: string;
  treatments: string[];
  factors: Record<string, Scalar[]>;
  parameters: Record<string, Scalar>;
  random_seed: number;
  statistics: ExperimentStatistics;
  order_digest: string;
};

/** The protocol fields of a plan, intent or record, so one can be built from another without listing them again. */
export function protocolOf(source: ExperimentProtocol): ExperimentProtocol {
  return {
    experiment_definition_id: source.experiment_definition_id,
    workload_name: source.workload_name,
    workload_definition_id: source.workload_definition_id,
    adapter: source.adapter,
    investigation_id: source.investigation_id,
    hypothesis_id: source.hypothesis_id,
    design: source.design,
    blocks: source.blocks,
    treatment_factor: source.treatment_factor,
    treatments: source.treatments,
    factors: source.factors,
    parameters: source.parameters,
    random_seed: source.random_seed,
    statistics: source.statistics,
    order_digest: source.order_digest,
  };
}

export type Trial = PlannedTrial & {
  schema_version: 1;
  trial_id: string;
  experiment_id: string;
  parameters: Record<string, Scalar>;
  run_id: string | null;
  outcome: TrialOutcome;
  failure_class: string | null;
  failure_message: string | null;
  execution_status: string | null;
  validation_status: string | null;
  oracle: {
    strength: string;
    exit_code: number | null;
    validation_status: ValidationStatus;
    receipt: OracleReceipt | null;
    receipt_error: string | null;
  } | null;
  started_at: string | null;
  finished_at: string | null;
  resource_uri: string;
};

export type Experiment = {
  schema_version: 1;
  experiment_id: string;
  name: string;
  definition: ExperimentConfig;
} & ExperimentProtocol & {
    planned_trials: number;
    status: "running" | "completed" | "cancelled";
    counts: Record<TrialOutcome, number> & { attempted: number };
    run_sets: { treatment: string; run_set_id: string }[];
    comparison_id: string | null;
    first_failure_trial_id: string | null;
    limitations: string[];
    created_at: string;
    finished_at: string | null;
    resource_uri: string;
    trial_collection_resource_uri: string;
  };

/** Where a trial sits in its experiment: what a run set member inherits from it. */
export type TrialPlacement = {
  trial_id: string;
  experiment_id: string;
  block_id: string;
  treatment: string;
  run_id: string | null;
  outcome: string;
};

/** Experiments and their trials. The protocol and every trial are published before the first trial runs. */
export class ExperimentStore {
  constructor(private readonly state: StateSource) {}

  insert(experiment: Experiment, trials: Trial[]): void {
    const state = this.state();
    state.write(() => {
      state.database
        .query(
          "INSERT INTO experiments (experiment_id, name, investigation_id, hypothesis_id, status, created_at, record) VALUES (?, ?, ?, ?, ?, ?, ?)",
        )
        .run(
          experiment.experiment_id,
          experiment.name,
          experiment.investigation_id,
          experiment.hypothesis_id,
          experiment.status,
          experiment.created_at,
          JSON.stringify(experiment),
        );
      const insert = state.database.query(
        "INSERT INTO trials (trial_id, experiment_id, ordinal, block_id, treatment, run_id, outcome, record) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
      );
      for (const trial of trials)
        insert.run(
          trial.trial_id,
          experiment.experiment_id,
          trial.ordinal,
          trial.block_id,
          trial.treatment,
          trial.run_id,
          trial.outcome,
          JSON.stringify(trial),
        );
    });
  }

  saveExperiment(experiment: Experiment): void {
    const state = this.state();
    state.write(() => {
      state.database
        .query("UPDATE experiments SET status = ?, record = ? WHERE experiment_id = ?")
        .run(experiment.status, JSON.stringify(experiment), experiment.experiment_id);
    });
  }

  saveTrial(trial: Trial): void {
    const state = this.state();
    state.write(() => {
      state.database
        .query("UPDATE trials SET run_id = ?, outcome = ?, record = ? WHERE trial_id = ?")
        .run(trial.run_id, trial.outcome, JSON.stringify(trial), trial.trial_id);
    });
  }

  find(experimentId: string): Experiment | null {
    const row = this.state()
      .database.query<{ record: string }, [string]>("SELECT record FROM experiments WHERE experiment_id = ?")
      .get(experimentId);
    return row ? (JSON.parse(row.record) as Experiment) : null;
  }

  findTrial(trialId: string): Trial | null {
    const row = this.state().database.query<{ record: string }, [string]>("SELECT record FROM trials WHERE trial_id = ?").get(trialId);
    return row ? (JSON.parse(row.record) as Trial) : null;
  }

  /** Trials in realized order after `afterOrdinal`, at most `limit` (+1 to tell whether more follow), and the filtered total. */
  trialPage(request: { experimentId: string; outcome: TrialOutcome | null; afterOrdinal: number; limit: number }): {
    total: number;
    trials: Trial[];
  } {
    const database = this.state().database;
    const outcomeClause = request.outcome ? " AND outcome = ?" : "";
    const filterValues = request.outcome ? [request.outcome] : [];
    const total =
      database
        .query<{ count: number }, string[]>(`SELECT count(*) AS count FROM trials WHERE experiment_id = ?${outcomeClause}`)
        .get(request.experimentId, ...filterValues)?.count ?? 0;
    const rows = database
      .query<{ record: string }, (string | number)[]>(
        `SELECT record FROM trials WHERE experiment_id = ?${outcomeClause} AND ordinal > ? ORDER BY ordinal LIMIT ?`,
      )
      .all(request.experimentId, ...filterValues, request.afterOrdinal, request.limit + 1);
    return { total, trials: rows.map((row) => JSON.parse(row.record) as Trial) };
  }

  /** Every trial of an experiment in realized order; bounded by the design's max_trials. */
  trialsOf(experimentId: string): Trial[] {
    return this.state()
      .database.query<{ record: string }, [string]>("SELECT record FROM trials WHERE experiment_id = ? ORDER BY ordinal")
      .all(experimentId)
      .map((row) => JSON.parse(row.record) as Trial);
  }

  placementOfTrial(trialId: string): TrialPlacement | null {
    return this.state()
      .database.query<TrialPlacement, [string]>(
        "SELECT trial_id, experiment_id, block_id, treatment, run_id, outcome FROM trials WHERE trial_id = ?",
      )
      .get(trialId);
  }

  /** A run recorded by an experiment keeps its trial identity, so pairing by block works from run ids too. */
  placementOfRun(runId: string): TrialPlacement | null {
    return this.state()
      .database.query<TrialPlacement, [string]>(
        "SELECT trial_id, experiment_id, block_id, treatment, run_id, outcome FROM trials WHERE run_id = ?",
      )
      .get(runId);
  }
}
