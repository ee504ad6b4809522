import { existsSync } from "node:fs";
import { storedArtifacts } from "./artifact-registry.ts";
import { verifyStoredArtifact } from "./artifact-store.ts";
import { bundleFiles } from "./evidence-bundle.ts";
import { currentBundleTables } from "./evidence-registry.ts";
import type { Workspace } from "./workspace.ts";

export type IntegrityIssue = { severity: "error" | "warning"; code: string; path: string | null; message: string };

export type IntegrityCheck = (
  workspace: Workspace,
  mode: "standard" | "full",
) => Promise<{ issues: IntegrityIssue[]; checkedArtifacts: number; checkedParquetFiles: number }>;

/** Every registered artifact is present (and, in full mode, still hashes to its id). */
export const artifactIntegrity: IntegrityCheck = async (workspace, mode) => {
  const issues: IntegrityIssue[] = [];
  const rows = storedArtifacts(workspace.state.database);
  for (const row of rows) {
    const path = workspace.path(row.stored_path);
    if (!existsSync(path)) {
      issues.push({
        severity: "error",
        code: "artifact_missing",
        path: `.diagnostics/${row.stored_path}`,
        message: `Artifact ${row.artifact_id} is registered but its file is missing.`,
      });
    } else if (mode === "full" && !verifyStoredArtifact(workspace, row.stored_path, row.artifact_id.slice("sha256:".length))) {
      issues.push({
        severity: "error",
        code: "artifact_hash_mismatch",
        path: `.diagnostics/${row.stored_path}`,
        message: `Artifact ${row.artifact_id} no longer matches its sha256.`,
      });
    }
  }
  return { issues, checkedArtifacts: rows.length, checkedParquetFiles: 0 };
};

/** Every current evidence bundle has the Parquet files its registration lists. */
export const evidenceIntegrity: IntegrityCheck = async (workspace) => {
  const issues: IntegrityIssue[] = [];
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
          message: `Evidence bundle ${bundle.bundle_id} lacks its ${table} table.`,
        });
      }
    }
  }
  return { issues, checkedArtifacts: 0, checkedParquetFiles: files };
};
