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
    description:
      "Install managed providers named by list_capabilities' setup_adapters into versioned environments; returns a durable operation. Next: get_capability_setup.",
    input: StartCapabilitySetupRequest,
    output: OperationStatusSchema,
    annotations: configure,
    async handler(input, { services }) {
      const result = await services.capabilitySetups.start(input);
      return { result, text: `Started capability setup ${result.operation_id} (${result.state}).` };
    },
  }),
  defineTool({
    name: "get_capability_setup",
    description: "A setup operation's state, phase, progress and item outcomes. Poll until it ends; then list_capabilities.",
    input: CapabilitySetupRequest,
    output: OperationStatusSchema,
    annotations: readOnly,
    async handler(input, { services }) {
      const result = services.capabilitySetups.status(input.operation_id);
      return { result, text: `Capability setup ${result.operation_id} is ${result.state} (${result.phase}).` };
    },
  }),
  defineTool({
    name: "cancel_capability_setup",
    description: "Cancel a setup this server runs: stops the installer and removes what it staged.",
    input: CapabilitySetupRequest,
    output: OperationStatusSchema,
    annotations: configure,
    async handler(input, { services }) {
      const result = await services.capabilitySetups.cancel(input.operation_id);
      return { result, text: `Capability setup ${result.operation_id} is ${result.state}.` };
    },
  }),
  defineTool({
    name: "prepare_capabilities",
    description: "Older form of start_capability_setup without a key: each call starts a new operation. Next: get_capability_setup.",
    input: PrepareCapabilitiesRequest,
    output: OperationStatusSchema,
    annotations: configure,
    async handler(input, { services }) {
      const result = await services.capabilitySetups.prepare(input);
      return { result, text: `Started capability setup ${result.operation_id} (${result.state}).` };
    },
  }),
  defineTool({
    name: "prepare_adapter",
    description:
      "Approve a third-party adapter/distribution pair from list_capabilities, bound to its package identity. Next: list_capabilities.",
    input: PrepareAdapterRequest,
    output: AdapterPreparationResultSchema,
    annotations: configure,
    async handler(input, { services }) {
      const result = await services.adapterApprovals.prepare(input);
      return { result, text: `Prepared adapter '${result.adapter}' from '${result.distribution}'; call list_capabilities next.` };
    },
  }),
  defineTool({
    name: "prepare_workload_dependencies",
    description: "Which declared Python distributions the workload's interpreter has or lacks; changes nothing. Next: its next_tool.",
    input: PrepareWorkloadDependenciesRequest,
    output: WorkloadDependencySetupResultSchema,
    annotations: readOnly,
    async handler(input, { services }) {
      const result = await services.workloadDependencies.inspect(input.workload_name);
      return {
        result,
        text: result.ready
          ? `Dependencies of '${result.workload_name}' are installed; call plan_capture next.`
          : `'${result.workload_name}' lacks ${result.missing.join(", ")}; see remediation.`,
      };
    },
  }),
];
