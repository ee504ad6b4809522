import {
  CapabilitySetupRequest,
  PrepareAdapterRequest,
  PrepareCapabilitiesRequest,
  PrepareWorkloadDependenciesRequest,
  StartCapabilitySetupRequest,
} from "../../domain/requests/providers.ts";
import {
  AdapterPreparationResultSchema,
  OperationStatusSchema,
  WorkloadDependencySetupResultSchema,
} from "../../domain/results/providers.ts";
import { configure, readOnly } from "../annotations.ts";
import { defineTool } from "../define-tool.ts";

export const providerTools = [
  defineTool({
    name: "start_capability_setup",
    description: "Install setup_adapters as managed providers. Next: get_capability_setup.",
    input: StartCapabilitySetupRequest,
    output: OperationStatusSchema,
    annotations: configure,
    async handler(input, { services }) {
      const result = await services.capabilitySetups.start(input);
      return { result };
    },
  }),
  defineTool({
    name: "get_capability_setup",
    description: "Poll a setup operation: state, progress, outcomes. When done: list_capabilities.",
    input: CapabilitySetupRequest,
    output: OperationStatusSchema,
    annotations: readOnly,
    async handler(input, { services }) {
      const result = services.capabilitySetups.status(input.operation_id);
      return { result };
    },
  }),
  defineTool({
    name: "cancel_capability_setup",
    description: "Cancel a running setup: stops its installer, removes what it staged.",
    input: CapabilitySetupRequest,
    output: OperationStatusSchema,
    annotations: configure,
    async handler(input, { services }) {
      const result = await services.capabilitySetups.cancel(input.operation_id);
      return { result };
    },
  }),
  defineTool({
    name: "prepare_capabilities",
    description: "start_capability_setup without idempotency_key (older clients). Next: get_capability_setup.",
    input: PrepareCapabilitiesRequest,
    output: OperationStatusSchema,
    annotations: configure,
    async handler(input, { services }) {
      const result = await services.capabilitySetups.prepare(input);
      return { result };
    },
  }),
  defineTool({
    name: "prepare_adapter",
    description: "Approve an adapter from setup_third_party_adapters. Next: list_capabilities.",
    input: PrepareAdapterRequest,
    output: AdapterPreparationResultSchema,
    annotations: configure,
    async handler(input, { services }) {
      const result = await services.adapterApprovals.prepare(input);
      return { result };
    },
  }),
  defineTool({
    name: "prepare_workload_dependencies",
    description: "Which declared Python distributions the workload lacks; installs nothing.",
    input: PrepareWorkloadDependenciesRequest,
    output: WorkloadDependencySetupResultSchema,
    annotations: readOnly,
    async handler(input, { services }) {
      const result = await services.workloadDependencies.inspect(input.workload_name);
      return { result };
    },
  }),
];
