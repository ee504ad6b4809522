/**
 * The strict schemas of flameox.toml's experiment tables: [experiments.*] (factors, design,
 * statistics), [fault_experiments.*] and the inference server and scenario tables.
 */
import * as v from "valibot";
import { digestPattern } from "../domain/canonical-json.ts";
import { ConfigurationNameSchema, ParameterNameSchema, ScalarSchema, type ScalarValue, scalarKey, uniqueBy } from "./schema-primitives.ts";

export const PolaritySchema = v.picklist(["lower_is_better", "higher_is_better", "neutral"]);
export const ConfidenceSchema = v.pipe(
  v.number(),
  v.gtValue(0, "confidence_level must be > 0"),
  v.ltValue(1, "confidence_level must be < 1"),
);
export const ThresholdSchema = v.pipe(v.number(), v.finite(), v.minValue(0, "practical_threshold must be >= 0"));
export const SeedSchema = v.pipe(v.number(), v.safeInteger(), v.minValue(0, "random_seed must be >= 0"));
export const intBetween = (min: number, max: number) => v.pipe(v.number(), v.integer(), v.minValue(min), v.maxValue(max));
const runtimeResourceMetrics = new Set([
  "runtime_resource.peak_rss_bytes",
  "runtime_resource.minimum_free_bytes",
  "runtime_resource.staging_growth_bytes",
]);
export const PrimaryMetricSchema = v.pipe(
  v.string(),
  v.minLength(1),
  v.maxLength(200),
  v.check(
    (metric) => !metric.startsWith("runtime_resource.") || runtimeResourceMetrics.has(metric),
    "runtime_resource metrics must be peak_rss_bytes, minimum_free_bytes or staging_growth_bytes",
  ),
);
export const FactorLevelsSchema = v.pipe(
  v.array(ScalarSchema),
  v.minLength(1),
  v.maxLength(32),
  uniqueBy<ScalarValue>(scalarKey, "factor levels must be unique"),
);
export const CombinationSchema = v.record(v.pipe(v.string(), v.minLength(1), v.maxLength(100)), ScalarSchema);

/**
 * Defaults chosen so that a declaration naming only its workload and treatments can reach a verdict: the
 * comparison's practical threshold (5 %) and confidence level (0.99), and no polarity, which plan_experiment
 * derives from the metric (lower is better for times and bytes). docs/statistics.md measures them.
 */
export const experimentStatisticsDefaults = { practical_threshold: 0.05, confidence_level: 0.99, blocks: 10 } as const;

const statisticsEntries = {
  primary_metric: v.optional(PrimaryMetricSchema, "categorical_outcome"),
  polarity: v.optional(PolaritySchema),
  estimand: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(200)), "ratio_candidate_over_baseline"),
  practical_threshold: v.optional(ThresholdSchema, experimentStatisticsDefaults.practical_threshold),
  confidence_level: v.optional(ConfidenceSchema, experimentStatisticsDefaults.confidence_level),
  random_seed: v.optional(SeedSchema, 0),
};

