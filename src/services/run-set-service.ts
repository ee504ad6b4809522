import { digestOf } from "../domain/canonical-json.ts";
import { invalidInput, notFound, runNotFound } from "../domain/errors.ts";
import { runResourceUri, runSetResourceUri } from "../domain/resource-uris.ts";
import { corpusHead } from "../store/corpus.ts";
import { readRun } from "../store/run-store.ts";
import type { RunSet, RunSetMember, RunSetMemberInput, RunSetStore } from "../store/run-set-store.ts";
import type { ExperimentStore, TrialPlacement } from "../store/experiment-store.ts";
import type { WorkspaceHandle } from "../store/workspace-handle.ts";

export type { RunSet, RunSetMember, RunSetMemberInput };

export type FreezeRunSetRequest = {
  run_ids?: string[] | null;
  members?: RunSetMemberInput[] | null;
  selection?: Record<string, unknown> | null;
};

export const maximumRunSetMembers = 10_000;

/**
 * Frozen cohorts. Membership is fixed at freeze time: the id is the digest of (corpus commit,
 * selection, members) and `membership_digest` the digest of the members alone, so two sets with
 * the same runs are recognisably the same cohort. Freezing the same set at the same commit returns
 * the existing record.
 */
export class RunSetService {
  constructor(
    private readonly workspace: WorkspaceHandle,
    private readonly runSets: RunSetStore,
    private readonly experiments: ExperimentStore,
  ) {}

  private get database() {
    return this.workspace.state().database;
  }

  freeze(request: FreezeRunSetRequest): RunSet {
    const hasRuns = request.run_ids != null;
    const hasMembers = request.members != null;
    if (hasRuns === hasMembers) {
      throw invalidInput(
        "Pass exactly one of run_ids or members.",
        [{ field: hasRuns ? "members" : "run_ids", message: "exactly one of run_ids or members", type: "value_error" }],
        { remediation: ["Pass run_ids for a plain set, or members to include/exclude runs with reasons."] },
      );
    }
    const inputs: RunSetMemberInput[] = hasRuns ? request.run_ids!.map((runId) => ({ run_id: runId })) : request.members!;
    if (inputs.length === 0 || inputs.length > maximumRunSetMembers) {
      throw invalidInput(
        `A run set has 1..${maximumRunSetMembers} members; got ${inputs.length}.`,
        [{ field: hasRuns ? "run_ids" : "members", message: "1..10000 members", type: "value_error" }],
        { remediation: ["Freeze at least one run (and at most 10000)."] },
      );
    }
    return this.freezeMembers(inputs, request.selection ?? {});
  }

