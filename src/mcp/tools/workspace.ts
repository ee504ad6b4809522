import { ListCapabilitiesRequest, NoArgumentsRequest, ValidateWorkspaceRequest } from "../../domain/requests/workspace.ts";
import { ConfigureWorkloadInputSchema } from "../../services/workload-service.ts";
import { WorkloadConfigurationResultSchema, WorkloadConfigurationStatusSchema } from "../../domain/results/workloads.ts";
import { configure, readOnly } from "../annotations.ts";
import { defineTool } from "../define-tool.ts";

export const workspaceTools = [
  defineTool({
    name: "initialize_workspace",
    description: "Create the workspace when workspace_status says WORKSPACE_NOT_FOUND. Next: configure_workload.",
    input: NoArgumentsRequest,
    annotations: configure,
    async handler(_input, { services }) {
      const result = await services.workspaces.initialize();
      return {
        result,
        text: result.created
          ? `Initialized workspace ${result.workspace_id}.`
          : `Workspace is already initialized: ${result.workspace_id}.`,
      };
    },
  }),
  defineTool({
    name: "workspace_status",
    description:
      "Workspace identity, counts and storage; closes runs whose flameox process died (see warnings). Call first; workspace_found false means initialize_workspace.",
    input: NoArgumentsRequest,
    annotations: readOnly,
    async handler(_input, { services }) {
      const result = await services.workspaces.describe();
      return {
        result,
        text: result.workspace_found
          ? `Workspace is at ${result.corpus_commit_id}.`
          : "No workspace yet (WORKSPACE_NOT_FOUND): call initialize_workspace next.",
      };
    },
  }),
  defineTool({
    name: "workload_configuration_status",
    description: "Whether flameox.toml is missing, valid or invalid, and its configuration_id. Next: its next_tool.",
    input: NoArgumentsRequest,
    output: WorkloadConfigurationStatusSchema,
    annotations: readOnly,
    async handler(_input, { services }) {
      const result = await services.workloads.configurationStatus();
      return { result, text: `Workload configuration status: ${result.status}.` };
    },
  }),
  defineTool({
    name: "configure_workload",
    description: "Declare or replace a workload in flameox.toml; never runs it. Next: list_declared_workflows.",
    input: ConfigureWorkloadInputSchema,
    output: WorkloadConfigurationResultSchema,
    annotations: configure,
    async handler(input, { services }) {
      const result = await services.workloads.configure(input);
      return { result, text: `Workload '${result.name}' is ${result.action}; call list_declared_workflows next.` };
    },
  }),
  defineTool({
    name: "validate_workspace",
    description:
      "Check the database, flameox.toml, artifacts (size; sha256 with mode=full), evidence and leftovers of dead processes. Read-only; repair_plan_id names the plan `flameox repair` applies.",
    input: ValidateWorkspaceRequest,
    annotations: readOnly,
    async handler(input, { services }) {
      const result = await services.workspaces.validate({ mode: input.mode });
      return {
        result,
        text: result.valid ? "Workspace validation passed." : `Workspace validation failed with ${result.issues.length} reported issues.`,
      };
    },
  }),
  defineTool({
    name: "list_capabilities",
    description:
      "Capture adapters: status, permissions, options, setup or remedy; plan_capture probes 'unknown' itself. Next: plan_capture.",
    input: ListCapabilitiesRequest,
    annotations: readOnly,
    async handler(input, { services }) {
      const result = await services.capabilities.list(input);
      return { result, text: `Found ${result.available_count} of ${result.total} available capabilities.` };
    },
  }),
];