export const ExperimentConfigSchema = v.pipe(
  v.strictObject({
    workload: v.pipe(v.string(), v.minLength(1), v.maxLength(100)),
    variants: v.optional(
      v.pipe(
        v.array(v.pipe(v.string(), v.minLength(1), v.maxLength(256))),
        v.minLength(1),
        v.maxLength(16),
        uniqueBy<string>(String, "variants must be unique"),
      ),
    ),
    design: v.optional(v.picklist(["randomized_complete_blocks", "randomized", "fixed_order"]), "randomized_complete_blocks"),
    blocks: v.optional(intBetween(1, 1000), experimentStatisticsDefaults.blocks),
    warmups: v.optional(intBetween(0, 100), 0),
    factors: v.optional(v.pipe(v.record(ParameterNameSchema, FactorLevelsSchema), v.minEntries(1), v.maxEntries(8, "at most 8 factors"))),
    combination_policy: v.optional(v.picklist(["cartesian", "explicit"]), "cartesian"),
    combinations: v.optional(v.pipe(v.array(CombinationSchema), v.maxLength(10000))),
    exclude: v.optional(v.pipe(v.array(CombinationSchema), v.maxLength(1000))),
    treatment_factor: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(100))),
    max_trials: v.optional(intBetween(1, 100000), 10000),
    analysis: v.optional(v.picklist(["performance", "outcome"]), "performance"),
    outcome_goal: v.optional(v.picklist(["equivalence", "absence_of_failure", "bounded_rate"])),
    minimum_attempts: v.optional(intBetween(1, 1000)),
    maximum_attempts: v.optional(intBetween(1, 1000)),
    ...statisticsEntries,
    scaling_parameter: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(100))),
    scaling_values: v.optional(
      v.pipe(v.array(ScalarSchema), v.minLength(1), v.maxLength(1000), uniqueBy<ScalarValue>(scalarKey, "scaling_values must be unique")),
    ),
  }),
  v.rawCheck(({ dataset, addIssue }) => {
    if (!dataset.typed) return;
    const experiment = dataset.value;
    const hasFactors = experiment.factors !== undefined;
    if (hasFactors) {
      if (experiment.variants !== undefined) addIssue({ message: "variants cannot be combined with factors" });
      if (experiment.scaling_parameter !== undefined || experiment.scaling_values !== undefined)
        addIssue({ message: "scaling_parameter/scaling_values cannot be combined with factors" });
      if (experiment.treatment_factor === undefined) {
        if (Object.keys(experiment.factors!).length > 1)
          addIssue({ message: "treatment_factor is required when more than one factor is declared" });
      } else if (!Object.hasOwn(experiment.factors!, experiment.treatment_factor))
        addIssue({ message: `treatment_factor "${experiment.treatment_factor}" is not one of the factors` });
      for (const [listName, list] of [
        ["combinations", experiment.combinations],
        ["exclude", experiment.exclude],
      ] as const) {
        (list ?? []).forEach((combination, position) => {
          for (const [factor, level] of Object.entries(combination)) {
            const levels = experiment.factors![factor];
            if (levels === undefined) addIssue({ message: `${listName}.${position}: "${factor}" is not a factor` });
            else if (!levels.includes(level))
              addIssue({ message: `${listName}.${position}.${factor}: ${JSON.stringify(level)} is not a declared level` });
          }
        });
      }
    } else {
      if (experiment.variants === undefined && experiment.scaling_parameter === undefined)
        addIssue({ message: "an experiment needs factors, scaling_parameter with scaling_values, or legacy variants" });
      if (experiment.variants !== undefined && experiment.scaling_parameter !== undefined)
        addIssue({ message: "variants cannot be combined with scaling_parameter/scaling_values" });
      for (const field of ["treatment_factor", "combinations", "exclude"] as const) {
        if (experiment[field] !== undefined) addIssue({ message: `${field} is only allowed with factors` });
      }
    }
    if (experiment.combination_policy === "cartesian" && experiment.combinations !== undefined)
      addIssue({ message: 'combinations require combination_policy = "explicit"' });
    if (experiment.combination_policy === "explicit" && (experiment.combinations === undefined || experiment.combinations.length === 0))
      addIssue({ message: 'combination_policy = "explicit" requires combinations' });
    if ((experiment.scaling_parameter === undefined) !== (experiment.scaling_values === undefined))
      addIssue({ message: "scaling_parameter and scaling_values go together" });
    if (experiment.analysis === "outcome") {
      if (experiment.outcome_goal === undefined) addIssue({ message: 'analysis = "outcome" requires outcome_goal' });
      const minimum = experiment.minimum_attempts ?? experiment.blocks;
      const maximum = experiment.maximum_attempts ?? experiment.blocks;
      if (!(minimum <= experiment.blocks && experiment.blocks <= maximum))
        addIssue({ message: "outcome experiments need minimum_attempts <= blocks <= maximum_attempts" });
    } else {
      for (const field of ["outcome_goal", "minimum_attempts", "maximum_attempts"] as const) {
        if (experiment[field] !== undefined) addIssue({ message: `${field} is only allowed with analysis = "outcome"` });
      }
    }
  }),
  // One factor is the treatment without saying so; normalizing it here makes both spellings one definition.
  v.transform((experiment) =>
    experiment.factors !== undefined && experiment.treatment_factor === undefined
      ? { ...experiment, treatment_factor: Object.keys(experiment.factors)[0] }
      : experiment,
  ),
);

const faultCommon = {
  stream: v.optional(v.picklist(["upstream", "downstream"]), "downstream"),
  toxicity: v.optional(v.pipe(v.number(), v.minValue(0), v.maxValue(1)), 1),
};
const milliseconds = (min: number) => v.pipe(v.number(), v.minValue(min), v.maxValue(3_600_000));

