import { defineCommand } from "citty";
import { cliOptions, cliServices } from "./context.ts";
import { withInterrupt } from "./interrupt.ts";
import { cliLog } from "./log.ts";
import { emit, renderKeyValues, renderTable } from "./output.ts";
import { parseStructuredInput } from "./structured-input.ts";
import { ListTrialsRequest, PlanExperimentRequest } from "../domain/requests/experiments.ts";
import { pageLimits } from "../domain/requests/limits.ts";
import { checkedRequest, pageArguments, pageOf } from "./arguments.ts";
import type { ExperimentPlan } from "../services/experiment-service.ts";
import { ConfigureExperimentInputSchema } from "../services/workload-service.ts";

// People read a screenful of trials; an agent's MCP call pages by the tool's own default.
const cliTrialPage = 100;

const planArguments = {
  name: { type: "positional", required: true, description: "Experiment name in flameox.toml." },
  adapter: { type: "string", default: "command", description: "Capture adapter for every trial (default command)." },
  "adapter-options": { type: "string", description: "Adapter options as JSON ('{\"rate\": 500}') or @file.json." },
  parameters: { type: "string", description: "Non-factor workload parameters as JSON ('{\"threads\": 4}') or @file.json." },
  investigation: { type: "string", description: "Investigation id to link." },
  hypothesis: { type: "string", description: "Hypothesis id to link." },
} as const;

/** The plan_experiment request, checked by the tool's own schema. */
function planRequest(args: Record<string, unknown>) {
  return checkedRequest(
    PlanExperimentRequest,
    {
      experiment_name: String(args.name),
      adapter: String(args.adapter ?? "command"),
      adapter_options: parseStructuredInput(args["adapter-options"] as string | undefined, "--adapter-options"),
      parameters: parseStructuredInput(args.parameters as string | undefined, "--parameters"),
      investigation_id: args.investigation,
      hypothesis_id: args.hypothesis,
    },
    "experiment plan",
  );
}

function renderPlan(plan: ExperimentPlan): string {
  return [
    `plan experiment '${plan.experiment_name}' over '${plan.workload_name}' with ${plan.adapter}: ${plan.trial_count} trials in ${plan.blocks} block(s), design ${plan.design}, random_seed ${plan.random_seed} (expires ${plan.expires_at})`,
    `  treatments (${plan.treatment_factor}): ${plan.treatments.join(", ")}`,
    `  metric ${plan.statistics.primary_metric}, ${plan.statistics.polarity}, threshold ${plan.statistics.practical_threshold}, confidence ${plan.statistics.confidence_level}`,
    ...(plan.detectable_change?.ratio
      ? [
          `  detects changes of ×${plan.detectable_change.ratio.toFixed(2)} or more (${plan.detectable_change.assumed_noise_cv * 100} % noise assumed)`,
        ]
      : []),
    `  order: ${plan.order.map((trial) => `${trial.block_id}:${trial.treatment}`).join(" ")}${plan.order_truncated ? " …" : ""}`,
    `  trials per treatment: ${Object.entries(plan.order_summary.trials_per_treatment)
      .map(([treatment, count]) => `${treatment} ${count}`)
      .join(", ")}${plan.order_summary.warmup_trials > 0 ? ` (+${plan.order_summary.warmup_trials} warm-up)` : ""}`,
    ...plan.warnings.map((warning) => `  warning: ${warning}`),
  ].join("\n");
}

