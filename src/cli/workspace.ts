import { defineCommand } from "citty";
import { cliOptions, cliServices, cliServicesForInit } from "./context.ts";
import { emit, renderKeyValues, renderTable } from "./output.ts";
import { invalidRequest } from "../domain/errors.ts";

export const initCommand = defineCommand({
  meta: { name: "init", description: "Create the .diagnostics workspace for a project (additive, idempotent; never installs anything)." },
  args: {
    project: { type: "positional", required: false, description: "Project root (defaults to --project-root or the current folder)." },
  },
  async run({ args }) {
    const services = cliServicesForInit(args.project as string | undefined);
    const result = await services.workspaces.initialize();
    emit(
      cliOptions(),
      result,
      () =>
        `${result.created ? "Initialized" : "Already initialized"} workspace ${result.workspace_id}\n  project: ${result.project_root}\n  workspace: ${result.workspace_root}`,
    );
  },
});

export const statusCommand = defineCommand({
  meta: { name: "status", description: "Show the workspace's identity, corpus commit, runs, artifacts and storage." },
  async run() {
    const result = await cliServices().workspaces.status();
    emit(cliOptions(), result, () =>
      renderKeyValues(result, [
        "workspace_id",
        "project_root",
        "corpus_commit_id",
        "run_count",
        "artifact_object_count",
        "storage_bytes",
        "active_captures",
      ]),
    );
  },
});

export const capabilitiesCommand = defineCommand({
  meta: { name: "capabilities", description: "Discover installed profilers and tools, their versions, permissions and remedies." },
  args: {
    active: { type: "boolean", description: "Run bounded active probes (versions, permission checks) instead of passive discovery." },
    refresh: { type: "boolean", description: "Rerun active probes even when a cached probe exists." },
    adapter: { type: "string", description: "Limit the report to one adapter." },
  },
  async run({ args }) {
    const mode = args.refresh ? "active_refresh" : args.active ? "active_cached" : "passive";
    const result = await cliServices().capabilities.list({ mode, adapter: (args.adapter as string | undefined) ?? null });
    emit(cliOptions(), result, () =>
      renderTable(
        result.capabilities.map((capability) => ({
          ...capability,
          remedy: ("remedy" in capability ? capability.remedy : capability.remediation[0]) ?? "",
        })),
        ["adapter", "status", "version", "permission_status", "remedy"],
      ),
    );
  },
});

export const configCommand = defineCommand({
  meta: { name: "config", description: "Workspace policy (.diagnostics/config.toml)." },
  subCommands: {
    show: defineCommand({
      meta: { name: "show", description: "Print the effective workspace policy." },
      run() {
        const result = cliServices().workspaces.policy();
        emit(cliOptions(), result, () => JSON.stringify(result.policy, null, 2));
      },
    }),
  },
});

export const validateCommand = defineCommand({
  meta: {
    name: "validate",
    description:
      "Check the workspace, flameox.toml, stored artifacts (presence and size) and evidence, and find what dead processes left; never repairs. Exit 1 when invalid.",
  },
  args: { full: { type: "boolean", description: "Also rehash every stored artifact." } },
  async run({ args }) {
    const result = await cliServices().workspaces.validate({ mode: args.full ? "full" : "standard" });
    emit(cliOptions(), result, () =>
      [
        result.valid
          ? `Workspace is valid (${result.checked_artifacts} artifacts, ${result.checked_parquet_files} evidence files checked).`
          : "Workspace is invalid:",
        ...result.issues.map((issue) => `  ${issue.severity} ${issue.code}${issue.path ? ` ${issue.path}` : ""}: ${issue.message}`),
        result.repair_plan_id
          ? "flameox recover reclaims leftovers of dead processes; flameox repair previews a plan for every fixable issue."
          : "",
      ]
        .filter(Boolean)
        .join("\n"),
    );
    if (!result.valid) throw new NegativeResult();
  },
});

/** A completed command whose answer is "no" (exit 1) without an error document. */
export class NegativeResult extends Error {}

export function refuseWith(message: string, remedy: string): never {
  throw invalidRequest(message, { remediation: [remedy] });
}