export const FaultScenarioSchema = v.variant("type", [
  v.strictObject({ type: v.literal("latency"), latency_ms: milliseconds(1), jitter_ms: v.optional(milliseconds(0), 0), ...faultCommon }),
  v.strictObject({ type: v.literal("timeout"), timeout_ms: milliseconds(0), ...faultCommon }),
  v.strictObject({ type: v.literal("reset_peer"), ...faultCommon }),
  v.strictObject({ type: v.literal("bandwidth"), bandwidth_limit: v.pipe(v.number(), v.minValue(1), v.maxValue(1e10)), ...faultCommon }),
  v.strictObject({
    type: v.literal("slicer"),
    average_size: v.pipe(v.number(), v.minValue(1), v.maxValue(1e7)),
    size_variation: v.optional(v.pipe(v.number(), v.minValue(0), v.maxValue(1e7)), 0),
    delay_ms: v.optional(milliseconds(0), 0),
    ...faultCommon,
  }),
  v.strictObject({ type: v.literal("limit_data"), bytes: v.pipe(v.number(), v.minValue(1), v.maxValue(1e10)), ...faultCommon }),
  v.strictObject({ type: v.literal("slow_close"), delay_ms: milliseconds(0), ...faultCommon }),
  v.strictObject({ type: v.literal("proxy"), enabled: v.optional(v.literal(false, "a proxy fault may only set enabled = false"), false) }),
]);

const loopbackIpPattern = /^(?:127\.(?:\d{1,3})\.(?:\d{1,3})\.(?:\d{1,3})|::1)$/;

export const FaultExperimentConfigSchema = v.pipe(
  v.strictObject({
    workload: v.pipe(v.string(), v.minLength(1), v.maxLength(100)),
    endpoint_parameter: ParameterNameSchema,
    upstream_host: v.pipe(v.string(), v.regex(loopbackIpPattern, "upstream_host must be a loopback IP literal")),
    upstream_port: intBetween(1, 65535),
    endpoint_template: v.pipe(
      v.string(),
      v.minLength(1),
      v.maxLength(1000),
      v.check((template) => {
        const fields = [...template.matchAll(/\{([^{}]*)\}/g)].map((match) => match[1]);
        return fields.every((field) => field === "host" || field === "port") && fields.includes("host") && fields.includes("port");
      }, "endpoint_template must contain exactly the fields {host} and {port}"),
    ),
    scenarios: v.pipe(
      v.record(
        v.pipe(
          ConfigurationNameSchema,
          v.check((name) => name !== "baseline", "the scenario name baseline is reserved"),
        ),
        FaultScenarioSchema,
      ),
      v.minEntries(1, "at least one scenario"),
      v.maxEntries(64, "at most 64 scenarios"),
    ),
    blocks: v.optional(intBetween(1, 1000), 1),
    repetitions: v.optional(intBetween(1, 1000), 1),
    ...statisticsEntries,
  }),
  v.rawCheck(({ dataset, addIssue }) => {
    if (!dataset.typed) return;
    const experiment = dataset.value;
    const scenarios = Object.entries(experiment.scenarios);
    if (experiment.blocks * experiment.repetitions * (scenarios.length + 1) > 100000)
      addIssue({ message: "blocks x repetitions x (scenarios + 1) must be <= 100000" });
    for (const [name, scenario] of scenarios) {
      if (scenario.type === "latency" && scenario.toxicity === 1 && scenario.jitter_ms !== 0)
        addIssue({ message: `scenarios.${name}: a deterministic latency fault (toxicity 1) needs jitter_ms = 0` });
      if (scenario.type !== "proxy" && scenario.toxicity < 1 && experiment.repetitions < 2)
        addIssue({ message: `scenarios.${name}: toxicity < 1 needs repetitions >= 2` });
    }
  }),
);

