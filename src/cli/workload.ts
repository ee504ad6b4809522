import { defineCommand } from "citty";
import { cliOptions, cliServices } from "./context.ts";
import { emit, renderTable } from "./output.ts";
import { planAndRun } from "./capture.ts";
import { parseStructuredInput } from "./structured-input.ts";
import { pageLimits } from "../domain/requests/limits.ts";
import { pageArguments, pageOf } from "./arguments.ts";

// A person's listing shows a whole page of the most the tool allows.
const cliWorkflowPage = pageLimits.declaredWorkflows.maximum;

export const workloadCommand = defineCommand({
  meta: { name: "workload", description: "Named workloads declared in flameox.toml." },
  subCommands: {
    list: defineCommand({
      meta: { name: "list", description: "List declared workloads (or experiments with --kind experiment)." },
      args: {
        kind: { type: "string", default: "workload", description: "workload | experiment" },
        ...pageArguments(pageLimits.declaredWorkflows, cliWorkflowPage),
      },
      async run({ args }) {
        const kind = args.kind === "experiment" ? "experiment" : "workload";
        const result = await cliServices().workloads.listDeclared({ kind, ...pageOf(args, pageLimits.declaredWorkflows, cliWorkflowPage) });
        emit(
          cliOptions(),
          result,
          () =>
            `${renderTable(
              result.workflows.map((workflow) => ({ ...workflow, parameters: workflow.parameter_names.join(",") })),
              ["name", "parameters", "timeout_seconds", "definition_id"],
            )}${result.truncated ? `\n(more: --cursor ${result.next_cursor})` : ""}`,
        );
      },
    }),
    show: defineCommand({
      meta: { name: "show", description: "Show one workload: definition, parameters, requirements and adapter options." },
      args: {
        name: { type: "positional", required: true, description: "Workload name." },
        kind: { type: "string", default: "workload", description: "workload | experiment" },
      },
      async run({ args }) {
        const kind = args.kind === "experiment" ? "experiment" : "workload";
        const result = await cliServices().workloads.getDeclared({ kind, name: args.name as string });
        emit(cliOptions(), result, () => {
          const lines = [String(result.summary), `definition_id: ${String(result.definition_id)}`];
          const options = (result.adapter_options ?? []) as { adapter: string; planning_disposition: string; remediation: string[] }[];
          if (options.length > 0) {
            lines.push(
              "",
              renderTable(
                options.map((option) => ({ ...option, remedy: option.remediation[0] ?? "" })),
                ["adapter", "planning_disposition", "remedy"],
              ),
            );
          }
          return lines.join("\n");
        });
      },
    }),
    run: defineCommand({
      meta: {
        name: "run",
        description: "Run a declared workload once with no profiler (the command adapter): outcome, output and runtime resources.",
      },
      args: {
        name: { type: "positional", required: true, description: "Workload name." },
        parameters: { type: "string", description: "Parameter overrides as a JSON object or @file.json." },
      },
      async run({ args }) {
        await planAndRun({
          workload_name: String(args.name),
          adapter: "command",
          parameters: parseStructuredInput(args.parameters as string | undefined, "--parameters") as Record<
            string,
            string | number | boolean
          >,
          adapter_options: {},
          preflight_mode: "auto",
          capture_mode: "auto",
        });
      },
    }),
  },
});