  /** Also used by run_experiment to freeze one set per treatment. */
  freezeMembers(inputs: RunSetMemberInput[], selection: Record<string, unknown>): RunSet {
    const database = this.database;
    const scopedExperiment = typeof selection.experiment_id === "string" ? selection.experiment_id : null;
    const seen = new Set<string>();
    const members: RunSetMember[] = inputs.map((input, order) => {
      if (seen.has(input.run_id)) {
        throw invalidInput(
          `Run ${input.run_id} is listed twice.`,
          [{ field: "members", message: "duplicate run_id", type: "value_error" }],
          {
            remediation: ["List each run once."],
          },
        );
      }
      seen.add(input.run_id);
      if (!readRun(database, input.run_id)) throw runNotFound(input.run_id);
      const included = input.included ?? true;
      if (!included && !input.reason) {
        throw invalidInput(
          `Excluded member ${input.run_id} needs a reason.`,
          [{ field: "members.reason", message: "an excluded member needs a reason", type: "value_error" }],
          { remediation: ["Say why the run is excluded (e.g. 'warm-up', 'machine was busy')."] },
        );
      }
      let trial: TrialPlacement | null = null;
      if (input.trial_id) {
        trial = this.experiments.placementOfTrial(input.trial_id);
        if (!trial || trial.run_id !== input.run_id || (scopedExperiment !== null && trial.experiment_id !== scopedExperiment)) {
          throw invalidInput(
            `Trial ${input.trial_id} does not resolve to run ${input.run_id}${scopedExperiment ? ` in experiment ${scopedExperiment}` : ""}.`,
            [{ field: "members.trial_id", message: "trial must belong to the run", type: "value_error" }],
            { remediation: ["Take trial_id and run_id pairs from list_experiment_trials."] },
          );
        }
      } else {
        trial = this.experiments.placementOfRun(input.run_id);
        if (trial && scopedExperiment !== null && trial.experiment_id !== scopedExperiment) trial = null;
      }
      return {
        order,
        run_id: input.run_id,
        trial_id: trial?.trial_id ?? null,
        experiment_id: trial?.experiment_id ?? null,
        block_id: trial?.block_id ?? null,
        treatment: trial?.treatment ?? null,
        included,
        reason: input.reason ?? null,
      };
    });
    const experiments = [...new Set(members.map((member) => member.experiment_id))];
    const experimentId = experiments.length === 1 ? experiments[0]! : null;
    const head = corpusHead(database);
    const membershipDigest = digestOf(
      members.map(({ run_id, trial_id, included, reason, order }) => ({ run_id, trial_id, included, reason, order })),
    );
    const runSetId = digestOf({ corpus_commit_id: head.commit_id, selection, membership_digest: membershipDigest });
    const existing = this.find(runSetId);
    if (existing) return existing;
    const included = members.filter((member) => member.included).length;
    const record: RunSet = {
      schema_version: 1,
      run_set_id: runSetId,
      membership_digest: membershipDigest,
      corpus_commit_id: head.commit_id,
      created_at: new Date().toISOString(),
      selection,
      experiment_id: experimentId,
      members,
      counts: { members: members.length, included, excluded: members.length - included },
      resource_uri: runSetResourceUri(runSetId),
    };
    this.runSets.insertIfAbsent(record);
    return record;
  }

  find(runSetId: string): RunSet | null {
    return this.runSets.find(runSetId);
  }

  get(runSetId: string): RunSet {
    const found = this.find(runSetId);
    if (!found) {
      throw notFound("run_set", runSetId, {
        remediation: ["Freeze the runs with freeze_run_set (or pass a run id as a one-run set); list_runs shows the runs to choose from."],
        list: { tool: "list_runs", arguments: {} },
      });
    }
    return found;
  }

  /** A run set id, or a run id as the one-element shorthand (not persisted). */
  resolve(idOrRunId: string): { runSet: RunSet; kind: "run_set" | "run" } {
    const found = this.find(idOrRunId);
    if (found) return { runSet: found, kind: "run_set" };
    if (readRun(this.database, idOrRunId)) {
      const members = [{ run_id: idOrRunId }];
      const trial = this.experiments.placementOfRun(idOrRunId);
      const head = corpusHead(this.database);
      const membershipDigest = digestOf([{ run_id: idOrRunId, trial_id: trial?.trial_id ?? null, included: true, reason: null, order: 0 }]);
      return {
        kind: "run",
        runSet: {
          schema_version: 1,
          run_set_id: idOrRunId,
          membership_digest: membershipDigest,
          corpus_commit_id: head.commit_id,
          created_at: new Date().toISOString(),
          selection: { shorthand: "run" },
          experiment_id: trial?.experiment_id ?? null,
          members: members.map((member) => ({
            order: 0,
            run_id: member.run_id,
            trial_id: trial?.trial_id ?? null,
            experiment_id: trial?.experiment_id ?? null,
            block_id: trial?.block_id ?? null,
            treatment: trial?.treatment ?? null,
            included: true,
            reason: null,
          })),
          counts: { members: 1, included: 1, excluded: 0 },
          resource_uri: runResourceUri(idOrRunId),
        },
      };
    }
    return { runSet: this.get(idOrRunId), kind: "run_set" };
  }
}
