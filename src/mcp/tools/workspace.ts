import { ListCapabilitiesRequest, NoArgumentsRequest, ValidateWorkspaceRequest } from "../../domain/requests/workspace.ts";
import { ConfigureWorkloadInputSchema } from "../../services/workload-service.ts";
import { WorkloadConfigurationResultSchema, WorkloadConfigurationStatusSchema } from "../../domain/results/workloads.ts";
import { configure, readOnly } from "../annotations.ts";
import { defineTool } from "../define-tool.ts";

export const workspaceTools = [
  defineTool({
    name: "initialize_workspace",
    description: "Create the workspace (workspace_status: not found). Next: configure_workload.",
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
    description: "Workspace identity, counts, storage; closes runs of dead processes. Call first.",
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
    description: "Is flameox.toml missing, valid or invalid; its configuration_id. Next: next_tool.",
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
    description: "Declare or replace a workload in flameox.toml; runs nothing. Next: list_declared_workflows.",
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
    description: "Check database, flameox.toml, artifacts, evidence; read-only. `flameox repair` applies its repair_plan_id.",
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
    description: "Capture adapters: status, options, setup or remedy. Next: plan_capture.",
    input: ListCapabilitiesRequest,
    annotations: readOnly,
    async handler(input, { services }) {
      const result = await services.capabilities.list(input);
      return { result, text: `Found ${result.available_count} of ${result.total} available capabilities.` };
    },
  }),
];