export const InferenceServerConfigSchema = v.pipe(
  v.strictObject({
    provider: v.optional(v.picklist(["vllm", "sglang"]), "vllm"),
    benchmark_python: v.optional(v.pipe(v.string(), v.startsWith("/", "benchmark_python must be an absolute path"), v.maxLength(4096))),
    mode: v.picklist(["managed", "existing_local"]),
    workload: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(100))),
    base_url: v.optional(v.pipe(v.string(), v.maxLength(2048)), "http://127.0.0.1:8000"),
    model: v.pipe(v.string(), v.minLength(1), v.maxLength(500)),
    model_revision: v.optional(v.pipe(v.string(), v.maxLength(200))),
    tokenizer: v.optional(v.pipe(v.string(), v.maxLength(500))),
    tokenizer_revision: v.optional(v.pipe(v.string(), v.maxLength(200))),
    quantization: v.optional(v.pipe(v.string(), v.maxLength(100))),
  }),
  v.rawCheck(({ dataset, addIssue }) => {
    if (!dataset.typed) return;
    const server = dataset.value;
    if (server.provider === "sglang" && server.benchmark_python === undefined)
      addIssue({ message: "benchmark_python is required for provider sglang" });
    if (server.provider !== "sglang" && server.benchmark_python !== undefined)
      addIssue({ message: "benchmark_python is only allowed for provider sglang" });
    if (server.mode === "managed" && server.workload === undefined) addIssue({ message: "managed servers require a workload" });
    if (server.mode !== "managed" && server.workload !== undefined) addIssue({ message: "workload is only allowed for managed servers" });
    let url: URL | null = null;
    try {
      url = new URL(server.base_url);
    } catch {
      addIssue({ message: "base_url is not a URL" });
      return;
    }
    const host = url.hostname.replace(/^\[|\]$/g, "");
    const ipLiteral = loopbackIpPattern.test(host);
    if (url.protocol !== "http:") addIssue({ message: "base_url must use plain http" });
    if (!ipLiteral && host !== "localhost") addIssue({ message: "base_url must point at a loopback address" });
    if (url.username !== "" || url.password !== "" || url.search !== "" || url.hash !== "")
      addIssue({ message: "base_url must not carry credentials, a query or a fragment" });
    if (server.mode === "managed" && !ipLiteral) addIssue({ message: "managed servers need a loopback IP literal in base_url" });
    if (server.provider === "sglang" && url.pathname !== "/") addIssue({ message: "sglang servers need base_url at the root path" });
  }),
);

export const InferenceScenarioConfigSchema = v.pipe(
  v.strictObject({
    server: v.pipe(v.string(), v.minLength(1), v.maxLength(100)),
    provider: v.picklist(["aiperf", "vllm_bench", "sglang_bench"]),
    endpoint_type: v.optional(v.picklist(["chat", "completions"]), "chat"),
    streaming: v.optional(v.boolean(), true),
    trace_artifact_id: v.optional(v.pipe(v.string(), v.regex(digestPattern, "trace_artifact_id must be sha256:<64 hex>"))),
    num_prompts: v.optional(intBetween(1, 1e7), 1),
    concurrency: v.optional(intBetween(1, 100000)),
    request_rate: v.optional(v.pipe(v.number(), v.gtValue(0), v.maxValue(1e6))),
    burstiness: v.optional(v.pipe(v.number(), v.gtValue(0), v.maxValue(1e6))),
    warmup_request_count: v.optional(intBetween(0, 1e6), 0),
    seed: v.optional(intBetween(0, 2 ** 31 - 1), 0),
    speedup_ratio: v.optional(v.pipe(v.number(), v.gtValue(0), v.maxValue(100)), 1),
    semantic_oracle_workload: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(100))),
    random_input_len: v.optional(intBetween(1, 1e6)),
    random_output_len: v.optional(intBetween(1, 1e6)),
    random_range_ratio: v.optional(v.pipe(v.number(), v.gtValue(0), v.maxValue(1))),
  }),
  v.rawCheck(({ dataset, addIssue }) => {
    if (!dataset.typed) return;
    const scenario = dataset.value;
    if (scenario.trace_artifact_id !== undefined && scenario.provider !== "aiperf")
      addIssue({ message: "trace_artifact_id is only allowed for aiperf" });
    if (scenario.provider !== "aiperf" && !scenario.streaming) addIssue({ message: `${scenario.provider} scenarios must stream` });
    if (scenario.speedup_ratio !== 1 && !(scenario.provider === "aiperf" && scenario.trace_artifact_id !== undefined))
      addIssue({ message: "speedup_ratio other than 1 needs aiperf with a trace_artifact_id" });
    if (scenario.provider === "sglang_bench") {
      if (scenario.random_input_len === undefined || scenario.random_output_len === undefined)
        addIssue({ message: "sglang_bench needs random_input_len and random_output_len" });
      if (scenario.burstiness !== undefined) addIssue({ message: "sglang_bench does not take burstiness" });
    } else if (
      scenario.random_input_len !== undefined ||
      scenario.random_output_len !== undefined ||
      scenario.random_range_ratio !== undefined
    ) {
      addIssue({ message: "random_* fields are only allowed for sglang_bench" });
    }
    if (scenario.burstiness !== undefined && scenario.request_rate === undefined) addIssue({ message: "burstiness needs request_rate" });
  }),
);
