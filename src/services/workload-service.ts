import { digestOf } from "../domain/canonical-json.ts";
import {
  environmentRefused,
  FlameoxError,
  internalError,
  invalidConfiguration,
  staleInput,
  undeclared,
  workspaceInvalid,
} from "../domain/errors.ts";
import { refusedEnvironmentEntries } from "../exec/environment-policy.ts";
import { readProjectConfig, workloadDefinitionId, type ProjectConfigRead } from "../config/project-config.ts";
import { planWorkloadEdit, writeProjectConfigAtomically } from "../config/workload-edit.ts";
import { experimentDefinitionId, planExperimentEdit } from "../config/experiment-edit.ts";
import { type ConfigureExperimentInput, experimentDefinitionFromInput } from "../config/experiment-edit-input.ts";
import { withWorkspaceLock } from "../store/workspace-lock.ts";
import {
  workloadDefinitionFromInput,
  type ConfigureWorkloadInput,
  type ProjectConfig,
  type WorkloadConfig,
} from "../config/project-config-schema.ts";
import { adapterDescriptors } from "../adapters/registry.ts";
import type { CapabilityService } from "./capability-service.ts";
import { displayArgv } from "./host-paths.ts";
import type { WorkspaceHandle } from "../store/workspace-handle.ts";
import type * as v from "valibot";
import type {
  ExperimentConfigurationResultSchema,
  WorkloadConfigurationResultSchema,
  WorkloadConfigurationStatusSchema,
} from "../domain/results/workloads.ts";
import { keysetPage, resumeAfter } from "./keyset-page.ts";

export type WorkloadConfigurationStatus = v.InferOutput<typeof WorkloadConfigurationStatusSchema>;
export type WorkloadConfigurationResult = v.InferOutput<typeof WorkloadConfigurationResultSchema>;

export type ExperimentConfigurationResult = v.InferOutput<typeof ExperimentConfigurationResultSchema>;

export type WorkflowKind = "workload" | "experiment";

export type DeclaredWorkflowSummary = {
  kind: WorkflowKind;
  name: string;
  definition_id: string;
  parameter_names: string[];
  timeout_seconds: number | null;
  workload_name: string | null;
};

export type DeclaredWorkflowList = {
  schema_version: 1;
  configuration_id: string;
  kind: WorkflowKind;
  workflows: DeclaredWorkflowSummary[];
  total: number;
  returned: number;
  truncated: boolean;
  next_cursor: string | null;
};

export class WorkloadService {
  constructor(
    private readonly workspace: WorkspaceHandle,
    private readonly capabilities: CapabilityService,
  ) {}

  async configurationStatus(): Promise<WorkloadConfigurationStatus> {
    this.workspace.open();
    const state = await readProjectConfig(this.workspace.projectRoot);
    const workloadNames = state.config ? Object.keys(state.config.workloads ?? {}).sort() : [];
    let diagnostics = state.diagnostics;
    let nextTool: WorkloadConfigurationStatus["next_tool"] = "configure_workload";
    if (state.status === "missing") diagnostics = ["No named workload configuration exists yet."];
    else if (state.status === "valid" && workloadNames.length === 0) diagnostics = ["No named workloads are declared yet."];
    else if (state.status === "valid") nextTool = "list_declared_workflows";
    return {
      schema_version: 1,
      status: state.status,
      config_path: "flameox.toml",
      configuration_id: state.configurationId,
      workload_names: workloadNames,
      diagnostics,
      next_tool: nextTool,
    };
  }

  /** Validates the whole resulting file, writes it atomically under the workspace lock, runs nothing. */
  async configure(input: ConfigureWorkloadInput): Promise<WorkloadConfigurationResult> {
    const workspace = this.workspace.open();
    const refused = refusedEnvironmentEntries(input.environment ?? {});
    if (refused.length > 0) {
      const names = new Set(refused.map((entry) => entry.name));
      const environment = Object.fromEntries(Object.entries(input.environment ?? {}).filter(([name]) => !names.has(name)));
      const retry = Object.fromEntries(Object.entries({ ...input, environment }).filter(([, value]) => value !== undefined));
      throw environmentRefused(input.name, refused, retry);
    }
    return withWorkspaceLock(workspace, async () => {
      const current = await readProjectConfig(this.workspace.projectRoot);
      const definition = workloadDefinitionFromInput(input);
      const edit = withCreateRecovery(input, () =>
        planWorkloadEdit({
          currentText: current.text ?? null,
          name: input.name,
          definition,
          operation: input.operation,
          expectedConfigurationId: input.expected_configuration_id ?? null,
        }),
      );
      if (edit.action !== "unchanged") {
        await writeProjectConfigAtomically(this.workspace.projectRoot, edit.text, current.configurationId);
      }
      const after = await readProjectConfig(this.workspace.projectRoot);
      const workload = after.config?.workloads?.[input.name];
      if (!workload)
        throw internalError("The written workload could not be read back.", { remediation: ["Call workload_configuration_status."] });
      return {
        schema_version: 1 as const,
        action: edit.action,
        name: input.name,
        configuration_id: after.configurationId!,
        workload_definition_id: workloadDefinitionId(input.name, workload),
        configuration_source: "agent" as const,
        changed_paths: edit.action === "unchanged" ? [] : ["flameox.toml"],
        next_tool: "list_declared_workflows" as const,
      };
    });
  }

