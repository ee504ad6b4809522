import * as v from "valibot";
import { execute, readOnly } from "../annotations.ts";
import { defineTool } from "../define-tool.ts";
import { evidenceResourceUri } from "../../domain/resource-uris.ts";

const identifier = v.pipe(v.string(), v.minLength(1), v.maxLength(200));
const scalar = v.union([v.pipe(v.string(), v.maxLength(4096)), v.number(), v.boolean()]);
const cursor = v.optional(v.nullable(v.pipe(v.string(), v.minLength(1), v.maxLength(4000))), null);
const outcome = v.picklist([
  "unattempted",
  "succeeded",
  "failed",
  "timed_out",
  "cancelled",
  "invalid",
  "unsupported",
  "infrastructure_failed",
]);

export const experimentTools = [
  defineTool({
    name: "plan_experiment",
    description:
      "Plan a declared experiment ([experiments.<name>] in flameox.toml: factors, treatment_factor, blocks, design, primary metric, polarity, practical threshold, confidence level, seed) with one capture adapter (adapter_options as for plan_capture, e.g. py-spy rate). Read-only: realizes the randomized-complete-block order from the seed (every block holds each treatment once, order shuffled within the block), validates every combination's parameters and the adapter once, and returns the realized order, the statistics it will use and a single-use plan_id that expires. parameters sets non-factor workload parameters ({} for none). investigation_id/hypothesis_id optionally link the experiment. Call run_experiment with the plan_id next.",
    input: v.strictObject({
      experiment_name: v.pipe(v.string(), v.minLength(1), v.maxLength(100)),
      adapter: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(100)), "command"),
      adapter_options: v.optional(v.record(v.pipe(v.string(), v.minLength(1), v.maxLength(100)), scalar), {}),
      parameters: v.optional(v.record(v.pipe(v.string(), v.minLength(1), v.maxLength(100)), scalar), {}),
      investigation_id: v.optional(v.nullable(identifier), null),
      hypothesis_id: v.optional(v.nullable(identifier), null),
    }),
    annotations: readOnly,
    async handler(input, { services }) {
      const result = await services.experiments.plan({
        experiment_name: input.experiment_name,
        adapter: input.adapter,
        adapter_options: input.adapter_options,
        parameters: input.parameters,
        investigation_id: input.investigation_id ?? null,
        hypothesis_id: input.hypothesis_id ?? null,
      });
      return {
        result,
        text: `Planned ${result.blocks} randomized block(s) for ${result.treatments.length} treatment(s): ${result.trial_count} trials; call run_experiment with plan_id next.`,
      };
    },
  }),
  defineTool({
    name: "run_experiment",
    description:
      "Run a plan from plan_experiment: the plan_id is consumed before anything runs, the protocol and every trial are published first, then each trial is one capture (plan + execute) of the workload with that trial's parameters, in the realized order, followed by the workload's oracle when it declares one (the oracle writes a typed receipt to the private path in FLAMEOX_ORACLE_RECEIPT). Every trial is recorded, failed and timed-out ones too, and they never stop the experiment; progress is reported per trial. One run set is frozen per treatment; with two treatments and no other factor a comparison is recorded at once. Returns the receipt with counts, run sets, comparison and the first failing trial.",
    input: v.strictObject({ plan_id: v.pipe(v.string(), v.minLength(1), v.maxLength(200)) }),
    annotations: execute,
    async handler(input, { services, signal, progress }) {
      const result = await services.experiments.run(input.plan_id, {
        signal,
        progress: (step, total, message) => progress(step, total, message),
      });
      const links = [
        {
          uri: result.resource_uri,
          name: `Experiment ${result.experiment_id}`,
          description: "The experiment's protocol, counts and run sets.",
        },
        { uri: result.trial_collection_resource_uri, name: "Trials", description: "The first page of this experiment's trials." },
      ];
      if (result.first_failure_resource_uri)
        links.push({
          uri: result.first_failure_resource_uri,
          name: `Trial ${result.first_failure_trial_id}`,
          description: "The first trial that did not succeed.",
        });
      if (result.comparison_id)
        links.push({
          uri: evidenceResourceUri("comparison", result.comparison_id),
          name: "Comparison",
          description: "The recorded comparison of the two treatments.",
        });
      const verdict = result.comparison ? ` Comparison: ${result.comparison.decision} (${result.comparison.validity}).` : "";
      return {
        result,
        text: `Experiment ${result.experiment_id} recorded ${result.attempted_trials} attempted trials (${result.counts.succeeded} succeeded).${verdict}`,
        links,
      };
    },
  }),
  defineTool({
    name: "get_experiment",
    description:
      "One experiment's immutable protocol (definition, seed, realized-order digest, treatments, statistics) with its status, trial counts by outcome, frozen run set per treatment, recorded comparison and first failing trial. Trials are listed with list_experiment_trials.",
    input: v.strictObject({ experiment_id: identifier }),
    annotations: readOnly,
    async handler(input, { services }) {
      const result = services.experiments.getExperiment(input.experiment_id);
      return {
        result,
        text: `Loaded experiment ${result.experiment_id} (${result.status}, ${result.counts.attempted}/${result.planned_trials} trials attempted).`,
        links: [{ uri: result.resource_uri, name: `Experiment ${result.experiment_id}`, description: "This experiment." }],
      };
    },
  }),
  defineTool({
    name: "list_experiment_trials",
    description:
      "An experiment's trials in realized order: block, position in block, treatment, parameters, run_id, outcome (succeeded, failed, timed_out, cancelled, invalid, unsupported, infrastructure_failed, unattempted), failure class and oracle receipt. Pages of at most 1000 with a next_cursor; outcome filters.",
    input: v.strictObject({
      experiment_id: identifier,
      limit: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(1000)), 1000),
      cursor,
      outcome: v.optional(v.nullable(outcome), null),
    }),
    annotations: readOnly,
    async handler(input, { services }) {
      const result = services.experiments.listTrials({
        experiment_id: input.experiment_id,
        limit: input.limit,
        cursor: input.cursor ?? null,
        outcome: input.outcome ?? null,
      });
      return { result, text: `Returned ${result.returned} of ${result.total} experiment trials.` };
    },
  }),
];
