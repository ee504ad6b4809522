import { existsSync, renameSync, rmSync } from "node:fs";
import type { BundleRecord } from "./evidence-registry.ts";
import { bundleFiles, escapeSql } from "./evidence-bundle.ts";
import { loadDuckdb } from "./duckdb.ts";
import { emptyRelation, evidenceTables } from "./evidence-schema.ts";
import { processStagingPath } from "./process-staging.ts";
import type { Workspace } from "./workspace.ts";

/**
 * catalog.duckdb is derived state: one view per evidence table over every current bundle, plus the
 * corpus commit it was built from, so people can open it with any DuckDB client. It is rebuilt into
 * a temporary file and renamed over the old one, so a reader never sees half a catalog.
 */
export async function rebuildCatalog(
  workspace: Workspace,
  bundles: BundleRecord[],
  corpusCommitId: string,
): Promise<{ views: Record<string, number>; path: string }> {
  const duckdb = await loadDuckdb();
  const target = workspace.path("catalog.duckdb");
  const temporary = processStagingPath(workspace, `catalog-${crypto.randomUUID()}.duckdb`);
  const instance = await duckdb.DuckDBInstance.create(temporary);
  const connection = await instance.connect();
  const views: Record<string, number> = {};
  try {
    for (const table of evidenceTables) {
      const files = bundles
        .map((bundle) => bundleFiles(workspace, bundle.bundle_id)[table])
        .filter((path): path is string => path !== undefined);
      views[table] = files.length;
      const relation =
        files.length === 0
          ? emptyRelation(table)
          : `SELECT * FROM read_parquet([${files.map((path) => `'${escapeSql(path)}'`).join(", ")}], union_by_name = true)`;
      await connection.run(`CREATE VIEW ${table} AS ${relation}`);
    }
    await connection.run("CREATE TABLE catalog_meta (corpus_commit_id VARCHAR, rebuilt_at VARCHAR, bundle_count BIGINT)");
    await connection.run(
      `INSERT INTO catalog_meta VALUES ('${escapeSql(corpusCommitId)}', '${new Date().toISOString()}', ${bundles.length})`,
    );
  } catch (error) {
    connection.closeSync();
    instance.closeSync();
    rmSync(temporary, { force: true });
    throw error;
  }
  connection.closeSync();
  instance.closeSync();
  renameSync(temporary, target);
  rmSync(`${temporary}.wal`, { force: true });
  return { views, path: target };
}

export type CatalogState = { exists: boolean; corpus_commit_id: string | null; rebuilt_at: string | null; error: string | null };

export async function readCatalogState(workspace: Workspace): Promise<CatalogState> {
  const path = workspace.path("catalog.duckdb");
  if (!existsSync(path)) return { exists: false, corpus_commit_id: null, rebuilt_at: null, error: null };
  try {
    const duckdb = await loadDuckdb();
    const instance = await duckdb.DuckDBInstance.create(path, { access_mode: "READ_ONLY" });
    const connection = await instance.connect();
    try {
      const rows = (await connection.runAndReadAll("SELECT corpus_commit_id, rebuilt_at FROM catalog_meta")).getRowObjectsJS() as {
        corpus_commit_id: string;
        rebuilt_at: string;
      }[];
      for (const table of evidenceTables) await connection.run(`SELECT count(*) FROM ${table}`);
      return { exists: true, corpus_commit_id: rows[0]?.corpus_commit_id ?? null, rebuilt_at: rows[0]?.rebuilt_at ?? null, error: null };
    } finally {
      connection.closeSync();
      instance.closeSync();
    }
  } catch (error) {
    return { exists: true, corpus_commit_id: null, rebuilt_at: null, error: error instanceof Error ? error.message : String(error) };
  }
}