  /** configure_experiment: the same validated, atomic, comment-preserving edit, of one [experiments.<name>] table. */
  async configureExperiment(input: ConfigureExperimentInput): Promise<ExperimentConfigurationResult> {
    const workspace = this.workspace.open();
    return withWorkspaceLock(workspace, async () => {
      const current = await readProjectConfig(this.workspace.projectRoot);
      const edit = planExperimentEdit({
        currentText: current.text ?? null,
        name: input.name,
        definition: experimentDefinitionFromInput(input),
        operation: input.operation,
        expectedConfigurationId: input.expected_configuration_id ?? null,
      });
      if (edit.action !== "unchanged") {
        await writeProjectConfigAtomically(this.workspace.projectRoot, edit.text, current.configurationId);
      }
      const after = await readProjectConfig(this.workspace.projectRoot);
      const experiment = after.config?.experiments?.[input.name];
      if (!experiment)
        throw internalError("The written experiment could not be read back.", { remediation: ["Call workload_configuration_status."] });
      return {
        schema_version: 1 as const,
        action: edit.action,
        name: input.name,
        workload_name: experiment.workload,
        configuration_id: after.configurationId!,
        experiment_definition_id: experimentDefinitionId(input.name, experiment),
        configuration_source: "agent" as const,
        changed_paths: edit.action === "unchanged" ? [] : ["flameox.toml"],
        next_tool: "plan_experiment" as const,
      };
    });
  }

  /** The valid project configuration, or the typed error that tells an agent how to get one. */
  async requireConfig(): Promise<{ state: ProjectConfigRead; config: ProjectConfig }> {
    this.workspace.open();
    const state = await readProjectConfig(this.workspace.projectRoot);
    if (state.status === "missing") {
      throw workspaceInvalid("flameox.toml does not exist yet, so no workload is declared.", {
        details: { next_tool: "configure_workload", config_path: "flameox.toml" },
        remediation: ["Call configure_workload with operation='create' to declare a named workload."],
        next: { tool: "configure_workload", arguments: { operation: "create" }, callerSupplies: ["name", "argv"] },
      });
    }
    if (state.status === "invalid" || !state.config) {
      throw invalidConfiguration(`flameox.toml is invalid: ${state.diagnostics[0] ?? "unknown problem"}`, {
        repairable: true,
        details: { config_path: "flameox.toml", diagnostics: state.diagnostics },
        remediation: [
          "Fix flameox.toml by hand, or call configure_workload(operation='create') with a definition that makes the whole file valid.",
        ],
      });
    }
    return { state, config: state.config };
  }

  async requireWorkload(name: string): Promise<{ workload: WorkloadConfig; definitionId: string; configurationId: string }> {
    const { state, config } = await this.requireConfig();
    const workload = config.workloads?.[name];
    if (!workload) {
      throw undeclared("workload", name, {
        declared: Object.keys(config.workloads ?? {}),
        remediation: ["Call list_declared_workflows to see the declared workloads, or configure_workload to declare it."],
      });
    }
    return { workload, definitionId: workloadDefinitionId(name, workload), configurationId: state.configurationId! };
  }

  async listDeclared(request: { kind: WorkflowKind; limit: number; cursor: string | null }): Promise<DeclaredWorkflowList> {
    const { state, config } = await this.requireConfig();
    const configurationId = state.configurationId!;
    const all = this.summaries(config, request.kind);
    const scope = digestOf({ query: "list_declared_workflows", kind: request.kind, limit: request.limit });
    const binding = { secret: this.workspace.open().cursorSecret(), scope, snapshot: configurationId };
    const after = resumeAfter<string>(binding, request.cursor);
    const remaining = after === null ? all : all.filter((workflow) => workflow.name > after);
    const { page, fields } = keysetPage(binding, remaining, all.length, request.limit, (last) => last.name);
    return {
      schema_version: 1,
      configuration_id: configurationId,
      kind: request.kind,
      workflows: page,
      ...fields,
    };
  }

  private summaries(config: ProjectConfig, kind: WorkflowKind): DeclaredWorkflowSummary[] {
    if (kind === "workload") {
      return Object.entries(config.workloads ?? {})
        .map(([name, workload]) => ({
          kind,
          name,
          definition_id: workloadDefinitionId(name, workload),
          parameter_names: Object.keys(workload.parameters ?? {}).sort(),
          timeout_seconds: workload.timeout_seconds,
          workload_name: null,
        }))
        .sort((left, right) => (left.name < right.name ? -1 : 1));
    }
    return Object.entries(config.experiments ?? {})
      .map(([name, experiment]) => ({
        kind,
        name,
        definition_id: experimentDefinitionId(name, experiment),
        parameter_names: Object.keys((experiment as { factors?: Record<string, unknown> }).factors ?? {}).sort(),
        timeout_seconds: null,
        workload_name: (experiment as { workload?: string }).workload ?? null,
      }))
      .sort((left, right) => (left.name < right.name ? -1 : 1));
  }

