import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { initializeWorkspace, type Workspace } from "../store/workspace.ts";
import { loadWorkspacePolicy, renderDefaultPolicy, type WorkspacePolicy } from "../config/workspace-policy.ts";
import { readProjectConfig } from "../config/project-config.ts";
import { artifactIntegrity, evidenceIntegrity } from "./store-integrity.ts";
import type { Services } from "./services.ts";

export type WorkspaceStatus = {
  schema_version: 1;
  workspace_id: string;
  project_root: string;
  workspace_root: string;
  created_at: string;
  corpus_commit_id: string;
  corpus_sequence: number;
  workspace_valid: boolean;
  catalog_exists: boolean;
  catalog_valid: boolean | null;
  catalog_fresh: boolean | null;
  run_count: number;
  artifact_object_count: number;
  storage_bytes: number;
  active_captures: number;
  stale_run_ids: string[];
  quarantined_run_ids: string[];
  last_catalog_rebuild_at: string | null;
  storage_by_artifact_kind: Record<string, number>;
  extractor_versions: Record<string, string>;
  capability_warnings: string[];
  /** The embedded DuckDB that evidence queries run on; loading it proves the binary is whole. */
  evidence_engine: { name: "duckdb"; version: string | null; error: string | null };
  warnings: string[];
};

export type IntegrityIssue = { severity: "error" | "warning"; code: string; path: string | null; message: string };

export type IntegrityResult = {
  schema_version: 1;
  level: "standard" | "full";
  corpus_commit_id: string;
  valid: boolean;
  checked_artifacts: number;
  checked_parquet_files: number;
  issues: IntegrityIssue[];
};

export type InitializeResult = WorkspaceStatus & { created: boolean };

export class WorkspaceService {
  constructor(private readonly services: Services) {}

  async initialize(): Promise<InitializeResult> {
    if (this.services.hasWorkspace()) {
      return { ...(await this.status()), created: false };
    }
    const { workspace, created } = initializeWorkspace(this.services.location, renderDefaultPolicy());
    this.services.adoptWorkspace(workspace);
    return { ...(await this.status()), created };
  }

  /** The effective policy: config.toml over defaults. A malformed file is a typed error. */
  policy(): { schema_version: 1; config_path: string; policy: WorkspacePolicy } {
    const workspace = this.services.workspace();
    return { schema_version: 1, config_path: ".diagnostics/config.toml", policy: loadWorkspacePolicy(workspace.root) };
  }

  /** Read-only checks; never repairs. */
  async validate(request: { mode: "standard" | "full" }): Promise<IntegrityResult> {
    const workspace = this.services.workspace();
    const issues: IntegrityIssue[] = [];
    const integrity = workspace.state.database.query<{ quick_check: string }, []>("PRAGMA quick_check").all();
    if (integrity.length !== 1 || integrity[0]!.quick_check !== "ok") {
      issues.push({
        severity: "error",
        code: "state_database_corrupt",
        path: ".diagnostics/state.sqlite",
        message: integrity
          .map((row) => row.quick_check)
          .join("; ")
          .slice(0, 500),
      });
    }
    try {
      loadWorkspacePolicy(workspace.root);
    } catch (error) {
      issues.push({
        severity: "error",
        code: "policy_invalid",
        path: ".diagnostics/config.toml",
        message: error instanceof Error ? error.message : String(error),
      });
    }
    const project = await readProjectConfig(this.services.projectRoot);
    if (project.status === "invalid") {
      issues.push({
        severity: "error",
        code: "project_config_invalid",
        path: "flameox.toml",
        message: project.diagnostics[0] ?? "flameox.toml is invalid.",
      });
    }
    let checkedArtifacts = 0;
    let checkedParquet = 0;
    for (const check of [artifactIntegrity, evidenceIntegrity]) {
      const outcome = await check(workspace, request.mode);
      issues.push(...outcome.issues);
      checkedArtifacts += outcome.checkedArtifacts;
      checkedParquet += outcome.checkedParquetFiles;
    }
    return {
      schema_version: 1,
      level: request.mode,
      corpus_commit_id: (await this.status()).corpus_commit_id,
      valid: !issues.some((issue) => issue.severity === "error"),
      checked_artifacts: checkedArtifacts,
      checked_parquet_files: checkedParquet,
      issues,
    };
  }