export const experimentCommand = defineCommand({
  meta: { name: "experiment", description: "Declared experiments: randomized complete blocks of captures, compared with statistics." },
  subCommands: {
    configure: defineCommand({
      meta: {
        name: "configure",
        description:
          "Declare or replace [experiments.NAME] in flameox.toml from configure_experiment's fields (validated, atomic, comments kept); runs nothing.",
      },
      args: {
        name: { type: "positional", required: true, description: "Experiment name." },
        definition: {
          type: "positional",
          required: true,
          description: 'JSON or @file.json: {"workload": "bench", "factors": {"variant": ["base", "candidate"]}, "blocks": 10, …}.',
        },
        operation: { type: "string", default: "create", description: "create | replace" },
        "expected-configuration-id": { type: "string", description: "Required for replace: the current configuration_id." },
      },
      async run({ args }) {
        const fields = parseStructuredInput(args.definition as string, "definition");
        const expected = args["expected-configuration-id"] as string | undefined;
        const request = { ...fields, name: String(args.name), operation: String(args.operation ?? "create") };
        const input = checkedRequest(
          ConfigureExperimentInputSchema,
          expected === undefined ? request : { ...request, expected_configuration_id: expected },
          "experiment configure",
        );
        const result = await cliServices().workloads.configureExperiment(input);
        emit(
          cliOptions(),
          result,
          () =>
            `experiment '${result.name}' ${result.action} (workload ${result.workload_name}, configuration ${result.configuration_id}); next: flameox experiment plan ${result.name}`,
        );
      },
    }),
    plan: defineCommand({
      meta: { name: "plan", description: "Realize the seeded block order and check every trial's parameters; runs nothing." },
      args: planArguments,
      async run({ args }) {
        const plan = await cliServices().experiments.plan(planRequest(args));
        emit(cliOptions(), plan, () => renderPlan(plan));
      },
    }),
    run: defineCommand({
      meta: {
        name: "run",
        description:
          "Plan, then run every trial (progress on stderr); failed and timed-out trials are recorded and the experiment goes on.",
      },
      args: planArguments,
      async run({ args }) {
        const services = cliServices();
        const options = cliOptions();
        const log = cliLog(options);
        const plan = await services.experiments.plan(planRequest(args));
        if (!options.json) log.info(renderPlan(plan));
        await withInterrupt(async (signal) => {
          const receipt = await services.experiments.run(plan.plan_id, {
            signal,
            progress: (step, total, message) => log.info(`[${Math.floor(step)}/${total}] ${message}`),
          });
          emit(options, receipt, () =>
            [
              renderKeyValues(receipt, [
                "experiment_id",
                "status",
                "planned_trials",
                "attempted_trials",
                "first_failure_trial_id",
                "comparison_id",
              ]),
              `counts: ${Object.entries(receipt.counts)
                .filter(([, count]) => count > 0)
                .map(([outcome, count]) => `${outcome}=${count}`)
                .join(" ")}`,
              ...receipt.run_sets.map((entry) => `run set ${entry.treatment}: ${entry.run_set_id}`),
              ...(receipt.comparison
                ? [
                    `comparison: ${receipt.comparison.decision} (${receipt.comparison.validity}), ratio ${receipt.comparison.estimate?.toFixed(4) ?? "-"}${
                      receipt.comparison.ci
                        ? ` [${receipt.comparison.ci.lower.toFixed(4)}, ${receipt.comparison.ci.upper.toFixed(4)}] at ${receipt.comparison.ci.level}`
                        : ""
                    }`,
                  ]
                : []),
              ...receipt.limitations.map((limitation) => `limitation: ${limitation}`),
            ].join("\n"),
          );
        });
      },
    }),
    show: defineCommand({
      meta: { name: "show", description: "Show an experiment's protocol, counts, run sets and comparison." },
      args: { experiment_id: { type: "positional", required: true, description: "Experiment id." } },
      run({ args }) {
        const experiment = cliServices().experiments.getExperiment(String(args.experiment_id));
        emit(cliOptions(), experiment, () =>
          [
            renderKeyValues(experiment, [
              "experiment_id",
              "name",
              "status",
              "workload_name",
              "adapter",
              "design",
              "blocks",
              "treatment_factor",
              "treatments",
              "random_seed",
              "planned_trials",
              "comparison_id",
              "first_failure_trial_id",
            ]),
            `counts: ${Object.entries(experiment.counts)
              .filter(([, count]) => count > 0)
              .map(([outcome, count]) => `${outcome}=${count}`)
              .join(" ")}`,
            ...experiment.run_sets.map((entry) => `run set ${entry.treatment}: ${entry.run_set_id}`),
          ].join("\n"),
        );
      },
    }),
    trials: defineCommand({
      meta: { name: "trials", description: "List an experiment's trials in realized order." },
      args: {
        experiment_id: { type: "positional", required: true, description: "Experiment id." },
        ...pageArguments(pageLimits.trials, cliTrialPage),
        outcome: { type: "string", description: "Only trials with this outcome." },
      },
      run({ args }) {
        const request = checkedRequest(
          ListTrialsRequest,
          { experiment_id: String(args.experiment_id), ...pageOf(args, pageLimits.trials, cliTrialPage), outcome: args.outcome },
          "experiment trials",
        );
        const result = cliServices().experiments.listTrials(request);
        emit(
          cliOptions(),
          result,
          () =>
            `${renderTable(result.trials, ["trial_id", "block_id", "treatment", "outcome", "failure_class", "validation_status", "run_id"])}${result.truncated ? `\n(more: --cursor ${result.next_cursor})` : ""}`,
        );
      },
    }),
    trial: defineCommand({
      meta: { name: "trial", description: "Show one trial with its run, outcome and oracle receipt." },
      args: {
        trial_id: { type: "positional", required: true, description: "Trial id." },
        "experiment-id": { type: "string", description: "Experiment the trial belongs to." },
      },
      run({ args }) {
        const trial = cliServices().experiments.getTrial(String(args.trial_id), (args["experiment-id"] as string | undefined) ?? null);
        emit(cliOptions(), trial, () =>
          renderKeyValues(trial, [
            "trial_id",
            "experiment_id",
            "block_id",
            "order_in_block",
            "treatment",
            "parameters",
            "run_id",
            "outcome",
            "failure_class",
            "execution_status",
            "validation_status",
            "oracle",
          ]),
        );
      },
    }),
  },
});
