/** Requests of the workspace and discovery tools: status, validation, capabilities, declared workflows. */
import * as v from "valibot";
import { cursor, described, limit, name, nameText, optionalOrNull } from "./fields.ts";
import { pageLimits } from "./limits.ts";

export const NoArgumentsRequest = v.strictObject({});

export const ValidateWorkspaceRequest = v.strictObject({
  mode: v.optional(described(v.picklist(["standard", "full"]), "full re-hashes artifacts."), "standard"),
});

export const ListCapabilitiesRequest = v.strictObject({
  mode: v.optional(described(v.picklist(["passive", "active_cached", "active_refresh"]), "active_* run probes."), "passive"),
  adapter: optionalOrNull(name("Only this adapter.")),
});

export const workflowKinds = ["workload", "experiment"] as const;
const workflowKind = v.optional(described(v.picklist(workflowKinds), "Declaration kind."), "workload");

export const ListDeclaredWorkflowsRequest = v.strictObject({
  kind: workflowKind,
  limit: limit(pageLimits.declaredWorkflows),
  cursor,
});

export const GetDeclaredWorkflowRequest = v.strictObject({
  kind: workflowKind,
  name: described(nameText, "Its name."),
});
