import { GetDeclaredWorkflowRequest, ListDeclaredWorkflowsRequest } from "../../domain/requests/workspace.ts";
import { readOnly } from "../annotations.ts";
import { defineTool } from "../define-tool.ts";

export const discoveryTools = [
  defineTool({
    name: "list_declared_workflows",
    description: "Workloads or experiments declared in flameox.toml. Next: get_declared_workflow.",
    input: ListDeclaredWorkflowsRequest,
    annotations: readOnly,
    async handler(input, { services }) {
      const result = await services.workloads.listDeclared(input);
      return { result };
    },
  }),
  defineTool({
    name: "get_declared_workflow",
    description: "A workload or experiment: parameters, requirements, adapter readiness. Next: plan_capture.",
    input: GetDeclaredWorkflowRequest,
    annotations: readOnly,
    async handler(input, { services }) {
      const result = await services.workloads.getDeclared(input);
      return { result };
    },
  }),
];
