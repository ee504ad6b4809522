/**
 * The strict schema of `flameox.toml`. Every table is a strict object (unknown keys are refused),
 * every default is applied on parse, so two spellings of one definition normalize to one value.
 */
import * as v from "valibot";
import { digestPattern } from "../domain/canonical-json.ts";
import { isContainedRelativePath, workloadTemplateProblems } from "./workload-template.ts";
import {
  ExperimentConfigSchema,
  FaultExperimentConfigSchema,
  type FaultScenarioSchema,
  InferenceScenarioConfigSchema,
  InferenceServerConfigSchema,
} from "./experiment-config-schema.ts";
import {
  ConfigurationNameSchema,
  environmentNamePattern,
  noNul,
  ParameterNameSchema,
  ScalarSchema,
  type ScalarValue,
  scalarKey,
  uniqueBy,
} from "./schema-primitives.ts";

export const oracleReceiptSchema = "flameox.oracle-receipt.v1";
export const identityEnvironmentFacts = ["cuda.driver", "cuda.runtime", "cuda.devices", "cuda.peer_topology"] as const;
export const workloadDefaults = { cwd: ".", timeout_seconds: 300 } as const;

const maxEntriesPerSection = 1000;

const ChoicesSchema = v.pipe(
  v.array(ScalarSchema),
  v.minLength(1, "a parameter needs at least one choice (the first is the default)"),
  v.maxLength(256, "a parameter has at most 256 choices"),
  uniqueBy<ScalarValue>(scalarKey, "parameter choices must be unique"),
);

const ArgvItemSchema = v.pipe(
  v.string(),
  v.minLength(1, "argv items must not be empty"),
  v.maxLength(4096, "argv items are at most 4096 characters"),
  noNul,
);

const ArgvSchema = v.pipe(
  v.array(ArgvItemSchema),
  v.minLength(1, "argv needs at least the executable"),
  v.maxLength(1024, "argv has at most 1024 items"),
);

const CwdSchema = v.pipe(
  v.string(),
  v.minLength(1),
  v.maxLength(4096),
  v.check(isContainedRelativePath, "cwd must be project-relative: not absolute and not escaping the project with .."),
);

const TimeoutSchema = v.pipe(
  v.number(),
  v.finite(),
  v.gtValue(0, "timeout_seconds must be > 0"),
  v.maxValue(86400, "timeout_seconds must be <= 86400"),
);

const ParametersSchema = v.pipe(v.record(ParameterNameSchema, ChoicesSchema), v.maxEntries(128, "at most 128 parameters"));

const EnvironmentSchema = v.pipe(
  v.record(
    v.pipe(v.string(), v.maxLength(256), v.regex(environmentNamePattern, "environment names must match ^[A-Za-z_][A-Za-z0-9_]*$")),
    v.pipe(v.string(), v.maxLength(32768), noNul),
  ),
  v.maxEntries(128, "at most 128 environment variables"),
);

const reservedFirstSegments = new Set([".git", ".diagnostics", "flameox.toml"]);

const WritablePathSchema = v.pipe(
  v.string(),
  v.minLength(1),
  v.maxLength(4096),
  v.check(
    (path) => isContainedRelativePath(path) && !path.split(/[\\/]/).includes(".."),
    "writable paths must be project-relative without ..",
  ),
  v.check(
    (path) => !reservedFirstSegments.has(path.split(/[\\/]/).find((segment) => segment !== "" && segment !== ".") ?? "."),
    "writable paths must not start with .git, .diagnostics or flameox.toml",
  ),
  v.check(
    (path) => path.split(/[\\/]/).some((segment) => segment !== "" && segment !== "."),
    "writable paths must name a directory below the project root",
  ),
);

const stringList = (max: number, label: string) =>
  v.pipe(v.array(v.pipe(v.string(), v.minLength(1), v.maxLength(256), noNul)), v.maxLength(max, `${label} has at most ${max} items`));

export const WorkloadOracleSchema = v.strictObject({
  strength: v.optional(
    v.pipe(v.picklist(["execution_check", "contract_check", "cross_treatment_equivalence"]), v.description("What it checks.")),
    "execution_check",
  ),
  argv: v.optional(
    v.pipe(v.array(ArgvItemSchema), v.maxLength(1024, "oracle argv has at most 1024 items"), v.description("Its command.")),
    () => [],
  ),
  receipt_schema: v.optional(
    v.pipe(v.literal(oracleReceiptSchema, `receipt_schema must be "${oracleReceiptSchema}"`), v.description("Receipt format.")),
  ),
});