  async status(): Promise<WorkspaceStatus> {
    const workspace = this.services.workspace();
    const database = workspace.state.database;
    const head = database
      .query<{ sequence: number; commit_id: string }, []>("SELECT sequence, commit_id FROM corpus_commits ORDER BY sequence DESC LIMIT 1")
      .get();
    const warnings: string[] = [];
    const counts = runAndArtifactCounts(workspace);
    // Cheap checks only (status runs on every first call); validate_workspace does the thorough ones.
    let workspaceValid = true;
    try {
      loadWorkspacePolicy(workspace.root);
    } catch (error) {
      workspaceValid = false;
      warnings.push(`The workspace policy is invalid: ${error instanceof Error ? error.message : String(error)}; run validate_workspace.`);
    }
    const catalog = await this.services.catalog.status();
    if (catalog.exists && catalog.fresh === false)
      warnings.push("catalog.duckdb is older than the corpus; run flameox catalog rebuild to refresh it.");
    if (catalog.problem) warnings.push(`catalog.duckdb cannot be read: ${catalog.problem}`);
    return {
      schema_version: 1,
      workspace_id: workspace.id,
      project_root: workspace.projectRoot,
      workspace_root: workspace.root,
      created_at: workspace.identity.created_at,
      corpus_commit_id: head?.commit_id ?? "",
      corpus_sequence: head?.sequence ?? 0,
      workspace_valid: workspaceValid,
      catalog_exists: catalog.exists,
      catalog_valid: catalog.valid,
      catalog_fresh: catalog.fresh,
      run_count: counts.runs,
      artifact_object_count: counts.artifacts,
      storage_bytes: folderBytes(workspace.root),
      active_captures: counts.activeCaptures,
      stale_run_ids: this.services.recovery.staleRunIds(),
      quarantined_run_ids: database
        .query<{ run_id: string }, []>("SELECT run_id FROM runs WHERE capture_status = 'quarantined' ORDER BY created_at DESC LIMIT 100")
        .all()
        .map((row) => row.run_id),
      last_catalog_rebuild_at: catalog.rebuilt_at,
      storage_by_artifact_kind: Object.fromEntries(
        database
          .query<{ kind: string; bytes: number }, []>(
            "SELECT kind, SUM(byte_length) AS bytes FROM (SELECT DISTINCT r.kind, a.artifact_id, a.byte_length FROM artifacts a JOIN artifact_registrations r ON r.artifact_id = a.artifact_id) GROUP BY kind ORDER BY kind",
          )
          .all()
          .map((row) => [row.kind, row.bytes]),
      ),
      extractor_versions: Object.fromEntries(
        database
          .query<{ extractor: string; version: string }, []>(
            "SELECT extractor, MAX(extractor_version) AS version FROM evidence_bundles WHERE superseded_by IS NULL GROUP BY extractor ORDER BY extractor",
          )
          .all()
          .map((row) => [row.extractor, row.version]),
      ),
      capability_warnings: [],
      evidence_engine: await evidenceEngine(),
      warnings,
    };
  }
}

function runAndArtifactCounts(workspace: Workspace): { runs: number; artifacts: number; activeCaptures: number } {
  const count = (sql: string) => workspace.state.database.query<{ count: number }, []>(sql).get()?.count ?? 0;
  return {
    runs: count("SELECT COUNT(*) AS count FROM runs"),
    artifacts: count("SELECT COUNT(*) AS count FROM artifacts"),
    activeCaptures: count("SELECT COUNT(*) AS count FROM runs WHERE execution_status = 'running'"),
  };
}

function folderBytes(root: string): number {
  let total = 0;
  const stack = [root];
  while (stack.length > 0) {
    const current = stack.pop()!;
    let entries;
    try {
      entries = readdirSync(current, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const entry of entries) {
      const path = join(current, entry.name);
      if (entry.isDirectory()) stack.push(path);
      else if (entry.isFile()) {
        try {
          total += statSync(path).size;
        } catch {
          // Removed while we walked; not worth failing a status call.
        }
      }
    }
  }
  return total;
}

export type IntegrityCheck = (
  workspace: Workspace,
  mode: "standard" | "full",
) => Promise<{ issues: IntegrityIssue[]; checkedArtifacts: number; checkedParquetFiles: number }>;

async function evidenceEngine(): Promise<WorkspaceStatus["evidence_engine"]> {
  try {
    const { duckdbVersion } = await import("../store/duckdb.ts");
    return { name: "duckdb", version: await duckdbVersion(), error: null };
  } catch (error) {
    return { name: "duckdb", version: null, error: error instanceof Error ? error.message : String(error) };
  }
}
