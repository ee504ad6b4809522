import { readProjectConfig } from "../config/project-config.ts";
import { loadWorkspacePolicy } from "../config/workspace-policy.ts";
import { digestOf } from "../domain/canonical-json.ts";
import { artifactIntegrity, type CheckedIssue, evidenceIntegrity, type IntegrityIssue, type RepairAction } from "../store/integrity.ts";
import { beyondQuarantineBounds, listQuarantine, quarantineBounds } from "../store/quarantine.ts";
import { listTrash } from "../store/trash.ts";
import { stateQuickCheck } from "../store/workspace-statistics.ts";
import type { WorkspaceHandle } from "../store/workspace-handle.ts";
import type { RecoveryService } from "./recovery-service.ts";

export type Inspection = { issues: CheckedIssue[]; checkedArtifacts: number; checkedParquetFiles: number };

/** How many leftovers validate lists one by one; the rest are summed up in one issue (the repair plan has them all). */
export const listedLeftovers = 20;

/**
 * Everything validate checks, read-only: the control plane, the policy and flameox.toml, every
 * registered artifact (present, its registered size, and with mode=full its sha256), every current
 * bundle's Parquet files, runs whose owner died, leftovers of dead processes, the quarantine's
 * bound and interrupted trash or quarantine moves. Each issue with a safe fix carries its repair.
 */
export async function inspectWorkspace(handle: WorkspaceHandle, recovery: RecoveryService, mode: "standard" | "full"): Promise<Inspection> {
  const workspace = handle.open();
  const issues: CheckedIssue[] = [];
  const integrity = stateQuickCheck(workspace.state.database);
  if (integrity.length !== 1 || integrity[0] !== "ok") {
    issues.push({
      severity: "error",
      code: "state_database_corrupt",
      path: ".diagnostics/state.sqlite",
      message: integrity.join("; ").slice(0, 500),
      repair: null,
    });
  }
  try {
    loadWorkspacePolicy(workspace.root);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    issues.push({ severity: "error", code: "policy_invalid", path: ".diagnostics/config.toml", message, repair: null });
  }
  const project = await readProjectConfig(handle.projectRoot);
  if (project.status === "invalid") {
    const message = project.diagnostics[0] ?? "flameox.toml is invalid.";
    issues.push({ severity: "error", code: "project_config_invalid", path: "flameox.toml", message, repair: null });
  }
  let checkedArtifacts = 0;
  let checkedParquetFiles = 0;
  for (const check of [artifactIntegrity, evidenceIntegrity]) {
    const outcome = await check(workspace, mode);
    issues.push(...outcome.issues);
    checkedArtifacts += outcome.checkedArtifacts;
    checkedParquetFiles += outcome.checkedParquetFiles;
  }
  issues.push(...processDeathIssues(handle, recovery));
  return { issues, checkedArtifacts, checkedParquetFiles };
}

function processDeathIssues(handle: WorkspaceHandle, recovery: RecoveryService): CheckedIssue[] {
  const workspace = handle.open();
  const issues: CheckedIssue[] = [];
  for (const runId of recovery.staleRunIds()) {
    issues.push({
      severity: "warning",
      code: "stale_run",
      path: null,
      message: `Run ${runId} is still marked running but its flameox process died; flameox recover (or the next server start) closes it.`,
      repair: { action: "close_stale_run", run_id: runId },
    });
  }
  for (const leftover of recovery.leftovers()) {
    issues.push({
      severity: "warning",
      code: leftover.kind,
      path: `.diagnostics/${leftover.path}`,
      message: `Left behind by a flameox process that died (${leftover.bytes} bytes); flameox recover reclaims it.`,
      repair: { action: "remove_leftover", kind: leftover.kind, path: leftover.path },
    });
  }
  for (const entry of beyondQuarantineBounds(listQuarantine(workspace), Date.now())) {
    issues.push({
      severity: "warning",
      code: "quarantine_beyond_bound",
      path: `.diagnostics/quarantine/${entry.quarantine_id}`,
      message: `The quarantine keeps at most ${quarantineBounds.maxEntries} entries, ${quarantineBounds.maxBytes} bytes, ${quarantineBounds.maxAgeMs / 86_400_000} days; flameox recover removes this oldest entry.`,
      repair: { action: "remove_quarantine", quarantine_id: entry.quarantine_id },
    });
  }
  const interrupted = [
    ...listQuarantine(workspace)
      .filter((entry) => entry.state === "moving")
      .map((entry) => `quarantine/${entry.quarantine_id}`),
    ...listTrash(workspace)
      .filter((manifest) => manifest.state !== "recoverable")
      .map((manifest) => `trash/${manifest.trash_id}`),
  ];
  for (const path of interrupted) {
    issues.push({
      severity: "warning",
      code: "interrupted_move",
      path: `.diagnostics/${path}`,
      message: "A move into or out of the trash or quarantine was interrupted; flameox recover finishes it.",
      repair: { action: "finish_interrupted_move", id: path.slice(path.indexOf("/") + 1) },
    });
  }
  return issues;
}

/** The repair plan an inspection proposes: its actions in order, and the digest that names exactly them. */
export function repairPlanOf(issues: readonly CheckedIssue[]): { plan_id: string | null; actions: RepairAction[] } {
  const actions = issues.flatMap((issue) => (issue.repair ? [issue.repair] : []));
  return { plan_id: actions.length === 0 ? null : repairPlanId(actions), actions };
}

export function repairPlanId(actions: readonly RepairAction[]): string {
  return digestOf({ repair_plan: actions });
}

/** The issues as validate shows them: without their repairs, and leftovers beyond the first few summed up. */
export function shownIssues(issues: readonly CheckedIssue[]): IntegrityIssue[] {
  const leftoverCodes = new Set(["orphaned_staging", "unregistered_bundle", "unregistered_artifact", "empty_artifact_folder"]);
  const shown: IntegrityIssue[] = [];
  let hidden = 0;
  let listed = 0;
  for (const { repair: _repair, ...issue } of issues) {
    if (leftoverCodes.has(issue.code) && ++listed > listedLeftovers) {
      hidden += 1;
      continue;
    }
    shown.push(issue);
  }
  if (hidden > 0) {
    shown.push({
      severity: "warning",
      code: "more_leftovers",
      path: null,
      message: `${hidden} more leftovers like those above are not listed; flameox recover reclaims them all.`,
    });
  }
  return shown;
}
