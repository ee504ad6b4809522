import { existsSync } from "node:fs";
import { verifyStoredArtifact } from "../store/artifact-store.ts";
import { bundleFiles } from "../store/evidence-bundle.ts";
import type { IntegrityCheck, IntegrityIssue } from "./workspace-service.ts";

/** Every registered artifact is present (and, in full mode, still hashes to its id). */
export const artifactIntegrity: IntegrityCheck = async (workspace, mode) => {
  const issues: IntegrityIssue[] = [];
  const rows = workspace.state.database
    .query<{ artifact_id: string; stored_path: string }, []>("SELECT artifact_id, stored_path FROM artifacts")
    .all();
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
  const bundles = workspace.state.database
    .query<{ bundle_id: string; tables: string }, []>("SELECT bundle_id, tables FROM evidence_bundles WHERE superseded_by IS NULL")
    .all();
  let files = 0;
  for (const bundle of bundles) {
    const present = bundleFiles(workspace, bundle.bundle_id);
    for (const [table, rows] of Object.entries(JSON.parse(bundle.tables) as Record<string, number>)) {
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
