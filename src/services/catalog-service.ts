import { workspaceInvalid } from "../domain/errors.ts";
import { readCatalogState, rebuildCatalog } from "../store/catalog.ts";
import { corpusHead } from "../store/corpus.ts";
import { currentBundles } from "../store/evidence-registry.ts";
import { withWorkspaceLock } from "../store/workspace-lock.ts";
import type { WorkspaceHandle } from "../store/workspace-handle.ts";

export type CatalogStatus = {
  schema_version: 1;
  catalog_path: ".diagnostics/catalog.duckdb";
  exists: boolean;
  valid: boolean | null;
  fresh: boolean | null;
  catalog_commit_id: string | null;
  corpus_commit_id: string;
  rebuilt_at: string | null;
  problem: string | null;
};

/** The derived DuckDB catalog: rebuilding it changes nothing but catalog.duckdb. */
export class CatalogService {
  constructor(private readonly workspace: WorkspaceHandle) {}

  async status(): Promise<CatalogStatus> {
    const workspace = this.workspace.open();
    const head = corpusHead(workspace.state.database);
    const state = await readCatalogState(workspace);
    return {
      schema_version: 1,
      catalog_path: ".diagnostics/catalog.duckdb",
      exists: state.exists,
      valid: state.exists ? state.error === null : null,
      fresh: state.exists && state.error === null ? state.corpus_commit_id === head.commit_id : null,
      catalog_commit_id: state.corpus_commit_id,
      corpus_commit_id: head.commit_id,
      rebuilt_at: state.rebuilt_at,
      problem: state.error,
    };
  }

  async rebuild(): Promise<CatalogStatus & { views: Record<string, number> }> {
    const workspace = this.workspace.open();
    const views = await withWorkspaceLock(workspace, async () => {
      const head = corpusHead(workspace.state.database);
      const bundles = currentBundles(workspace.state.database, { maxSequence: head.sequence });
      return (await rebuildCatalog(workspace, bundles, head.commit_id)).views;
    });
    return { ...(await this.status()), views };
  }

  /** Exit-1-style negative answer for `catalog validate` when the catalog is missing, broken or stale. */
  async validate(): Promise<CatalogStatus> {
    const status = await this.status();
    if (!status.exists) {
      throw workspaceInvalid("The workspace has no catalog.duckdb yet.", {
        remediation: ["Run flameox catalog rebuild; it changes only the derived catalog."],
      });
    }
    return status;
  }
}
