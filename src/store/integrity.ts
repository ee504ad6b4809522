import { existsSync, statSync } from "node:fs";
import { verifyStoredArtifact } from "./artifact-store.ts";
import { bundleFiles } from "./evidence-bundle.ts";
import { currentBundleTables } from "./evidence-registry.ts";
import type { Workspace } from "./workspace.ts";

export type IntegrityIssue = { severity: "error" | "warning"; code: string; path: string | null; message: string };

/**
 * One step of a repair plan. validate proposes them (each issue that has a safe fix names one) and
 * `flameox repair PLAN.json` applies exactly the actions of a plan it proposed.
 */
export type RepairAction =
  | { action: "close_stale_run"; run_id: string }
  | { action: "remove_leftover"; kind: string; path: string }
  | { action: "retire_bundle"; bundle_id: string }
  | { action: "quarantine_damaged_artifact"; artifact_id: string; path: string }
  | { action: "remove_quarantine"; quarantine_id: string }
  | { action: "finish_interrupted_move"; id: string };

/** An issue and the repair that fixes it, when there is a safe one. */
export type CheckedIssue = IntegrityIssue & { repair: RepairAction | null };

export type IntegrityCheck = (
  workspace: Workspace,
  mode: "standard" | "full",
) => Promise<{ issues: CheckedIssue[]; checkedArtifacts: number; checkedParquetFiles: number }>;

/** Every registered artifact is present with its registered size (and, in full mode, still hashes to its id). */
export const artifactIntegrity: IntegrityCheck = async (workspace, mode) => {
  const issues: CheckedIssue[] = [];
  const rows = workspace.state.database
    .query<{ artifact_id: string; stored_path: string; byte_length: number }, []>(
      "SELECT artifact_id, stored_path, byte_length FROM artifacts",
    )
    .all();
  for (const row of rows) {
    const path = workspace.path(row.stored_path);
    const shown = `.diagnostics/${row.stored_path}`;
    const quarantine: RepairAction = { action: "quarantine_damaged_artifact", artifact_id: row.artifact_id, path: row.stored_path };
    if (!existsSync(path)) {
      issues.push({
        severity: "error",
        code: "artifact_missing",
        path: shown,
        message: `Artifact ${row.artifact_id} is registered but its file is missing; importing the original file again restores it.`,
        repair: null,
      });
    } else if (statSync(path).size !== row.byte_length) {
      issues.push({
        severity: "error",
        code: "artifact_size_mismatch",
        path: shown,
        message: `Artifact ${row.artifact_id} is ${statSync(path).size} bytes on disk but was registered with ${row.byte_length}.`,
        repair: quarantine,
      });
    } else if (mode === "full" && !verifyStoredArtifact(workspace, row.stored_path, row.artifact_id.slice("sha256:".length))) {
      issues.push({
        severity: "error",
        code: "artifact_hash_mismatch",
        path: shown,
        message: `Artifact ${row.artifact_id} no longer matches its sha256.`,
        repair: quarantine,
      });
    }
  }
  return { issues, checkedArtifacts: rows.length, checkedParquetFiles: 0 };
};

/** Every current evidence bundle has the Parquet files its registration lists. */
export const evidenceIntegrity: IntegrityCheck = async (workspace) => {
  const issues: CheckedIssue[] = [];
  const bundles = currentBundleTables(workspace.state.database);
  let files = 0;
  for (const bundle of bundles) {
    const present = bundleFiles(workspace, bundle.bundle_id);
    for (const [table, rows] of Object.entries(bundle.tables)) {
      if (rows === 0) continue;
      files += 1;
      if (!present[table as keyof typeof present]) {
        issues.push({
          severity: "error",
          code: "evidence_file_missing",
          path: `.diagnostics/evidence/${bundle.bundle_id}/${table}.parquet`,
          message: `Evidence bundle ${bundle.bundle_id} lacks its ${table} table; retiring the bundle lets its artifact be extracted again.`,
          repair: { action: "retire_bundle", bundle_id: bundle.bundle_id },
        });
      }
    }
  }
  return { issues, checkedArtifacts: 0, checkedParquetFiles: files };
};

/** A current bundle whose files are gone stops being current, so queries and a new extraction do not trip over it. */
export function retireBundle(workspace: Workspace, bundleId: string): boolean {
  const changed = workspace.state.database
    .query("UPDATE evidence_bundles SET superseded_by = 'retired-by-repair' WHERE bundle_id = ? AND superseded_by IS NULL")
    .run(bundleId);
  return changed.changes > 0;
}
