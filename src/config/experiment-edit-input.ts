/**
 * The typed input of configure_experiment: the keys of an `[experiments.<name>]` table, by their real names,
 * each with the description a model reads, plus the edit's name, operation and compare-and-swap digest.
 * Cross-field rules (treatment_factor among the factors, scaling values with their parameter, …) are the
 * table's own (experiment-config-schema.ts) and are checked when the definition is normalized.
 */
import * as v from "valibot";
import { digestPattern } from "../domain/canonical-json.ts";
import { FactorLevelsSchema, intBetween, PolaritySchema, PrimaryMetricSchema, SeedSchema } from "./experiment-config-schema.ts";
import type { ExperimentConfig } from "./project-config-schema.ts";
import { ConfigurationNameSchema } from "./schema-primitives.ts";

function described<Schema extends v.GenericSchema>(schema: Schema, description: string) {
  return v.pipe(schema, v.description<v.InferOutput<Schema>, string>(description));
}

const shortText = v.pipe(v.string(), v.minLength(1), v.maxLength(100));

/**
 * The input's fields that are keys of the table. What varies is always `factors`: treatments
 * ({"variant": ["base", "new"]}) or a size sweep ({"n": [100, 200, 400]}, read by analyze_scaling) alike, so
 * the legacy `variants` and `scaling_*` spellings, and the rare keys (combinations, exclude, design,
 * max_trials, the outcome analysis), stay in the file: the tool catalog a model reads has a byte budget.
 */
export const experimentTableKeys = [
  "workload",
  "factors",
  "treatment_factor",
  "blocks",
  "warmups",
  "primary_metric",
  "polarity",
  "practical_threshold",
  "confidence_level",
  "random_seed",
] as const;

export const ConfigureExperimentInputSchema = v.strictObject({
  name: described(ConfigurationNameSchema, "Experiment name."),
  operation: described(v.picklist(["create", "replace"]), "replace needs expected_configuration_id."),
  workload: described(shortText, "Declared workload."),
  factors: described(v.record(v.string(), FactorLevelsSchema), "Factor: levels; first is baseline."),
  treatment_factor: v.optional(described(shortText, "Compared factor, if several.")),
  blocks: v.optional(described(intBetween(1, 1000), "Default 10.")),
  warmups: v.optional(described(intBetween(0, 100), "Unmeasured rounds.")),
  primary_metric: v.optional(described(PrimaryMetricSchema, "e.g. runtime.cpu_user_ns.")),
  polarity: v.optional(described(PolaritySchema, "Default from the metric.")),
  practical_threshold: v.optional(described(v.pipe(v.number(), v.minValue(0), v.maxValue(0.99)), "Default 0.05.")),
  confidence_level: v.optional(described(v.pipe(v.number(), v.minValue(0.5), v.maxValue(0.9999)), "Default 0.99.")),
  random_seed: v.optional(described(SeedSchema, "Default 0.")),
  expected_configuration_id: v.optional(described(v.pipe(v.string(), v.regex(digestPattern)), "For replace.")),
});

export type ConfigureExperimentInput = v.InferOutput<typeof ConfigureExperimentInputSchema>;

/** The table a configure_experiment input declares: its given keys, nothing else. */
export function experimentDefinitionFromInput(input: ConfigureExperimentInput): Partial<ExperimentConfig> {
  const definition: Record<string, unknown> = {};
  for (const key of experimentTableKeys) if (input[key] !== undefined) definition[key] = input[key];
  return definition as Partial<ExperimentConfig>;
}
