import type { Database } from "bun:sqlite";
import { createHash, randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { canonicalJson, digestOf } from "../domain/canonical-json.ts";
import { decodeCursor, encodeCursor } from "../domain/cursor.ts";
import { notFound, planRefused, processCancelled, toFlameoxError, undeclared, workspaceInvalid } from "../domain/errors.ts";
import type { ExperimentConfig, Scalar, WorkloadConfig } from "../config/project-config-schema.ts";
import { resolveWorkloadInvocation, scalarText } from "../config/workload-template.ts";
import { runProcess } from "../exec/broker.ts";
import { createRandom, shuffleInPlace } from "../analysis/statistics/random.ts";
import { storeArtifactFile } from "../store/artifact-store.ts";
import { advanceCorpus, corpusHead } from "../store/corpus.ts";
import { readRun, reviseRun, type RunArtifactReference, type ValidationStatus } from "../store/run-store.ts";
import { registerArtifact } from "./artifact-registration.ts";
import { bestEffortProgress, type ProgressReporter } from "./progress.ts";
import { experimentResourceUri, trialCollectionResourceUri, trialResourceUri } from "../domain/resource-uris.ts";
import { loadWorkspacePolicy } from "../config/workspace-policy.ts";
import type { Services } from "./services.ts";

export const oracleReceiptVariable = "FLAMEOX_ORACLE_RECEIPT";
export const maximumReceiptBytes = 64 * 1024;
export const maximumTrialPage = 1000;

export type PlannedTrial = {
  ordinal: number;
  block_id: string;
  order_in_block: number;
  treatment: string;
  factors: Record<string, Scalar>;
};

export type ExperimentStatistics = {
  primary_metric: string;
  polarity: "lower_is_better" | "higher_is_better" | "neutral";
  practical_threshold: number;
  confidence_level: number;
  estimand: string;
  random_seed: number;
};

/** What run_experiment is bound to; a change between plan and run refuses the plan. */
type ExperimentIntent = {
  workspace_id: string;
  experiment_name: string;
  experiment_definition_id: string;
  workload_name: string;
  workload_definition_id: string;
  adapter: string;
  adapter_options: Record<string, unknown>;
  parameters: Record<string, Scalar>;
  investigation_id: string | null;
  hypothesis_id: string | null;
  design: ExperimentConfig["design"];
  blocks: number;
  treatment_factor: string;
  treatments: string[];
  factors: Record<string, Scalar[]>;
  analysis: ExperimentConfig["analysis"];
  statistics: ExperimentStatistics;
  oracle_strength: string | null;
  trials: PlannedTrial[];
  order_digest: string;
};

export type ExperimentPlan = {
  schema_version: 1;
  plan_id: string;
  experiment_name: string;
  experiment_definition_id: string;
  workload_name: string;
  workload_definition_id: string;
  adapter: string;
  adapter_options: Record<string, unknown>;
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
  trial_count: number;
  /** The realized randomized-complete-block order (first 1000 trials; order_digest covers all). */
  order: PlannedTrial[];
  order_truncated: boolean;
  order_digest: string;
  execution_policy: "trusted_local";
  warnings: string[];
  created_at: string;
  expires_at: string;
  next_tool: "run_experiment";
};

export type TrialOutcome =
  | "unattempted"
  | "succeeded"
  | "failed"
  | "timed_out"
  | "cancelled"
  | "invalid"
  | "unsupported"
  | "infrastructure_failed";

export type OracleReceipt = {
  status: "pass" | "fail" | "inconclusive" | "unsupported";
  case_id: string;
  reason: string | null;
  expected: unknown;
  observed: unknown;
  raw_artifact_id: string | null;
};

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
  experiment_definition_id: string;
  definition: ExperimentConfig;
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
  comparison: { decision: string; validity: string; estimate: number | null } | null;
  first_failure_trial_id: string | null;
  first_failure_resource_uri: string | null;
  corpus_commit_id: string;
  limitations: string[];
  resource_uri: string;
  trial_collection_resource_uri: string;
  next_tool: string;
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

const defaultInherited = ["PATH", "HOME", "LANG", "LC_*", "TZ", "TMPDIR", "TERM", "USER", "LOGNAME"];

function tokenHash(planId: string): string {
  return createHash("sha256").update(`flameox-experiment-plan\u0000${planId}`).digest("hex");
}

const scalarKey = (value: Scalar) => `${typeof value}:${String(value)}`;

/** The experiment's factors with legacy forms projected onto them. */
function effectiveFactors(
  name: string,
  experiment: ExperimentConfig,
  workload: WorkloadConfig,
): { factors: Record<string, Scalar[]>; treatment: string } {
  if (experiment.factors) return { factors: experiment.factors, treatment: experiment.treatment_factor! };
  if (experiment.scaling_parameter && experiment.scaling_values)
    return { factors: { [experiment.scaling_parameter]: experiment.scaling_values }, treatment: experiment.scaling_parameter };
  if (experiment.variants && Object.hasOwn(workload.parameters, "variant"))
    return { factors: { variant: experiment.variants }, treatment: "variant" };
  throw workspaceInvalid(`Experiment '${name}' declares legacy variants, but its workload has no 'variant' parameter to carry them.`, {
    details: { next_tool: "get_declared_workflow", experiment: name },
    remediation: ["Declare factors and a treatment_factor over workload parameters in [experiments.<name>]."],
    next: { tool: "get_declared_workflow", arguments: { kind: "experiment", name } },
  });
}

function combinations(experiment: ExperimentConfig, factors: Record<string, Scalar[]>): Record<string, Scalar>[] {
  let all: Record<string, Scalar>[];
  if (experiment.combination_policy === "explicit" && experiment.combinations) {
    all = experiment.combinations.map((combination) => ({ ...combination }));
  } else {
    all = [{}];
    for (const [factor, levels] of Object.entries(factors))
      all = all.flatMap((partial) => levels.map((level) => ({ ...partial, [factor]: level })));
  }
  const rules = experiment.exclude ?? [];
  return all.filter(
    (combination) =>
      !rules.some((rule) =>
        Object.entries(rule).every(
          ([factor, level]) => combination[factor] !== undefined && scalarKey(combination[factor]!) === scalarKey(level),
        ),
      ),
  );
}

/**
 * Randomized complete blocks: every block holds each treatment once at one coordinate (the values of
 * the other factors); the order inside a block is shuffled by one seeded generator for the whole plan,
 * so the same seed always gives the same realized order. fixed_order keeps the declared order.
 */
export function realizeOrder(
  experiment: ExperimentConfig,
  factors: Record<string, Scalar[]>,
  treatmentFactor: string,
  seed: number,
): PlannedTrial[] {
  const combos = combinations(experiment, factors);
  const coordinates = new Map<string, Record<string, Scalar>[]>();
  for (const combo of combos) {
    const coordinate = canonicalJson(Object.fromEntries(Object.entries(combo).filter(([factor]) => factor !== treatmentFactor)));
    coordinates.set(coordinate, [...(coordinates.get(coordinate) ?? []), combo]);
  }
  const random = createRandom(seed);
  const trials: PlannedTrial[] = [];
  const coordinateList = [...coordinates.values()];
  for (let repetition = 1; repetition <= experiment.blocks; repetition += 1) {
    coordinateList.forEach((combosAtCoordinate, coordinateIndex) => {
      const blockId = coordinateList.length > 1 ? `c${coordinateIndex + 1}-b${repetition}` : `b${repetition}`;
      const order = [...combosAtCoordinate];
      if (experiment.design !== "fixed_order") shuffleInPlace(order, random);
      order.forEach((combo, position) => {
        trials.push({
          ordinal: trials.length + 1,
          block_id: blockId,
          order_in_block: position + 1,
          treatment: scalarText(combo[treatmentFactor]!),
          factors: combo,
        });
      });
    });
  }
  return trials;
}

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

/** Strict receipt parsing: bounded, one JSON object, a known status. */
export function parseOracleReceipt(bytes: Uint8Array): { receipt: Omit<OracleReceipt, "raw_artifact_id"> } | { error: string } {
  if (bytes.length > maximumReceiptBytes) return { error: `receipt is ${bytes.length} bytes (limit ${maximumReceiptBytes})` };
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
  } catch (error) {
    return { error: `receipt is not one UTF-8 JSON value: ${error instanceof Error ? error.message.slice(0, 120) : "parse error"}` };
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) return { error: "receipt must be a JSON object" };
  const record = value as Record<string, unknown>;
  const status = record.status;
  if (status !== "pass" && status !== "fail" && status !== "inconclusive" && status !== "unsupported")
    return { error: "receipt.status must be pass, fail, inconclusive or unsupported" };
  if (record.case_id !== undefined && (typeof record.case_id !== "string" || record.case_id.length === 0 || record.case_id.length > 200))
    return { error: "receipt.case_id must be a string of 1..200 characters" };
  if (record.reason !== undefined && record.reason !== null && (typeof record.reason !== "string" || record.reason.length > 100))
    return { error: "receipt.reason must be at most 100 characters" };
  try {
    canonicalJson(record.observed ?? null);
    canonicalJson(record.expected ?? null);
  } catch {
    return { error: "receipt.observed/expected must be plain JSON without NaN or Infinity" };
  }
  return {
    receipt: {
      status,
      case_id: (record.case_id as string | undefined) ?? "default",
      reason: (record.reason as string | null | undefined) ?? null,
      expected: record.expected ?? null,
      observed: record.observed ?? null,
    },
  };
}

