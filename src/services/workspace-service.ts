import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { corpusHead } from "../store/corpus.ts";
import { initializeWorkspace } from "../store/workspace.ts";
import { workspaceStatistics } from "../store/workspace-statistics.ts";
import { loadWorkspacePolicy, renderDefaultPolicy, type WorkspacePolicy } from "../config/workspace-policy.ts";
import type { IntegrityIssue } from "../store/integrity.ts";
import { inspectWorkspace, repairPlanOf, shownIssues } from "./workspace-inspection.ts";
import type { RecoveryService } from "./recovery-service.ts";
import type { CatalogService } from "./catalog-service.ts";
import type { WorkspaceHandle } from "../store/workspace-handle.ts";

export type WorkspaceStatus = {
  schema_version: 1;
  workspace_found: true;
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
  /** The embedded DuckDB that evidence queries run on; its files extracted and verified prove the binary is whole. */
  evidence_engine: { name: "duckdb"; version: string | null; error: string | null };
  warnings: string[];
};

/**
 * workspace_status before initialize_workspace. Over MCP this is an answer, not a failure: the first
 * call of every fresh project would otherwise be an error. The contract's code stays visible in `code`.
 */
export type WorkspaceAbsent = {
  schema_version: 1;
  workspace_found: false;
  code: "WORKSPACE_NOT_FOUND";
  message: string;
  remediation: string[];
  next_tool: "initialize_workspace";
  next_arguments: Record<string, never>;
};

export type IntegrityResult = {
  schema_version: 1;
  level: "standard" | "full";
  corpus_commit_id: string;
  valid: boolean;
  checked_artifacts: number;
  checked_parquet_files: number;
  issues: IntegrityIssue[];
  /** Names the plan `flameox repair` would apply for the issues that have a safe fix; null when none has. */
  repair_plan_id: string | null;
};

export type InitializeResult = WorkspaceStatus & { created: boolean };

export class WorkspaceService {
  constructor(
    private readonly workspace: WorkspaceHandle,
    private readonly catalog: CatalogService,
    private readonly recovery: RecoveryService,
  ) {}

  async initialize(): Promise<InitializeResult> {
    if (this.workspace.exists()) {
      return { ...(await this.status()), created: false };
    }
    const { workspace, created } = initializeWorkspace(this.workspace.location, renderDefaultPolicy());
    this.workspace.adopt(workspace);
    return { ...(await this.status()), created };
  }

  /** The effective policy: config.toml over defaults. A malformed file is a typed error. */
  policy(): { schema_version: 1; config_path: string; policy: WorkspacePolicy } {
    const workspace = this.workspace.open();
    return { schema_version: 1, config_path: ".diagnostics/config.toml", policy: loadWorkspacePolicy(workspace.root) };
  }

  /** Read-only checks; never repairs. Issues with a safe fix add up to the repair plan `flameox repair` applies. */
  async validate(request: { mode: "standard" | "full" }): Promise<IntegrityResult> {
    const workspace = this.workspace.open();
    const inspection = await inspectWorkspace(this.workspace, this.recovery, request.mode);
    return {
      schema_version: 1,
      level: request.mode,
      corpus_commit_id: corpusHead(workspace.state.database).commit_id,
      valid: !inspection.issues.some((issue) => issue.severity === "error"),
      checked_artifacts: inspection.checkedArtifacts,
      checked_parquet_files: inspection.checkedParquetFiles,
      issues: shownIssues(inspection.issues),
      repair_plan_id: repairPlanOf(inspection.issues).plan_id,
    };
  }

  /** The status, or — where no workspace exists yet — what to do about it, as a result rather than an error. */
  async describe(): Promise<WorkspaceStatus | WorkspaceAbsent> {
    if (this.workspace.exists()) return this.status();
    return {
      schema_version: 1,
      workspace_found: false,
      code: "WORKSPACE_NOT_FOUND",
      message: "No flameox workspace exists at the fixed project root yet.",
      remediation: ["Call initialize_workspace: it creates .diagnostics under the project root (CLI: flameox init)."],
      next_tool: "initialize_workspace",
      next_arguments: {},
    };
  }

  /** Recovers dead leases first (as every server start does), and says so in warnings. */
  async status(): Promise<WorkspaceStatus> {
    const workspace = this.workspace.open();
    const warnings: string[] = [...(await this.recovery.startupRecovery()).warnings];
    const head = corpusHead(workspace.state.database);
    const counts = workspaceStatistics(workspace.state.database);
    // Cheap checks only (status runs on every first call); validate_workspace does the thorough ones.
    let workspaceValid = true;
    try {
      loadWorkspacePolicy(workspace.root);
    } catch (error) {
      workspaceValid = false;
      warnings.push(`The workspace policy is invalid: ${error instanceof Error ? error.message : String(error)}; run validate_workspace.`);
    }
    const catalog = await this.catalog.status();
    if (catalog.exists && catalog.fresh === false)
      warnings.push("catalog.duckdb is older than the corpus; run flameox catalog rebuild to refresh it.");
    if (catalog.problem) warnings.push(`catalog.duckdb cannot be read: ${catalog.problem}`);
    return {
      schema_version: 1,
      workspace_found: true,
      workspace_id: workspace.id,
      project_root: workspace.projectRoot,
      workspace_root: workspace.root,
      created_at: workspace.identity.created_at,
      corpus_commit_id: head.commit_id,
      corpus_sequence: head.sequence,
      workspace_valid: workspaceValid,
      catalog_exists: catalog.exists,
      catalog_valid: catalog.valid,
      catalog_fresh: catalog.fresh,
      run_count: counts.runs,
      artifact_object_count: counts.artifacts,
      storage_bytes: folderBytes(workspace.root),
      active_captures: counts.active_captures,
      stale_run_ids: this.recovery.staleRunIds(),
      quarantined_run_ids: counts.quarantined_run_ids,
      last_catalog_rebuild_at: catalog.rebuilt_at,
      storage_by_artifact_kind: counts.storage_by_artifact_kind,
      extractor_versions: counts.extractor_versions,
      capability_warnings: [],
      evidence_engine: await evidenceEngine(),
      warnings,
    };
  }
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

async function evidenceEngine(): Promise<WorkspaceStatus["evidence_engine"]> {
  try {
    const { duckdbReadiness } = await import("../store/duckdb.ts");
    return { name: "duckdb", version: await duckdbReadiness(), error: null };
  } catch (error) {
    return { name: "duckdb", version: null, error: error instanceof Error ? error.message : String(error) };
  }
}
