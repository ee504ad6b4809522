/**
 * Requests of the experiment tools. A new experiment tool declares its request here, built from
 * fields.ts (ids, limits, cursors, scalar maps), and its CLI command parses the same schema.
 */
import * as v from "valibot";
import { trialOutcomes } from "../vocabulary.ts";
import { cursor, described, identifier, limit, name, optionalOrNull, scalarMap } from "./fields.ts";
import { pageLimits } from "./limits.ts";
import { planId } from "./captures.ts";

export const PlanExperimentRequest = v.strictObject({
  experiment_name: name("Declared experiment."),
  adapter: v.optional(name("Adapter for all trials."), "command"),
  adapter_options: v.optional(described(scalarMap, "Adapter options."), {}),
  parameters: v.optional(described(scalarMap, "Non-factor parameters."), {}),
  investigation_id: optionalOrNull(identifier("Investigation id.")),
  hypothesis_id: optionalOrNull(identifier("Hypothesis id.")),
});

export const RunExperimentRequest = v.strictObject({ plan_id: planId });

export const GetExperimentRequest = v.strictObject({ experiment_id: identifier("Experiment id.") });

export const ListTrialsRequest = v.strictObject({
  experiment_id: identifier("Experiment id."),
  limit: limit(pageLimits.trials),
  cursor,
  outcome: optionalOrNull(described(v.picklist(trialOutcomes), "Only this outcome.")),
});
