import * as v from "valibot";
import { ConfigureWorkloadInputSchema } from "../../services/workload-service.ts";
import { configure, readOnly } from "../annotations.ts";
import { defineTool } from "../define-tool.ts";

const noArguments = v.strictObject({});

export const workspaceTools = [
  defineTool({
    name: "initialize_workspace",
    description:
      "Create the flameox workspace (.diagnostics) under the server's fixed project root. Additive and idempotent: an existing workspace is kept and its status returned. Call it only after workspace_status reported WORKSPACE_NOT_FOUND; it never configures workloads (use configure_workload next).",
    input: noArguments,
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
      "Report the workspace bound to this server: identity, corpus commit, run and artifact counts, storage and active captures. Call this first; WORKSPACE_NOT_FOUND means call initialize_workspace.",
    input: noArguments,
    annotations: readOnly,
    async handler(_input, { services }) {
      const result = await services.workspaces.status();
      return { result, text: `Workspace is at ${result.corpus_commit_id}.` };
    },
  }),
  defineTool({
    name: "workload_configuration_status",
    description:
      "Report whether the project's flameox.toml is missing, valid or invalid, with its configuration_id (needed for configure_workload operation='replace'), the declared workload names, diagnostics, and next_tool. Never fails on a malformed file: it reports status 'invalid'.",
    input: noArguments,
    annotations: readOnly,
    async handler(_input, { services }) {
      const result = await services.workloads.configurationStatus();
      return { result, text: `Workload configuration status: ${result.status}.` };
    },
  }),
  defineTool({
    name: "configure_workload",
    description:
      "Declare or replace a named workload in flameox.toml: argv is an argument array (no shell), cwd is project-relative, parameters are bounded choices referenced as {name} in argv/cwd/environment. operation='create' adds it (idempotent for an identical definition); operation='replace' needs expected_configuration_id from workload_configuration_status. The whole file is validated, comments and other tables are preserved byte-for-byte, and the write is atomic. It never executes the command; call list_declared_workflows next.",
    input: ConfigureWorkloadInputSchema,
    annotations: configure,
    async handler(input, { services }) {
      const result = await services.workloads.configure(input);
      return { result, text: `Workload '${result.name}' is ${result.action}; call list_declared_workflows next.` };
    },
  }),
  defineTool({
    name: "validate_workspace",
    description:
      "Check the workspace (identity, control-plane database, flameox.toml, evidence files, and with mode='full' every artifact's sha256). Read-only: it never repairs; repairs are an explicit CLI action.",
    input: v.strictObject({ mode: v.optional(v.picklist(["standard", "full"]), "standard") }),
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
      "List capture adapters (command, py-spy, perf, pyperf, pytest, coverage, memray, torch.profiler, …) with status, version, permissions, features, adapter options and the exact remedy when unavailable. mode='passive' (default) only inspects the file system; 'active_refresh' runs bounded version and permission probes; 'active_cached' reuses them. Pass adapter to scope the report before plan_capture.",
    input: v.strictObject({
      mode: v.optional(v.picklist(["passive", "active_cached", "active_refresh"]), "passive"),
      adapter: v.optional(v.nullable(v.pipe(v.string(), v.minLength(1), v.maxLength(100))), null),
    }),
    annotations: readOnly,
    async handler(input, { services }) {
      const result = await services.capabilities.list({ mode: input.mode, adapter: input.adapter ?? null });
      return { result, text: `Found ${result.available_count} of ${result.total} available capabilities.` };
    },
  }),
];