// Index specifiers only: a name with optional extras and version specifiers, never a URL or path.
const pythonDistributionPattern =
  /^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?(?:\s*\[[A-Za-z0-9._,\s-]*\])?\s*(?:(?:===|==|!=|~=|<=|>=|<|>)\s*[A-Za-z0-9.*+!_-]+\s*,?\s*)*(?:;[^@/\\]*)?$/;

export const WorkloadRequirementsSchema = v.pipe(
  v.strictObject({
    executables: v.optional(v.pipe(stringList(64, "executables"), v.description("Executables.")), () => []),
    python_distributions: v.optional(
      v.pipe(
        stringList(64, "python_distributions"),
        v.checkItems(
          (item) => pythonDistributionPattern.test(item) && !item.includes("://"),
          "python_distributions take index specifiers only (name[extras] and version specifiers; no URLs or paths)",
        ),
        v.description("Python packages."),
      ),
      () => [],
    ),
    capabilities: v.optional(v.pipe(stringList(64, "capabilities"), v.description("Host capabilities.")), () => []),
    optional: v.optional(v.pipe(stringList(192, "optional"), v.description("Optional ones of these.")), () => []),
    active: v.optional(v.pipe(stringList(64, "active"), v.description("Probe these actively.")), () => []),
    allow_exploratory: v.optional(v.pipe(v.boolean(), v.description("Allow unmet requirements.")), false),
  }),
  v.check((requirements) => {
    const all = [...requirements.executables, ...requirements.python_distributions, ...requirements.capabilities];
    return new Set(all).size === all.length;
  }, "requirement names must be unique across executables, python_distributions and capabilities"),
  v.check((requirements) => {
    const declared = new Set([...requirements.executables, ...requirements.python_distributions, ...requirements.capabilities]);
    return requirements.optional.every((name) => declared.has(name));
  }, "every optional requirement must also be declared in executables, python_distributions or capabilities"),
  v.check(
    (requirements) => requirements.active.every((name) => requirements.capabilities.includes(name)),
    "every active requirement must be one of the declared capabilities",
  ),
);

export const WorkloadIdentitySchema = v.strictObject({
  python_modules: v.optional(v.pipe(stringList(64, "python_modules"), v.description("Python modules.")), () => []),
  native_files: v.optional(v.pipe(stringList(64, "native_files"), v.description("Native files.")), () => []),
  environment: v.optional(
    v.pipe(
      v.strictObject({
        required: v.optional(
          v.pipe(
            v.array(v.picklist(identityEnvironmentFacts)),
            v.maxLength(4),
            uniqueBy<(typeof identityEnvironmentFacts)[number]>(String, "identity.environment.required items must be unique"),
            v.description("Facts that must be known."),
          ),
          () => [],
        ),
      }),
      v.description("Host facts."),
    ),
    () => ({}),
  ),
});

const workloadEntries = {
  argv: ArgvSchema,
  cwd: v.optional(CwdSchema, workloadDefaults.cwd),
  timeout_seconds: v.optional(TimeoutSchema, workloadDefaults.timeout_seconds),
  parameters: v.optional(ParametersSchema, () => ({})),
  environment: v.optional(EnvironmentSchema, () => ({})),
  oracle: v.optional(WorkloadOracleSchema),
  requirements: v.optional(WorkloadRequirementsSchema, () => ({})),
  writable_paths: v.optional(
    v.pipe(
      v.array(WritablePathSchema),
      v.maxLength(16, "at most 16 writable paths"),
      uniqueBy<string>(String, "writable_paths must be unique"),
    ),
    () => [],
  ),
  identity: v.optional(WorkloadIdentitySchema, () => ({})),
};

export const WorkloadConfigSchema = v.pipe(
  v.strictObject(workloadEntries),
  v.rawCheck(({ dataset, addIssue }) => {
    if (!dataset.typed) return;
    for (const problem of workloadTemplateProblems(dataset.value)) addIssue({ message: problem });
  }),
);

const section = <T extends v.GenericSchema>(schema: T, label: string) =>
  v.optional(
    v.pipe(v.record(ConfigurationNameSchema, schema), v.maxEntries(maxEntriesPerSection, `at most ${maxEntriesPerSection} ${label}`)),
    () => ({}),
  );

