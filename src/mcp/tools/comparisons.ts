import * as v from "valibot";
import { additive, readOnly } from "../annotations.ts";
import { analysisRecipeNames } from "../../services/analysis-record-service.ts";
import { defineTool } from "../define-tool.ts";

const identifier = v.pipe(v.string(), v.minLength(1), v.maxLength(200));
const optionalIdentifier = v.optional(v.nullable(identifier), null);

const compareRequest = v.strictObject({
  baseline_run_set_id: identifier,
  candidate_run_set_id: identifier,
  metric: v.optional(v.nullable(v.pipe(v.string(), v.minLength(1), v.maxLength(200))), null),
  unit: v.optional(v.nullable(v.pipe(v.string(), v.minLength(1), v.maxLength(50))), null),
  polarity: v.optional(v.nullable(v.picklist(["lower_is_better", "higher_is_better", "neutral"])), null),
  practical_threshold: v.optional(v.nullable(v.pipe(v.number(), v.minValue(0), v.ltValue(1))), null),
  confidence_level: v.optional(v.nullable(v.pipe(v.number(), v.gtValue(0), v.ltValue(1))), null),
  random_seed: v.optional(v.nullable(v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(2 ** 53 - 1))), null),
  resamples: v.optional(v.nullable(v.pipe(v.number(), v.integer(), v.minValue(100), v.maxValue(100_000))), null),
  minimum_samples: v.optional(v.nullable(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(1000))), null),
  pairing: v.optional(v.nullable(v.picklist(["auto", "paired", "unpaired"])), null),
  hotspot_limit: v.optional(v.nullable(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(100))), null),
});

type CompareInput = v.InferOutput<typeof compareRequest>;

function toServiceRequest(input: CompareInput) {
  return {
    baseline: input.baseline_run_set_id,
    candidate: input.candidate_run_set_id,
    metric: input.metric ?? null,
    unit: input.unit ?? null,
    polarity: input.polarity ?? null,
    practical_threshold: input.practical_threshold ?? null,
    confidence_level: input.confidence_level ?? null,
    random_seed: input.random_seed ?? null,
    resamples: input.resamples ?? null,
    minimum_samples: input.minimum_samples ?? null,
    pairing: input.pairing ?? null,
    hotspot_limit: input.hotspot_limit ?? null,
  };
}

const compareDescription =
  "the estimate is the ratio candidate/baseline of the metric (default runtime.wall_time_ns; any measurement name works): median of paired log ratios when both sets come from one experiment's blocks, ratio of medians otherwise, with a seeded BCa bootstrap CI (method named) and a rank-test p-value. decision: improved | regressed (whole CI beyond the practical threshold AND p < alpha) | equivalent (CI inside ±threshold) | inconclusive, with reasons (too few samples, high variation, outliers, failed trials, CI spans threshold). validity: valid | exploratory | invalid with mismatches (different workload definitions, environments, source within a side, collector, failed validation, oracle outputs). counts: attempted, eligible, failed, excluded, pairs. Also differential hotspots: functions that gained or lost share of time between the sets. Parameters default to the experiment's declaration when both sets come from one experiment. A run id is accepted as a one-run set.";