export class ExperimentService {
  constructor(private readonly services: Services) {}

  private get database(): Database {
    return this.services.workspace().state.database;
  }

  private async resolveExperiment(name: string) {
    const { state, config } = await this.services.workloads.requireConfig();
    const experiment = config.experiments?.[name];
    if (!experiment) {
      throw undeclared("experiment", name, {
        declared: Object.keys(config.experiments ?? {}),
        remediation: ["Call list_declared_workflows(kind='experiment') to see the declared experiments."],
      });
    }
    const { workload, definitionId } = await this.services.workloads.requireWorkload(experiment.workload);
    return {
      experiment,
      workload,
      workloadDefinitionId: definitionId,
      experimentDefinitionId: digestOf({ kind: "experiment", name, experiment }),
      configurationId: state.configurationId,
    };
  }

  /** Read-only: resolves the design, realizes the seeded order, validates every combination, issues a single-use token. */
  async plan(request: {
    experiment_name: string;
    adapter: string;
    adapter_options?: Record<string, unknown>;
    parameters: Record<string, Scalar>;
    investigation_id?: string | null;
    hypothesis_id?: string | null;
  }): Promise<ExperimentPlan> {
    const workspace = this.services.workspace();
    const policy = loadWorkspacePolicy(workspace.root);
    if (request.investigation_id) this.services.investigations.getInvestigation(request.investigation_id);
    if (request.hypothesis_id) {
      const hypothesis = this.services.investigations.getHypothesis(request.hypothesis_id);
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
    const { experiment, workload, workloadDefinitionId, experimentDefinitionId } = await this.resolveExperiment(request.experiment_name);
    const { factors, treatment } = effectiveFactors(request.experiment_name, experiment, workload);
    const touched = Object.keys(request.parameters).filter((name) => Object.hasOwn(factors, name));
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
    const seed = experiment.random_seed;
    const trials = realizeOrder(experiment, factors, treatment, seed);
    if (trials.length === 0) {
      throw planRefused("experiment", "The experiment's design has no trials (every combination is excluded).", {
        remediation: ["Loosen the exclude rules in flameox.toml."],
      });
    }
    if (trials.length > experiment.max_trials) {
      throw planRefused("experiment", `The design has ${trials.length} trials, above max_trials = ${experiment.max_trials}.`, {
        details: { trials: trials.length, max_trials: experiment.max_trials },
        remediation: ["Lower blocks or factor levels, or raise max_trials."],
      });
    }
    const seen = new Set<string>();
    for (const trial of trials) {
      const key = canonicalJson(trial.factors);
      if (seen.has(key)) continue;
      seen.add(key);
      resolveWorkloadInvocation(workload, { ...request.parameters, ...trial.factors });
    }
    // One real capture plan proves the adapter, executables and permissions before any trial runs.
    const probe = await this.services.captures.plan({
      workload_name: experiment.workload,
      adapter: request.adapter,
      parameters: { ...request.parameters, ...trials[0]!.factors },
      adapter_options: request.adapter_options ?? {},
      preflight_mode: "auto",
      capture_mode: "auto",
    });
    const primary = experiment.primary_metric === "categorical_outcome" ? "runtime.wall_time_ns" : experiment.primary_metric;
    const warnings = [probe.warnings[0]!];
    if (experiment.primary_metric === "categorical_outcome") {
      warnings.push(
        "primary_metric is the default categorical_outcome; performance comparisons use runtime.wall_time_ns (lower is better) instead.",
      );
    }
    const statistics: ExperimentStatistics = {
      primary_metric: primary,
      polarity:
        experiment.primary_metric === "categorical_outcome" && experiment.polarity === "neutral" ? "lower_is_better" : experiment.polarity,
      practical_threshold: experiment.practical_threshold,
      confidence_level: experiment.confidence_level,
      estimand: experiment.estimand,
      random_seed: seed,
    };
    const intent: ExperimentIntent = {
      workspace_id: workspace.id,
      experiment_name: request.experiment_name,
      experiment_definition_id: experimentDefinitionId,
      workload_name: experiment.workload,
      workload_definition_id: workloadDefinitionId,
      adapter: probe.adapter,
      adapter_options: probe.adapter_options,
      parameters: request.parameters,
      investigation_id: request.investigation_id ?? null,
      hypothesis_id: request.hypothesis_id ?? null,
      design: experiment.design,
      blocks: experiment.blocks,
      treatment_factor: treatment,
      treatments: factors[treatment]!.map(scalarText),
      factors,
      analysis: experiment.analysis,
      statistics,
      oracle_strength: workload.oracle && workload.oracle.argv.length > 0 ? workload.oracle.strength : null,
      trials,
      order_digest: digestOf(trials),
    };
    const planId = randomBytes(32).toString("hex");
    const createdAt = new Date();
    const expiresAtMs = createdAt.getTime() + policy.limits.plan_ttl_seconds * 1000;
    workspace.state.write(() => {
      this.database
        .query(
          "INSERT INTO experiment_plans (token_hash, plan_id, experiment_name, bound_intent, created_at, expires_at_ms) VALUES (?, ?, ?, ?, ?, ?)",
        )
        .run(
          tokenHash(planId),
          `sha256:${createHash("sha256").update(planId).digest("hex")}`,
          request.experiment_name,
          canonicalJson(intent),
          createdAt.toISOString(),
          expiresAtMs,
        );
    });
    return {
      schema_version: 1,
      plan_id: planId,
      experiment_name: request.experiment_name,
      experiment_definition_id: experimentDefinitionId,
      workload_name: experiment.workload,
      workload_definition_id: workloadDefinitionId,
      adapter: probe.adapter,
      adapter_options: probe.adapter_options,
      investigation_id: intent.investigation_id,
      hypothesis_id: intent.hypothesis_id,
      design: experiment.design,
      blocks: experiment.blocks,
      treatment_factor: treatment,
      treatments: intent.treatments,
      factors,
      parameters: request.parameters,
      random_seed: seed,
      statistics,
      trial_count: trials.length,
      order: trials.slice(0, maximumTrialPage),
      order_truncated: trials.length > maximumTrialPage,
      order_digest: intent.order_digest,
      execution_policy: "trusted_local",
      warnings,
      created_at: createdAt.toISOString(),
      expires_at: new Date(expiresAtMs).toISOString(),
      next_tool: "run_experiment",
    };
  }

  private consume(planId: string): ExperimentIntent {
    const workspace = this.services.workspace();
    const hash = tokenHash(planId);
    const now = Date.now();
    return workspace.state.write(() => {
      const row = this.database
        .query<{ bound_intent: string; expires_at_ms: number; consumed_at: string | null }, [string]>(
          "SELECT bound_intent, expires_at_ms, consumed_at FROM experiment_plans WHERE token_hash = ?",
        )
        .get(hash);
      const refuse = (reason: string) =>
        planRefused("experiment", `The experiment plan is missing, expired, or already consumed: it ${reason}.`, {
          details: { reason },
          remediation: [
            "Call plan_experiment again and run the new plan_id. A consumed plan is never retryable: inspect get_experiment for its trials.",
          ],
        });
      if (!row) throw refuse("does not exist");
      if (row.consumed_at) throw refuse("was already consumed");
      if (row.expires_at_ms <= now) throw refuse("has expired");
      this.database
        .query("UPDATE experiment_plans SET consumed_at = ? WHERE token_hash = ? AND consumed_at IS NULL")
        .run(new Date(now).toISOString(), hash);
      return JSON.parse(row.bound_intent) as ExperimentIntent;
    });
  }

  /**
   * Consumes the plan, publishes the protocol and every trial (as unattempted) before the first one
   * runs, then runs the trials in the realized order, each a capture plan + execute with the trial's
   * parameters. Failed, timed-out and unstartable trials are recorded and the experiment goes on;
   * only cancellation stops it (the remaining trials stay unattempted).
   */
  async run(planId: string, options: { signal?: AbortSignal; progress?: ProgressReporter } = {}): Promise<ExperimentReceipt> {
    const workspace = this.services.workspace();
    const intent = this.consume(planId);
    const total = intent.trials.length + 4;
    const report = bestEffortProgress(options.progress, total);
    await report(0, "Experiment plan consumed");
    const {
      experiment: definition,
      workload,
      workloadDefinitionId,
      experimentDefinitionId,
    } = await this.resolveExperiment(intent.experiment_name);
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
    await report(1, "Experiment plan and workload definition validated");
    const experimentId = crypto.randomUUID();
    const createdAt = new Date().toISOString();
    const experiment: Experiment = {
      schema_version: 1,
      experiment_id: experimentId,
      name: intent.experiment_name,
      experiment_definition_id: intent.experiment_definition_id,
      definition,
      workload_name: intent.workload_name,
      workload_definition_id: intent.workload_definition_id,
      adapter: intent.adapter,
      investigation_id: intent.investigation_id,
      hypothesis_id: intent.hypothesis_id,
      design: intent.design,
      blocks: intent.blocks,
      treatment_factor: intent.treatment_factor,
      treatments: intent.treatments,
      factors: intent.factors,
      parameters: intent.parameters,
      random_seed: intent.statistics.random_seed,
      statistics: intent.statistics,
      order_digest: intent.order_digest,
      planned_trials: intent.trials.length,
      status: "running",
      counts: { ...emptyCounts(), unattempted: intent.trials.length },
      run_sets: [],
      comparison_id: null,
      first_failure_trial_id: null,
      limitations: [],
      created_at: createdAt,
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
    workspace.state.write(() => {
      this.database
        .query(
          "INSERT INTO experiments (experiment_id, name, investigation_id, hypothesis_id, status, created_at, record) VALUES (?, ?, ?, ?, ?, ?, ?)",
        )
        .run(
          experimentId,
          experiment.name,
          experiment.investigation_id,
          experiment.hypothesis_id,
          experiment.status,
          createdAt,
          JSON.stringify(experiment),
        );
      const insert = this.database.query(
        "INSERT INTO trials (trial_id, experiment_id, ordinal, block_id, treatment, run_id, outcome, record) VALUES (?, ?, ?, ?, ?, NULL, 'unattempted', ?)",
      );
      for (const trial of trials)
        insert.run(trial.trial_id, experimentId, trial.ordinal, trial.block_id, trial.treatment, JSON.stringify(trial));
    });
    await report(2, "Experiment protocol published");

    let cancelled = false;
    for (const trial of trials) {
      if (options.signal?.aborted) {
        cancelled = true;
        break;
      }
      await this.runTrial(trial, intent, workload, options.signal);
      workspace.state.write(() => {
        this.database
          .query("UPDATE trials SET run_id = ?, outcome = ?, record = ? WHERE trial_id = ?")
          .run(trial.run_id, trial.outcome, JSON.stringify(trial), trial.trial_id);
      });
      await report(
        2 + trial.ordinal,
        `Trial ${trial.ordinal}/${trials.length} published (${trial.block_id}, ${intent.treatment_factor}=${trial.treatment})`,
      );
      if (trial.outcome === "cancelled") {
        cancelled = true;
        break;
      }
    }

    const counts = emptyCounts();
    for (const trial of trials) {
      counts[trial.outcome] += 1;
      if (trial.outcome !== "unattempted") counts.attempted += 1;
    }
    experiment.counts = counts;
    experiment.first_failure_trial_id =
      trials.find((trial) => !["succeeded", "unattempted", "unsupported"].includes(trial.outcome))?.trial_id ?? null;
    for (const treatment of intent.treatments) {
      const members = trials
        .filter((trial) => trial.treatment === treatment && trial.run_id !== null)
        .map((trial) => ({
          run_id: trial.run_id!,
          trial_id: trial.trial_id,
          included: trial.outcome === "succeeded",
          reason:
            trial.outcome === "succeeded"
              ? null
              : `trial outcome was ${trial.outcome}${trial.failure_class ? ` (${trial.failure_class})` : ""}`,
        }));
      if (members.length === 0) {
        experiment.limitations.push(
          `Treatment ${intent.treatment_factor}=${treatment} has no recorded run, so no run set was frozen for it.`,
        );
        continue;
      }
      const runSet = this.services.runSets.freezeMembers(members, {
        experiment_id: experimentId,
        treatment_factor: intent.treatment_factor,
        treatment,
      });
      experiment.run_sets.push({ treatment, run_set_id: runSet.run_set_id });
    }
    await report(intent.trials.length + 3, "Variants and frozen run sets published");
    let comparison: ExperimentReceipt["comparison"] = null;
    if (
      !cancelled &&
      intent.analysis === "performance" &&
      intent.treatments.length === 2 &&
      experiment.run_sets.length === 2 &&
      Object.keys(intent.factors).length === 1
    ) {
      try {
        const receipt = await this.services.comparisons.record({
          baseline: experiment.run_sets[0]!.run_set_id,
          candidate: experiment.run_sets[1]!.run_set_id,
        });
        experiment.comparison_id = receipt.ref_id;
        comparison = {
          decision: receipt.decision ?? "inconclusive",
          validity: receipt.validity ?? "invalid",
          estimate: receipt.estimate ?? null,
        };
      } catch (error) {
        experiment.limitations.push(`The automatic comparison could not be recorded: ${toFlameoxError(error).message}`);
      }
    } else if (intent.treatments.length !== 2 || Object.keys(intent.factors).length !== 1) {
      experiment.limitations.push(
        "No automatic comparison: it is recorded only for two treatments and no other factor; call compare_run_sets on the frozen run sets (or analyze_scaling for a size factor).",
      );
    }
    if (counts.attempted < trials.length && !cancelled)
      experiment.limitations.push(`${trials.length - counts.attempted} trial(s) were not attempted.`);
    experiment.status = cancelled ? "cancelled" : "completed";
    experiment.finished_at = new Date().toISOString();
    workspace.state.write(() => {
      this.database
        .query("UPDATE experiments SET status = ?, record = ? WHERE experiment_id = ?")
        .run(experiment.status, JSON.stringify(experiment), experimentId);
    });
    await report(intent.trials.length + 4, "Experiment comparison and result complete");
    if (cancelled) {
      throw processCancelled(
        `Experiment ${experimentId} was cancelled after ${counts.attempted} of ${trials.length} trials; the rest are recorded as unattempted.`,
        {
          details: { experiment_id: experimentId, attempted_trials: counts.attempted },
          remediation: ["Inspect get_experiment; plan the experiment again to collect a complete set."],
          next: { tool: "get_experiment", arguments: { experiment_id: experimentId } },
        },
      );
    }
    return {
      schema_version: 1,
      experiment_id: experimentId,
      status: experiment.status,
      planned_trials: trials.length,
      attempted_trials: counts.attempted,
      counts,
      run_set_ids: experiment.run_sets.map((entry) => entry.run_set_id),
      run_sets: experiment.run_sets,
      comparison_id: experiment.comparison_id,
      comparison,
      first_failure_trial_id: experiment.first_failure_trial_id,
      first_failure_resource_uri: experiment.first_failure_trial_id
        ? trialResourceUri(experimentId, experiment.first_failure_trial_id)
        : null,
      corpus_commit_id: corpusHead(this.database).commit_id,
      limitations: experiment.limitations,
      resource_uri: experiment.resource_uri,
      trial_collection_resource_uri: experiment.trial_collection_resource_uri,
      next_tool: experiment.comparison_id
        ? "get_evidence"
        : Object.keys(intent.factors).length === 1 && intent.treatments.length > 2
          ? "analyze_scaling"
          : "compare_run_sets",
    };
  }

  private async runTrial(trial: Trial, intent: ExperimentIntent, workload: WorkloadConfig, signal?: AbortSignal): Promise<void> {
    trial.started_at = new Date().toISOString();
    try {
      const plan = await this.services.captures.plan({
        workload_name: intent.workload_name,
        adapter: intent.adapter,
        parameters: trial.parameters,
        adapter_options: intent.adapter_options,
        preflight_mode: "passive",
        capture_mode: "auto",
      });
      trial.run_id = plan.run_id;
      const receipt = await this.services.captures.execute(plan.plan_id, { signal });
      trial.execution_status = receipt.execution_status;
      trial.validation_status = receipt.validation_status;
      if (receipt.execution_status === "succeeded" && intent.oracle_strength !== null && receipt.capture_status !== "failed") {
        await this.runOracle(trial, intent, workload, signal);
      }
    } catch (error) {
      const typed = toFlameoxError(error);
      const run = trial.run_id ? readRun(this.database, trial.run_id) : null;
      if (run && run.execution_status !== "planned" && run.execution_status !== "running") {
        trial.execution_status = run.execution_status;
        trial.validation_status = run.validation_status;
      } else if (typed.code !== "PROCESS_CANCELLED") {
        trial.run_id = run ? trial.run_id : null;
        trial.outcome = typed.code === "CAPABILITY_UNAVAILABLE" ? "unsupported" : "infrastructure_failed";
        trial.failure_class = typed.code.toLowerCase();
        trial.failure_message = typed.message.slice(0, 500);
        trial.finished_at = new Date().toISOString();
        return;
      }
      trial.failure_message = typed.message.slice(0, 500);
      if (typed.code === "PROCESS_CANCELLED") trial.execution_status = "cancelled";
    }
    trial.finished_at = new Date().toISOString();
    classify(trial);
  }

  /**
   * The oracle runs after a successful measured run, without the collector, under the same limits.
   * It may write a receipt to the private path in FLAMEOX_ORACLE_RECEIPT; the receipt is authoritative
   * (typed status, case, expected/observed), which is stronger than comparing output bytes. Without one,
   * exit 0 passes and anything else fails. A non-zero exit fails even when the receipt says pass.
   */
  private async runOracle(trial: Trial, intent: ExperimentIntent, workload: WorkloadConfig, signal?: AbortSignal): Promise<void> {
    const workspace = this.services.workspace();
    const policy = loadWorkspacePolicy(workspace.root);
    const invocation = resolveWorkloadInvocation(workload, trial.parameters);
    if (!invocation.oracleArgv || !trial.run_id) return;
    const folder = workspace.path("staging", `oracle-${trial.run_id}`);
    const privateFolder = join(folder, "private");
    mkdirSync(privateFolder, { recursive: true, mode: 0o700 });
    const receiptPath = join(privateFolder, "receipt.json");
    let exitCode: number | null = null;
    let validation: ValidationStatus = "failed";
    let receipt: OracleReceipt | null = null;
    let receiptError: string | null = null;
    const limitations: string[] = [];
    try {
      const result = await runProcess(
        {
          argv: invocation.oracleArgv,
          cwd: resolve(this.services.projectRoot, invocation.cwd),
          deadline: Date.now() + workload.timeout_seconds * 1000,
          stdoutPath: join(folder, "oracle-stdout.txt"),
          stderrPath: join(folder, "oracle-stderr.txt"),
          outputBudgetBytes: policy.limits.max_output_bytes,
          environment: invocation.environment,
          trustedEnvironment: { [oracleReceiptVariable]: receiptPath },
        },
        {
          signal,
          gracePeriodMs: policy.limits.cleanup_grace_seconds * 1000,
          inheritEnvironment: [...defaultInherited, ...policy.environment.allowlist_additions],
        },
      );
      exitCode = result.timed_out ? null : result.exit_code;
      const stored: { path: string; role: string; name: string; mediaType: string }[] = [];
      if (existsSync(join(folder, "oracle-stdout.txt")))
        stored.push({
          path: join(folder, "oracle-stdout.txt"),
          role: `validation_${intent.oracle_strength}`,
          name: "oracle-stdout.txt",
          mediaType: "text/plain",
        });
      if (existsSync(join(folder, "oracle-stderr.txt")) && statSync(join(folder, "oracle-stderr.txt")).size > 0)
        stored.push({
          path: join(folder, "oracle-stderr.txt"),
          role: "validation_stderr",
          name: "oracle-stderr.txt",
          mediaType: "text/plain",
        });
      let receiptArtifactId: string | null = null;
      if (existsSync(receiptPath)) {
        const parsed = parseOracleReceipt(readFileSync(receiptPath));
        stored.push({ path: receiptPath, role: "validation_receipt", name: "oracle-receipt.json", mediaType: "application/json" });
        if ("error" in parsed) receiptError = parsed.error;
        else receipt = { ...parsed.receipt, raw_artifact_id: null };
      }
      if (result.timed_out) {
        validation = "failed";
        limitations.push("The oracle timed out.");
      } else if (result.exit_code !== 0) {
        validation = "failed";
        if (receipt?.status === "pass")
          limitations.push("The oracle exited non-zero although its receipt says pass; the exit status wins.");
      } else if (receiptError) {
        validation = "inconclusive";
      } else if (receipt) {
        validation = receipt.status === "pass" ? "passed" : receipt.status === "fail" ? "failed" : receipt.status;
      } else {
        validation = "passed";
      }
      const artifacts = stored.map((entry) => ({
        entry,
        artifact: storeArtifactFile(workspace, entry.path, { maxBytes: policy.limits.max_artifact_bytes }),
      }));
      receiptArtifactId = artifacts.find((item) => item.entry.role === "validation_receipt")?.artifact.artifact_id ?? null;
      if (receipt) receipt.raw_artifact_id = receiptArtifactId;
      workspace.state.write(() => {
        const database = this.database;
        const references: RunArtifactReference[] = artifacts.map(({ entry, artifact }) =>
          registerArtifact(database, {
            runId: trial.run_id!,
            artifact,
            displayName: entry.name,
            kind: "validation_output",
            role: entry.role,
            mediaType: entry.mediaType,
            sensitivity: "internal",
            producer: "oracle",
            producerVersion: null,
            format: entry.mediaType === "application/json" ? "json" : "text",
          }),
        );
        const current = readRun(database, trial.run_id!)!;
        reviseRun(
          database,
          trial.run_id!,
          current.revision,
          (manifest) => {
            const next = {
              ...manifest,
              validation_status: validation,
              artifacts: [...manifest.artifacts, ...references],
              limitations: [
                ...manifest.limitations,
                ...limitations,
                ...(receiptError ? [`The oracle receipt is invalid: ${receiptError}.`] : []),
              ],
            };
            (next as Record<string, unknown>).oracle = {
              strength: intent.oracle_strength,
              exit_code: exitCode,
              receipt,
              receipt_error: receiptError,
            };
            return next;
          },
          "oracle validation",
        );
        advanceCorpus(database, workspace.id, `oracle ${trial.run_id}`);
      });
    } catch (error) {
      validation = "inconclusive";
      receiptError = `the oracle could not run: ${toFlameoxError(error).message.slice(0, 200)}`;
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
    trial.validation_status = validation;
    trial.oracle = {
      strength: intent.oracle_strength!,
      exit_code: exitCode,
      validation_status: validation,
      receipt,
      receipt_error: receiptError,
    };
  }

  getExperiment(experimentId: string): Experiment {
    const row = this.database
      .query<{ record: string }, [string]>("SELECT record FROM experiments WHERE experiment_id = ?")
      .get(experimentId);
    if (!row) {
      throw notFound("experiment", experimentId, { remediation: ["Use the experiment_id returned by run_experiment."] });
    }
    return JSON.parse(row.record) as Experiment;
  }

  listTrials(request: { experiment_id: string; limit: number; cursor: string | null; outcome?: TrialOutcome | null }): TrialCollection {
    const workspace = this.services.workspace();
    this.getExperiment(request.experiment_id);
    const limit = Math.min(request.limit, maximumTrialPage);
    const scope = digestOf({
      query: "list_experiment_trials",
      experiment_id: request.experiment_id,
      outcome: request.outcome ?? null,
      limit,
    });
    const after = request.cursor
      ? (decodeCursor(workspace.cursorSecret(), request.cursor, { scope, snapshot: request.experiment_id }) as number)
      : 0;
    const outcomeClause = request.outcome ? " AND outcome = ?" : "";
    const filterValues = request.outcome ? [request.outcome] : [];
    const total =
      this.database
        .query<{ count: number }, string[]>(`SELECT count(*) AS count FROM trials WHERE experiment_id = ?${outcomeClause}`)
        .get(request.experiment_id, ...filterValues)?.count ?? 0;
    const rows = this.database
      .query<{ record: string; ordinal: number }, (string | number)[]>(
        `SELECT record, ordinal FROM trials WHERE experiment_id = ?${outcomeClause} AND ordinal > ? ORDER BY ordinal LIMIT ?`,
      )
      .all(request.experiment_id, ...filterValues, after, limit + 1);
    const truncated = rows.length > limit;
    const page = rows.slice(0, limit);
    return {
      schema_version: 1,
      experiment_id: request.experiment_id,
      trials: page.map((row) => JSON.parse(row.record) as Trial),
      total,
      returned: page.length,
      truncated,
      next_cursor: truncated
        ? encodeCursor(workspace.cursorSecret(), { scope, snapshot: request.experiment_id, position: page[page.length - 1]!.ordinal })
        : null,
    };
  }

  getTrial(trialId: string, experimentId: string | null = null): Trial {
    const row = this.database
      .query<{ record: string; experiment_id: string }, [string]>("SELECT record, experiment_id FROM trials WHERE trial_id = ?")
      .get(trialId);
    if (!row || (experimentId !== null && row.experiment_id !== experimentId)) {
      throw notFound("trial", trialId, {
        message: `No trial ${trialId}${experimentId ? ` in experiment ${experimentId}` : ""} exists.`,
        details: { experiment_id: experimentId },
        remediation: ["Call list_experiment_trials with the experiment_id to see its trials."],
        list: experimentId ? { tool: "list_experiment_trials", arguments: { experiment_id: experimentId, limit: 100 } } : null,
      });
    }
    return JSON.parse(row.record) as Trial;
  }
}

/** First match wins; see the trial outcome documentation in get_experiment. */
function classify(trial: Trial): void {
  const execution = trial.execution_status;
  const validation = trial.validation_status;
  const set = (outcome: TrialOutcome, failureClass: string | null) => {
    trial.outcome = outcome;
    trial.failure_class = failureClass;
  };
  if (execution === "timed_out") set("timed_out", "timeout");
  else if (execution === "cancelled") set("cancelled", "cancellation");
  else if (execution !== "succeeded") set("failed", "process_failure");
  else if (validation === "failed") set("failed", "oracle_failed");
  else if (trial.oracle?.receipt_error) set("invalid", "oracle_receipt_error");
  else if (validation === "inconclusive") set("invalid", "oracle_inconclusive");
  else if (validation === "unsupported") set("unsupported", "oracle_unsupported");
  else set("succeeded", null);
}
