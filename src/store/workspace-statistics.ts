import type { Database } from "bun:sqlite";

/** The counts workspace_status reports, read in one place from the control plane. */
export type WorkspaceStatistics = {
  runs: number;
  artifacts: number;
  active_captures: number;
  quarantined_run_ids: string[];
  storage_by_artifact_kind: Record<string, number>;
  extractor_versions: Record<string, string>;
};

export function workspaceStatistics(database: Database): WorkspaceStatistics {
  const count = (sql: string) => database.query<{ count: number }, []>(sql).get()?.count ?? 0;
  return {
    runs: count("SELECT COUNT(*) AS count FROM runs"),
    artifacts: count("SELECT COUNT(*) AS count FROM artifacts"),
    active_captures: count("SELECT COUNT(*) AS count FROM runs WHERE execution_status = 'running'"),
    quarantined_run_ids: database
      .query<{ run_id: string }, []>("SELECT run_id FROM runs WHERE capture_status = 'quarantined' ORDER BY created_at DESC LIMIT 100")
      .all()
      .map((row) => row.run_id),
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
  };
}

/** SQLite's own consistency check of state.sqlite: ["ok"] when the file is sound. */
export function stateQuickCheck(database: Database): string[] {
  return database
    .query<{ quick_check: string }, []>("PRAGMA quick_check")
    .all()
    .map((row) => row.quick_check);
}
