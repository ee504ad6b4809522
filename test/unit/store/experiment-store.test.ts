import { afterEach, expect, test } from "bun:test";
import { type Experiment, ExperimentStore, protocolOf, type Trial } from "../../../src/store/experiment-store.ts";
import type { StateDatabase } from "../../../src/store/sqlite.ts";
import { freshState } from "./state.ts";

let state: StateDatabase | undefined;
afterEach(() => state?.close());

const protocol = {
  experiment_definition_id: "sha256:def",
  workload_name: "bench",
  workload_definition_id: "sha256:work",
  adapter: "command",
  investigation_id: null,
  hypothesis_id: null,
  design: "randomized_complete_blocks",
  blocks: 2,
  treatment_factor: "size",
  treatments: ["1", "2"],
  factors: { size: [1, 2] },
  parameters: {},
  random_seed: 7,
  statistics: {
    primary_metric: "runtime.wall_time_ns",
    polarity: "lower_is_better" as const,
    practical_threshold: 0.05,
    confidence_level: 0.95,
    estimand: "median_ratio",
    random_seed: 7,
  },
  order_digest: "sha256:order",
};

function experiment(id: string): Experiment {
  return {
    schema_version: 1,
    experiment_id: id,
    name: "sweep",
    definition: { workload: "bench" } as Experiment["definition"],
    ...protocol,
    planned_trials: 4,
    status: "running",
    counts: {
      attempted: 0,
      unattempted: 4,
      succeeded: 0,
      failed: 0,
      timed_out: 0,
      cancelled: 0,
      invalid: 0,
      unsupported: 0,
      infrastructure_failed: 0,
    },
    run_sets: [],
    comparison_id: null,
    first_failure_trial_id: null,
    limitations: [],
    created_at: new Date().toISOString(),
    finished_at: null,
    resource_uri: `flameox://experiments/${id}`,
    trial_collection_resource_uri: `flameox://experiments/${id}/trials`,
  };
}

function trial(experimentId: string, ordinal: number): Trial {
  return {
    schema_version: 1,
    ordinal,
    block_id: `b${Math.ceil(ordinal / 2)}`,
    order_in_block: ((ordinal - 1) % 2) + 1,
    treatment: String(((ordinal - 1) % 2) + 1),
    factors: { size: ((ordinal - 1) % 2) + 1 },
    warmup: false,
    trial_id: `${experimentId}.t${ordinal}`,
    experiment_id: experimentId,
    parameters: { size: ((ordinal - 1) % 2) + 1 },
    run_id: null,
    outcome: "unattempted",
    failure_class: null,
    failure_message: null,
    execution_status: null,
    validation_status: null,
    oracle: null,
    started_at: null,
    finished_at: null,
    resource_uri: "",
  };
}

test("the protocol and every trial are published together, then trials and the record are revised in place", () => {
  const fresh = freshState("experiments");
  state = fresh.state;
  const store = new ExperimentStore(fresh.source);
  const trials = [1, 2, 3, 4].map((ordinal) => trial("e-1", ordinal));
  store.insert(experiment("e-1"), trials);
  expect(store.find("e-1")?.planned_trials).toBe(4);
  expect(store.find("missing")).toBeNull();
  expect(store.trialsOf("e-1").map((entry) => entry.ordinal)).toEqual([1, 2, 3, 4]);

  trials[1]!.run_id = "run-2";
  trials[1]!.outcome = "succeeded";
  store.saveTrial(trials[1]!);
  expect(store.findTrial("e-1.t2")?.outcome).toBe("succeeded");
  expect(store.placementOfRun("run-2")).toEqual({
    trial_id: "e-1.t2",
    experiment_id: "e-1",
    block_id: "b1",
    treatment: "2",
    run_id: "run-2",
    outcome: "succeeded",
  });
  expect(store.placementOfTrial("e-1.t3")?.run_id).toBeNull();

  const record = store.find("e-1")!;
  record.status = "completed";
  store.saveExperiment(record);
  expect(store.find("e-1")?.status).toBe("completed");
  expect(protocolOf(record)).toEqual(protocol);
});

test("trial pages follow the realized order after a keyset ordinal, with the filtered total", () => {
  const fresh = freshState("trial-pages");
  state = fresh.state;
  const store = new ExperimentStore(fresh.source);
  const trials = [1, 2, 3, 4, 5].map((ordinal) => trial("e-2", ordinal));
  trials[4]!.outcome = "failed";
  store.insert(experiment("e-2"), trials);
  const first = store.trialPage({ experimentId: "e-2", outcome: null, afterOrdinal: 0, limit: 2 });
  expect(first.total).toBe(5);
  expect(first.trials.map((entry) => entry.ordinal)).toEqual([1, 2, 3]);
  const next = store.trialPage({ experimentId: "e-2", outcome: null, afterOrdinal: 2, limit: 2 });
  expect(next.trials.map((entry) => entry.ordinal)).toEqual([3, 4, 5]);
  const failed = store.trialPage({ experimentId: "e-2", outcome: "failed", afterOrdinal: 0, limit: 10 });
  expect([failed.total, failed.trials.map((entry) => entry.trial_id)]).toEqual([1, ["e-2.t5"]]);
});
