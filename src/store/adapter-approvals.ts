import { existsSync, readFileSync } from "node:fs";
import { workspaceInvalid } from "../domain/errors.ts";
import { writeFileAtomically } from "./atomic-file.ts";
import type { Workspace } from "./workspace.ts";

/** One approved third-party distribution: valid only while its version and package identity are unchanged. */
export type AdapterApproval = {
  schema_version: 1;
  distribution: string;
  version: string;
  package_identity: string;
  adapters: string[];
  provenance: "agent" | "cli";
  approved_at: string;
};

export type AdapterApprovals = { schema_version: 1; approvals: Record<string, AdapterApproval> };

export const adapterApprovalsFile = "adapter-approvals.json";

/** The workspace's approvals (`.diagnostics/adapter-approvals.json`); none yet is an empty set. */
export function readAdapterApprovals(workspace: Workspace): AdapterApprovals {
  const path = workspace.path(adapterApprovalsFile);
  if (!existsSync(path)) return { schema_version: 1, approvals: {} };
  try {
    const parsed = JSON.parse(readFileSync(path, "utf8")) as AdapterApprovals;
    if (parsed.schema_version !== 1 || typeof parsed.approvals !== "object" || parsed.approvals === null) throw new Error("bad shape");
    return parsed;
  } catch {
    throw workspaceInvalid(`.diagnostics/${adapterApprovalsFile} is not a valid approvals file.`, {
      remediation: [`Delete .diagnostics/${adapterApprovalsFile} (approvals are then given again with prepare_adapter).`],
    });
  }
}

/** Written whole and atomically; callers hold the workspace lock around read-modify-write. */
export function writeAdapterApprovals(workspace: Workspace, approvals: AdapterApprovals): void {
  writeFileAtomically(workspace.path(adapterApprovalsFile), `${JSON.stringify(approvals, null, 2)}\n`);
}