export const comparisonTools = [
  defineTool({
    name: "freeze_run_set",
    description:
      "Freeze a cohort of runs for comparison or scaling: run_ids for a plain set, or members to include/exclude runs with reasons (an excluded member needs a reason; trial_id must resolve to the run). Membership never changes afterwards; the result carries run_set_id and membership_digest. Runs recorded by an experiment keep their block, so sets from one experiment compare paired.",
    input: v.strictObject({
      run_ids: v.optional(v.nullable(v.pipe(v.array(identifier), v.minLength(1), v.maxLength(10000))), null),
      members: v.optional(
        v.nullable(
          v.pipe(
            v.array(
              v.strictObject({
                run_id: identifier,
                trial_id: optionalIdentifier,
                included: v.optional(v.boolean(), true),
                reason: v.optional(v.nullable(v.pipe(v.string(), v.minLength(1), v.maxLength(500))), null),
              }),
            ),
            v.minLength(1),
            v.maxLength(10000),
          ),
        ),
        null,
      ),
      selection: v.optional(
        v.nullable(
          v.record(v.pipe(v.string(), v.minLength(1), v.maxLength(100)), v.union([v.string(), v.number(), v.boolean(), v.null()])),
        ),
        null,
      ),
    }),
    annotations: additive,
    async handler(input, { services }) {
      const result = services.runSets.freeze({
        run_ids: input.run_ids ?? null,
        members: input.members ?? null,
        selection: input.selection ?? null,
      });
      return {
        result,
        text: `Frozen ${result.counts.members} runs as ${result.run_set_id} (${result.counts.included} included).`,
        links: [{ uri: result.resource_uri, name: "Run set", description: "The frozen cohort." }],
      };
    },
  }),
  defineTool({
    name: "compare_run_sets",
    description: `Compare two frozen run sets (read-only, deterministic for its seed; nothing is persisted — use record_comparison to cite it in a finding): ${compareDescription}`,
    input: compareRequest,
    annotations: readOnly,
    async handler(input, { services, progress }) {
      const result = await services.comparisons.compare(toServiceRequest(input), (step, total, message) => progress(step, total, message));
      const ratio =
        result.estimate === null
          ? "no estimate"
          : `ratio ${result.estimate.toFixed(4)}${result.ci ? ` [${result.ci.lower.toFixed(4)}, ${result.ci.upper.toFixed(4)}]` : ""}`;
      return { result, text: `Comparison is ${result.decision} (${result.validity}); ${ratio}.` };
    },
  }),
  defineTool({
    name: "record_comparison",
    description: `Run compare_run_sets and persist it with its exact inputs (run set ids, membership digests, run ids, parameters), the pinned corpus commit and a result digest, so a finding can cite it by comparison id; the id is deterministic, recording the same comparison twice returns it. Same request as compare_run_sets: ${compareDescription}`,
    input: compareRequest,
    annotations: additive,
    async handler(input, { services, progress }) {
      const result = await services.comparisons.record(toServiceRequest(input), (step, total, message) => progress(step, total, message));
      return {
        result,
        text: `Recorded comparison ${result.ref_id}: ${result.decision} (${result.validity}).`,
        links: [
          {
            uri: result.resource_uri,
            name: `Comparison ${result.ref_id}`,
            description: "The recorded comparison with its inputs and result.",
          },
        ],
      };
    },
  }),
  defineTool({
    name: "analyze_scaling",
    description:
      "How cost grows with input size, strictly over existing runs (it never runs missing trials; collect them with plan_experiment/run_experiment): an experiment's successful trials with a numeric size factor (default: the treatment factor or scaling_parameter) or a frozen run set whose runs vary one numeric parameter. Fits constant, linear, n log n and quadratic models (weighted least squares on relative residuals, AICc selection, R², log-log exponent with CI) per series of the other factors, says whether models are distinguishable, lists missing sizes, and ranks which hotspot grows fastest when the runs have stack samples.",
    input: v.strictObject({
      experiment_id: optionalIdentifier,
      run_set_id: optionalIdentifier,
      size_parameter: v.optional(v.nullable(v.pipe(v.string(), v.minLength(1), v.maxLength(100))), null),
      metric: v.optional(v.nullable(v.pipe(v.string(), v.minLength(1), v.maxLength(200))), null),
      hotspot_limit: v.optional(v.nullable(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(100))), null),
    }),
    annotations: readOnly,
    async handler(input, { services, progress }) {
      const result = await services.scaling.analyze(
        {
          experiment_id: input.experiment_id ?? null,
          run_set_id: input.run_set_id ?? null,
          size_parameter: input.size_parameter ?? null,
          metric: input.metric ?? null,
          hotspot_limit: input.hotspot_limit ?? null,
        },
        (step, total, message) => progress(step, total, message),
      );
      const fits = result.series
        .map((series) => `${series.fit.best_model ?? "none"}${series.fit.distinguishable ? "" : " (not distinguishable)"}`)
        .join("; ");
      return {
        result,
        text: `Fitted ${result.series.length} series over ${result.counts.sizes} sizes of ${result.size_parameter}: ${fits}.`,
      };
    },
  }),
  defineTool({
    name: "record_analysis",
    description:
      "Run a curated read-only recipe — the same service call as its analyze_* tool — and persist it with its exact inputs (ids, limit, the evidence bundles read), the pinned corpus commit and a result digest, so a finding can cite it by analysis id (get_evidence ref_type 'analysis', resource flameox://evidence/analysis/{id}); recording the same input at the same commit returns the same id. recipe: hotspots, memory, pytorch (input_id = run or artifact, limit); execution (input_id, optional comparison_input_id, limit); accelerator_launches (input_id, optional comparison_input_id and phase, limit); failures (limit only: every run); scaling (experiment_id, or run_set_id, optional size_parameter; limit = hotspots ranked). A field the recipe does not use is INVALID_ARGUMENTS naming it. No SQL and no caller-supplied results.",
    input: v.strictObject({
      recipe: v.picklist(analysisRecipeNames),
      input_id: optionalIdentifier,
      comparison_input_id: optionalIdentifier,
      experiment_id: optionalIdentifier,
      run_set_id: optionalIdentifier,
      size_parameter: v.optional(v.nullable(v.pipe(v.string(), v.minLength(1), v.maxLength(100))), null),
      limit: v.optional(v.nullable(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(1000))), null),
      phase: v.optional(v.nullable(v.pipe(v.string(), v.minLength(1), v.maxLength(200))), null),
    }),
    annotations: additive,
    async handler(input, { services, progress }) {
      const result = await services.analysisRecords.record(
        {
          recipe: input.recipe,
          input_id: input.input_id ?? null,
          comparison_input_id: input.comparison_input_id ?? null,
          experiment_id: input.experiment_id ?? null,
          run_set_id: input.run_set_id ?? null,
          size_parameter: input.size_parameter ?? null,
          limit: input.limit ?? null,
          phase: input.phase ?? null,
        },
        (step, total, message) => progress(step, total, message),
      );
      return {
        result,
        text: `Recorded ${input.recipe} analysis ${result.ref_id}.`,
        links: [
          { uri: result.resource_uri, name: `Analysis ${result.ref_id}`, description: "The recorded analysis with its inputs and result." },
        ],
      };
    },
  }),
];
