import { readFileSync } from "node:fs";
import { defineCommand, type CommandDef } from "citty";
import { invalidRequest } from "../domain/errors.ts";
import {
  CompareRunSetsRequest,
  compareServiceRequest,
  FreezeRunSetRequest,
  RecordAnalysisRequest,
  ScalingRequest,
} from "../domain/requests/comparisons.ts";
import { checkedRequest, parseCliRequest } from "./arguments.ts";
import { cliOptions, cliServices } from "./context.ts";
import { cliLog } from "./log.ts";
import { emit, renderKeyValues, renderTable } from "./output.ts";
import type { ComparisonResult } from "../services/comparison-service.ts";
import type { ScalingResult } from "../services/scaling-service.ts";

export const runSetsCommand = defineCommand({
  meta: { name: "run-sets", description: "Frozen cohorts of runs for comparisons and scaling." },
  subCommands: {
    freeze: defineCommand({
      meta: { name: "freeze", description: "Freeze the given runs as one run set (membership never changes)." },
      args: {
        run_ids: { type: "positional", required: false, description: "Run ids (space separated)." },
        members: {
          type: "string",
          description: "Instead of run ids: a JSON array [{run_id, trial_id?, included?, reason?}] or @file.json.",
        },
      },
      run({ args }) {
        const runIds = ((args._ as string[] | undefined) ?? []).filter((id) => id !== "");
        const members = args.members ? jsonArray(String(args.members), "--members") : null;
        const request = checkedRequest(FreezeRunSetRequest, members ? { members } : { run_ids: runIds }, "run-sets freeze");
        const result = cliServices().runSets.freeze(request);
        emit(cliOptions(), result, () => renderKeyValues(result, ["run_set_id", "membership_digest", "experiment_id", "counts"]));
      },
    }),
    show: defineCommand({
      meta: { name: "show", description: "Show a run set's members." },
      args: { run_set_id: { type: "positional", required: true, description: "Run set id." } },
      run({ args }) {
        const result = cliServices().runSets.get(String(args.run_set_id));
        emit(cliOptions(), result, () =>
          [
            renderKeyValues(result, ["run_set_id", "membership_digest", "corpus_commit_id", "experiment_id", "counts"]),
            renderTable(result.members, ["order", "run_id", "block_id", "treatment", "included", "reason"]),
          ].join("\n"),
        );
      },
    }),
  },
});

const compareArguments = {
  baseline: { type: "positional", required: true, description: "Baseline run set id (or a run id)." },
  candidate: { type: "positional", required: true, description: "Candidate run set id (or a run id)." },
  metric: { type: "string", description: "Measurement name (default: the experiment's primary metric, else runtime.wall_time_ns)." },
  polarity: { type: "string", description: "lower_is_better | higher_is_better | neutral" },
  threshold: { type: "string", description: "Practical threshold as a fraction (0.05 = ±5%)." },
  confidence: { type: "string", description: "Confidence level of the interval that decides (default 0.99)." },
  seed: {
    type: "string",
    description: "Seed recorded with the comparison (default 0 or the experiment's); the t-interval rule draws no random numbers.",
  },
} as const;

function jsonArray(value: string, option: string): unknown[] {
  let text = value;
  try {
    if (value.startsWith("@")) text = readFileSync(value.slice(1), "utf8");
    const parsed = JSON.parse(text) as unknown;
    if (Array.isArray(parsed)) return parsed;
  } catch {
    // Reported below with the option's name.
  }
  throw invalidRequest(`Structured input is invalid for ${option}: expected a JSON array.`, {
    remediation: [`Pass ${option} as a JSON array or @file.json.`],
  });
}

function numberOption(value: unknown, option: string): number | null {
  if (value === undefined || value === null || value === "") return null;
  const parsed = Number(value);
  if (!Number.isFinite(parsed)) throw invalidRequest(`${option} must be a number.`, { remediation: [`Pass ${option} as a number.`] });
  return parsed;
}

/** The compare_run_sets request, checked by the tool's own schema. */
function compareRequest(args: Record<string, unknown>) {
  const request = checkedRequest(
    CompareRunSetsRequest,
    {
      baseline_run_set_id: String(args.baseline),
      candidate_run_set_id: String(args.candidate),
      metric: args.metric,
      polarity: args.polarity,
      practical_threshold: numberOption(args.threshold, "--threshold"),
      confidence_level: numberOption(args.confidence, "--confidence"),
      random_seed: numberOption(args.seed, "--seed"),
    },
    "analyze compare",
  );
  return compareServiceRequest(request);
}

function percent(value: number): string {
  return `${(value * 100).toFixed(1)}%`;
}