  async getDeclared(request: { kind: WorkflowKind; name: string }): Promise<Record<string, unknown>> {
    const { state, config } = await this.requireConfig();
    if (request.kind === "experiment") {
      const experiment = config.experiments?.[request.name];
      if (!experiment) throw unknownWorkflow(request.kind, request.name);
      return {
        schema_version: 1,
        configuration_id: state.configurationId,
        kind: "experiment",
        name: request.name,
        definition_id: experimentDefinitionId(request.name, experiment),
        summary: `Experiment '${request.name}' over workload '${(experiment as { workload?: string }).workload ?? "?"}'.`,
        definition: experiment,
      };
    }
    const workload = config.workloads?.[request.name];
    if (!workload) throw unknownWorkflow(request.kind, request.name);
    const requirements = requirementList(workload);
    // One short row per adapter: what decides whether plan_capture can use it now, and its option names.
    // list_capabilities(adapter=…) has the features, formats and limitations.
    const options = adapterDescriptors.map((descriptor) => {
      const report = this.capabilities.knownReport(descriptor);
      // "unknown" is what plan_capture's default preflight (auto) settles before anything runs, so the
      // adapter is ready to plan: an agent is never steered away from one the plan would accept.
      const disposition = report.status === "available" || report.status === "unknown" ? "ready" : "unavailable";
      return {
        adapter: descriptor.name,
        capability_status: report.status,
        planning_disposition: disposition,
        required_preflight_mode: report.status === "unknown" ? "auto" : "passive",
        permission_status: report.permission_status,
        option_names: Object.keys(report.options),
        remedy: disposition === "unavailable" ? (report.remediation[0] ?? null) : null,
      };
    });
    const projectRoot = this.workspace.projectRoot;
    const argv = displayArgv(workload.argv, projectRoot);
    return {
      schema_version: 1,
      configuration_id: state.configurationId,
      kind: "workload",
      name: request.name,
      definition_id: workloadDefinitionId(request.name, workload),
      summary: `Workload '${request.name}': ${argv.join(" ")} (cwd ${workload.cwd}, timeout ${workload.timeout_seconds}s).`,
      definition: { ...workload, argv },
      allowed_parameters: workload.parameters ?? {},
      requirements,
      adapter_options: options.slice(0, 64),
      adapter_option_total: options.length,
      adapter_options_total: options.length,
      adapter_options_truncated: options.length > 64,
      adapter_details_tool: "list_capabilities",
      next_tool: "plan_capture",
    };
  }
}

/**
 * Replacing a workload that is not declared is refused with the call that declares it instead: the same
 * definition with operation 'create' (the refusal itself cannot know the caller's definition).
 */
function withCreateRecovery<T>(input: ConfigureWorkloadInput, plan: () => T): T {
  try {
    return plan();
  } catch (error) {
    if (!(error instanceof FlameoxError) || error.code !== "REVISION_CONFLICT" || input.operation !== "replace") throw error;
    if (error.nextTool !== "configure_workload" || error.nextArguments !== null) throw error;
    const { expected_configuration_id: _expected, ...definition } = input;
    const args = Object.fromEntries(Object.entries({ ...definition, operation: "create" }).filter(([, value]) => value !== undefined));
    throw staleInput(error.message, {
      details: error.details,
      remediation: error.remediation,
      fresh: { tool: "configure_workload", arguments: args },
    });
  }
}

function unknownWorkflow(kind: WorkflowKind, name: string): FlameoxError {
  return undeclared(kind, name);
}

function requirementList(workload: WorkloadConfig): { name: string; kind: string; required: boolean; probe_kind: "passive" | "active" }[] {
  const requirements = (workload.requirements ?? {}) as {
    executables?: string[];
    python_distributions?: string[];
    capabilities?: string[];
  };
  return [
    ...(requirements.executables ?? []).map((name) => ({ name, kind: "executable", required: true, probe_kind: "passive" as const })),
    ...(requirements.python_distributions ?? []).map((name) => ({
      name,
      kind: "python_distribution",
      required: true,
      probe_kind: "active" as const,
    })),
    ...(requirements.capabilities ?? []).map((name) => ({ name, kind: "capability", required: true, probe_kind: "active" as const })),
  ];
}

/** The configure_* input schemas live with the flameox.toml schema; transports take them from here. */
export { ConfigureWorkloadInputSchema } from "../config/project-config-schema.ts";
export { ConfigureExperimentInputSchema } from "../config/experiment-edit-input.ts";
