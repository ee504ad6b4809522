/**
 * configure_experiment's edit of `flameox.toml`: a definition normalized by the table's own schema, checked
 * against its workload's declared parameters, rendered as one canonical `[experiments.<name>]` table and
 * planned as a surgical, compare-and-swap edit (section-edit.ts). Nothing here runs anything.
 */
import * as v from "valibot";
import { digestOf } from "../domain/canonical-json.ts";
import { type FieldProblem, invalidArguments, undeclared } from "../domain/errors.ts";
import { ExperimentConfigSchema, experimentStatisticsDefaults } from "./experiment-config-schema.ts";
import type { ExperimentConfig, ProjectConfig } from "./project-config-schema.ts";
import { formatFieldPath, parseProjectConfigText, validateConfigurationName } from "./project-config.ts";
import { planSectionEdit, type SectionEditPlan, type SectionSpec } from "./section-edit.ts";
import { renderTomlKey, renderTomlValue } from "./toml-text.ts";
import { matchChoice } from "./workload-template.ts";

export type ExperimentEditRequest = {
  currentText: string | null;
  name: string;
  definition: Partial<ExperimentConfig>;
  operation: "create" | "replace";
  expectedConfigurationId?: string | null;
};

export type ExperimentEditPlan = SectionEditPlan & { experimentDefinitionId: string; definition: ExperimentConfig };

/** Every key of an [experiments.<name>] table, in the order they are written. */
const tableKeys = [
  "workload",
  "factors",
  "treatment_factor",
  "variants",
  "scaling_parameter",
  "scaling_values",
  "combination_policy",
  "combinations",
  "exclude",
  "design",
  "blocks",
  "warmups",
  "max_trials",
  "analysis",
  "outcome_goal",
  "minimum_attempts",
  "maximum_attempts",
  "primary_metric",
  "polarity",
  "estimand",
  "practical_threshold",
  "confidence_level",
  "random_seed",
] as const;

/** What the table's schema fills in when a key is absent; such keys are not written. */
const tableDefaults: Partial<Record<(typeof tableKeys)[number], unknown>> = {
  design: "randomized_complete_blocks",
  blocks: experimentStatisticsDefaults.blocks,
  warmups: 0,
  max_trials: 10000,
  analysis: "performance",
  combination_policy: "cartesian",
  primary_metric: "categorical_outcome",
  estimand: "ratio_candidate_over_baseline",
  practical_threshold: experimentStatisticsDefaults.practical_threshold,
  confidence_level: experimentStatisticsDefaults.confidence_level,
  random_seed: 0,
};

/** The definition's id, as plan_experiment and list_declared_workflows compute it. */
export function experimentDefinitionId(name: string, experiment: ExperimentConfig): string {
  return digestOf({ kind: "experiment", name, experiment });
}

/** Every default applied, so two spellings of one experiment compare equal; INVALID_ARGUMENTS names each bad field. */
export function normalizeExperimentDefinition(definition: Partial<ExperimentConfig>): ExperimentConfig {
  const result = v.safeParse(ExperimentConfigSchema, definition, { abortEarly: false });
  if (result.success) return result.output;
  throw invalidArguments(
    "configure_experiment",
    result.issues.slice(0, 32).map((issue) => {
      const path = (issue.path ?? []).map((item) => item.key as string | number);
      const missing = issue.type === "strict_object" && issue.expected !== "never";
      return {
        field: path.length > 0 ? formatFieldPath(path) : "(definition)",
        message: missing ? "required key is missing" : issue.message,
        type: issue.type,
      };
    }),
  );
}

/** One canonical table: the keys that differ from their defaults, in a fixed order. */
export function renderExperimentTable(name: string, definition: ExperimentConfig, eol = "\n"): string {
  const lines = [`[${["experiments", name].map(renderTomlKey).join(".")}]`];
  const record = definition as Record<string, unknown>;
  for (const key of tableKeys) {
    const value = record[key];
    if (value === undefined || (Object.hasOwn(tableDefaults, key) && tableDefaults[key] === value)) continue;
    lines.push(`${renderTomlKey(key)} = ${renderTomlValue(value)}`);
  }
  return lines.join(eol) + eol;
}

/** The factors a definition varies, as the design realizes them (experiment-design.ts effectiveFactors). */
function variedParameters(definition: ExperimentConfig): Record<string, unknown[]> {
  if (definition.factors) return definition.factors;
  if (definition.scaling_parameter && definition.scaling_values) return { [definition.scaling_parameter]: definition.scaling_values };
  return definition.variants ? { variant: definition.variants } : {};
}

/** The workload must be declared, and every level a declared choice of its parameter, before anything is written. */
function checkAgainstWorkload(config: ProjectConfig, definition: ExperimentConfig): void {
  const workload = config.workloads[definition.workload];
  if (workload === undefined) {
    throw undeclared("workload", definition.workload, {
      declared: Object.keys(config.workloads),
      remediation: [`Declare workload '${definition.workload}' with configure_workload first, or name a declared one.`],
    });
  }
  const problems: FieldProblem[] = [];
  const field = definition.factors ? "factors" : definition.scaling_parameter ? "scaling_values" : "variants";
  for (const [parameter, levels] of Object.entries(variedParameters(definition))) {
    const choices = workload.parameters[parameter];
    if (choices === undefined) {
      const declared = Object.keys(workload.parameters);
      problems.push({
        field: definition.factors ? `factors.${parameter}` : field,
        message: `workload '${definition.workload}' has no parameter '${parameter}' (declared: ${declared.length > 0 ? declared.join(", ") : "none"})`,
        type: "unknown_parameter",
      });
      continue;
    }
    const outside = levels.filter((level) => !matchChoice(choices, level).found);
    if (outside.length > 0) {
      problems.push({
        field: definition.factors ? `factors.${parameter}` : field,
        message: `${outside.map((level) => JSON.stringify(level)).join(", ")} not among the choices of '${parameter}': ${choices.map((choice) => JSON.stringify(choice)).join(", ")}`,
        type: "undeclared_choice",
      });
    }
  }
  if (problems.length > 0) throw invalidArguments("configure_experiment", problems);
}

const experimentSection: SectionSpec<ExperimentConfig> = {
  section: "experiments",
  label: "Experiment",
  tool: "configure_experiment",
  inspect: (name) => ({ tool: "get_declared_workflow", arguments: { kind: "experiment", name } }),
  render: renderExperimentTable,
  definitionId: experimentDefinitionId,
};

/**
 * Plans a create or replace of one experiment against the current file text (null: no file). Pure: the
 * caller writes `text` with writeProjectConfigAtomically unless the action is "unchanged".
 */
export function planExperimentEdit(request: ExperimentEditRequest): ExperimentEditPlan {
  const name = validateConfigurationName(request.name, "configure_experiment");
  const definition = normalizeExperimentDefinition(request.definition);
  const current = request.currentText === null ? null : parseProjectConfigText(request.currentText);
  if (current === null || current.ok) checkAgainstWorkload(current?.config ?? ({ workloads: {} } as ProjectConfig), definition);
  const plan = planSectionEdit(experimentSection, { ...request, name, definition });
  return { ...plan, experimentDefinitionId: experimentDefinitionId(name, definition), definition };
}
