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
      return { result };
    },
  }),
  defineTool({
    name: "workspace_status",
    description: "Workspace identity, counts, storage; closes runs of dead processes. Call first.",
    input: NoArgumentsRequest,
    annotations: readOnly,
    async handler(_input, { services }) {
      const result = await services.workspaces.describe();
      return { result };
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
      return { result };
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
      return { result };
    },
  }),
  defineTool({
    name: "validate_workspace",
    description: "Check database, flameox.toml, artifacts, evidence; read-only. `flameox repair` applies its repair_plan_id.",
    input: ValidateWorkspaceRequest,
    annotations: readOnly,
    async handler(input, { services }) {
      const result = await services.workspaces.validate({ mode: input.mode });
      return { result };
    },
  }),
  defineTool({
    name: "list_capabilities",
    description: "Capture adapters: status, options, setup or remedy. Next: plan_capture.",
    input: ListCapabilitiesRequest,
    annotations: readOnly,
    async handler(input, { services }) {
      const result = await services.capabilities.list(input);
      return { result };
    },
  }),
];