export const ProjectConfigSchema = v.strictObject({
  schema_version: v.optional(v.literal(1, "schema_version must be 1"), 1),
  workloads: section(WorkloadConfigSchema, "workloads"),
  experiments: section(ExperimentConfigSchema, "experiments"),
  fault_experiments: section(FaultExperimentConfigSchema, "fault experiments"),
  inference_servers: section(InferenceServerConfigSchema, "inference servers"),
  inference_scenarios: section(InferenceScenarioConfigSchema, "inference scenarios"),
});

const DigestSchema = v.pipe(v.string(), v.regex(digestPattern, "must match ^sha256:[0-9a-f]{64}$"));

const about = <Schema extends v.GenericSchema>(schema: Schema, text: string) =>
  v.pipe(schema, v.description<v.InferOutput<Schema>, string>(text));

/**
 * The typed input of the configure_workload tool (property order is the published order). Each field
 * says what it is for; the descriptions are the tool's documentation in tools/list.
 */
export const ConfigureWorkloadInputSchema = v.strictObject({
  name: about(ConfigurationNameSchema, "Workload name."),
  operation: about(v.picklist(["create", "replace"]), "replace needs expected_configuration_id."),
  argv: about(ArgvSchema, "Command, no shell; {param} placeholders."),
  cwd: v.optional(about(CwdSchema, "Project-relative; default '.'.")),
  timeout_seconds: v.optional(about(TimeoutSchema, "Default 300.")),
  parameters: v.optional(v.nullable(about(ParametersSchema, "Allowed values; first is default."))),
  environment: v.optional(v.nullable(about(EnvironmentSchema, "Environment variables."))),
  oracle: v.optional(v.nullable(about(WorkloadOracleSchema, "Checks each trial's output."))),
  requirements: v.optional(v.nullable(about(WorkloadRequirementsSchema, "What it needs on the host."))),
  writable_paths: v.optional(
    about(
      v.pipe(
        v.array(WritablePathSchema),
        v.maxLength(16, "at most 16 writable paths"),
        uniqueBy<string>(String, "writable_paths must be unique"),
      ),
      "Folders it may write.",
    ),
  ),
  identity: v.optional(v.nullable(about(WorkloadIdentitySchema, "What identifies a run."))),
  expected_configuration_id: v.optional(v.nullable(about(DigestSchema, "From workload_configuration_status."))),
});

export type Scalar = v.InferOutput<typeof ScalarSchema>;
export type WorkloadOracleConfig = v.InferOutput<typeof WorkloadOracleSchema>;
export type WorkloadRequirementsConfig = v.InferOutput<typeof WorkloadRequirementsSchema>;
export type WorkloadIdentityConfig = v.InferOutput<typeof WorkloadIdentitySchema>;
export type WorkloadConfig = v.InferOutput<typeof WorkloadConfigSchema>;
export type WorkloadConfigInput = v.InferInput<typeof WorkloadConfigSchema>;
export type ExperimentConfig = v.InferOutput<typeof ExperimentConfigSchema>;
export type FaultScenarioConfig = v.InferOutput<typeof FaultScenarioSchema>;
export type FaultExperimentConfig = v.InferOutput<typeof FaultExperimentConfigSchema>;
export type InferenceServerConfig = v.InferOutput<typeof InferenceServerConfigSchema>;
export type InferenceScenarioConfig = v.InferOutput<typeof InferenceScenarioConfigSchema>;
export type ProjectConfig = v.InferOutput<typeof ProjectConfigSchema>;
export type ProjectConfigInput = v.InferInput<typeof ProjectConfigSchema>;
export type ConfigureWorkloadInput = v.InferOutput<typeof ConfigureWorkloadInputSchema>;

/** The workload definition carried by a configure_workload input (nulls mean "not given"). */
export function workloadDefinitionFromInput(input: ConfigureWorkloadInput): WorkloadConfigInput {
  const definition: WorkloadConfigInput = { argv: [...input.argv] };
  if (input.cwd !== undefined) definition.cwd = input.cwd;
  if (input.timeout_seconds !== undefined) definition.timeout_seconds = input.timeout_seconds;
  if (input.parameters != null) definition.parameters = input.parameters;
  if (input.environment != null) definition.environment = input.environment;
  if (input.oracle != null) definition.oracle = input.oracle;
  if (input.requirements != null) definition.requirements = input.requirements;
  if (input.writable_paths !== undefined) definition.writable_paths = input.writable_paths;
  if (input.identity != null) definition.identity = input.identity;
  return definition;
}