export function renderComparison(result: ComparisonResult): string {
  const ci = result.ci
    ? ` [${result.ci.lower.toFixed(4)}, ${result.ci.upper.toFixed(4)}] ${percent(result.ci.level)} ${result.ci.method}`
    : "";
  return [
    `${result.decision.toUpperCase()} (${result.validity}): ${result.metric} ratio candidate/baseline ${result.estimate?.toFixed(4) ?? "-"}${ci}; ${result.test ?? "no test"} p=${result.p_value?.toPrecision(3) ?? "-"}`,
    `  ${result.pairing}, ${result.estimator}; threshold ${percent(result.parameters.practical_threshold)}, ${result.parameters.polarity}`,
    `  counts: attempted ${result.counts.attempted.baseline}/${result.counts.attempted.candidate}, eligible ${result.counts.eligible.baseline}/${result.counts.eligible.candidate}, failed ${result.counts.failed.baseline}/${result.counts.failed.candidate}, excluded ${result.counts.excluded.baseline}/${result.counts.excluded.candidate}${result.counts.pairs !== null ? `, pairs ${result.counts.pairs}` : ""}`,
    ...result.reasons.map((reason) => `  reason ${reason.code}: ${reason.message}`),
    ...result.mismatches.map((mismatch) => `  ${mismatch.severity} ${mismatch.code}: ${mismatch.message}`),
    ...result.warnings.map((warning) => `  warning ${warning.code}: ${warning.message}`),
    ...(result.differential_hotspots.unit
      ? [
          "  gained:",
          ...result.differential_hotspots.gained.slice(0, 5).map((entry) => `    +${percent(entry.self_share_change)} ${entry.function}`),
          "  lost:",
          ...result.differential_hotspots.lost.slice(0, 5).map((entry) => `    ${percent(entry.self_share_change)} ${entry.function}`),
        ]
      : []),
  ].join("\n");
}

function renderScaling(result: ScalingResult): string {
  return [
    `${result.metric} vs ${result.size_parameter} over ${result.counts.sizes} sizes (${result.counts.eligible_runs} runs)`,
    ...result.series.flatMap((series) => [
      `  series ${series.series}: best ${series.fit.best_model ?? "none"}${series.fit.distinguishable ? "" : " (not distinguishable)"}; exponent ${series.fit.exponent_estimate?.value.toFixed(3) ?? "-"}`,
      ...series.fit.models.map(
        (model) => `    ${model.model.padEnd(9)} R²=${model.r_squared.toFixed(4)} ΔAICc=${model.delta_aicc.toFixed(2)}`,
      ),
      ...(series.fastest_growing_hotspot
        ? [
            `    fastest-growing hotspot: ${series.fastest_growing_hotspot.function} (exponent ${series.fastest_growing_hotspot.exponent?.toFixed(2) ?? "-"})`,
          ]
        : []),
    ]),
    ...result.limitations.map((limitation) => `  limitation: ${limitation}`),
  ].join("\n");
}

/** `flameox analyze compare|scaling|record|record-comparison`, merged into the analyze group. */
export const comparisonAnalyzeCommands: Record<string, CommandDef> = {
  compare: defineCommand({
    meta: {
      name: "compare",
      description: "Compare two run sets (or two runs): estimate, CI, p-value, decision, validity, counts, differential hotspots.",
    },
    args: compareArguments,
    async run({ args }) {
      const result = await cliServices().comparisons.compare(compareRequest(args));
      emit(cliOptions(), result, () => renderComparison(result));
    },
  }) as CommandDef,
  "record-comparison": defineCommand({
    meta: { name: "record-comparison", description: "Compare two run sets and persist the result so findings can cite it." },
    args: compareArguments,
    async run({ args }) {
      const result = await cliServices().comparisons.record(compareRequest(args));
      emit(cliOptions(), result, () =>
        renderKeyValues(result, ["ref_id", "decision", "validity", "estimate", "corpus_commit_id", "result_digest", "created"]),
      );
    },
  }) as CommandDef,
  scaling: defineCommand({
    meta: { name: "scaling", description: "Cost vs size fits over an experiment (or a frozen run set); never runs missing trials." },
    args: {
      experiment_or_run_set: { type: "positional", required: true, description: "Experiment id, or run set id (sha256:…)." },
      "size-parameter": { type: "string", description: "The numeric size factor/parameter." },
      metric: { type: "string", description: "Measurement name (default runtime.wall_time_ns)." },
    },
    async run({ args }) {
      const id = String(args.experiment_or_run_set);
      const isRunSet = id.startsWith("sha256:");
      const request = checkedRequest(
        ScalingRequest,
        { [isRunSet ? "run_set_id" : "experiment_id"]: id, size_parameter: args["size-parameter"], metric: args.metric },
        "analyze scaling",
      );
      const result = await cliServices().scaling.analyze(request);
      emit(cliOptions(), result, () => renderScaling(result));
    },
  }) as CommandDef,
  record: defineCommand({
    meta: {
      name: "record",
      description:
        "Run a curated recipe (hotspots, memory, execution, pytorch, accelerator_launches, failures, scaling) and persist it: JSON {recipe, input_id?, comparison_input_id?, phase?, experiment_id?, run_set_id?, size_parameter?, limit?} or @file.json.",
    },
    args: { request: { type: "positional", required: true, description: "Structured request." } },
    async run({ args }) {
      const request = parseCliRequest(RecordAnalysisRequest, String(args.request), "analyze record");
      const log = cliLog(cliOptions());
      const result = await cliServices().analysisRecords.record(request, (step, total, message) =>
        log.debug(`[${step}/${total}] ${message}`),
      );
      emit(cliOptions(), result, () => renderKeyValues(result, ["ref_id", "recipe", "corpus_commit_id", "result_digest", "created"]));
    },
  }) as CommandDef,
};
