import { GetExperimentRequest, ListTrialsRequest, PlanExperimentRequest, RunExperimentRequest } from "../../domain/requests/experiments.ts";
import { ExperimentConfigurationResultSchema } from "../../domain/results/workloads.ts";
import { ConfigureExperimentInputSchema } from "../../services/workload-service.ts";
import { configure, execute, readOnly } from "../annotations.ts";
import { defineTool } from "../define-tool.ts";
import { evidenceResourceUri } from "../../domain/resource-uris.ts";

export const experimentTools = [
  defineTool({
    name: "configure_experiment",
    description: "Declare or replace an experiment in flameox.toml (configure_workload's twin; own name). Next: plan_experiment.",
    input: ConfigureExperimentInputSchema,
    output: ExperimentConfigurationResultSchema,
    annotations: configure,
    async handler(input, { services }) {
      const result = await services.workloads.configureExperiment(input);
      return { result };
    },
  }),
  defineTool({
    name: "plan_experiment",
    description: "Plan a declared experiment: seeded block order, detectable change. Next: run_experiment.",
    input: PlanExperimentRequest,
    annotations: readOnly,
    async handler(input, { services }) {
      const result = await services.experiments.plan(input);
      return { result };
    },
  }),
  defineTool({
    name: "run_experiment",
    description: "Run a plan's trials, freeze run sets per treatment, compare them. Next: next_tool.",
    input: RunExperimentRequest,
    annotations: execute,
    async handler(input, { services, signal, progress }) {
      const result = await services.experiments.run(input.plan_id, {
        signal,
        progress,
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
      return { result, links };
    },
  }),
  defineTool({
    name: "get_experiment",
    description: "An experiment's protocol, status, run sets, comparison. Next: list_experiment_trials.",
    input: GetExperimentRequest,
    annotations: readOnly,
    async handler(input, { services }) {
      const result = services.experiments.getExperiment(input.experiment_id);
      return {
        result,
        links: [{ uri: result.resource_uri, name: `Experiment ${result.experiment_id}`, description: "This experiment." }],
      };
    },
  }),
  defineTool({
    name: "list_experiment_trials",
    description: "An experiment's trials in realized order, with outcome and run_id. Next: get_run.",
    input: ListTrialsRequest,
    annotations: readOnly,
    async handler(input, { services }) {
      const result = services.experiments.listTrials(input);
      return { result };
    },
  }),
];
