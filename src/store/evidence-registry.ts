import type { Database } from "bun:sqlite";

export type BundleRecord = {
  bundle_id: string;
  run_id: string;
  artifact_id: string;
  extractor: string;
  extractor_version: string;
  tables: Record<string, number>;
  created_at: string;
  corpus_sequence: number;
  /** What the extractor recorded about its input; analyses reading the bundle repeat it. */
  limitations: string[];
};

/**
 * Registers a finished bundle; must run inside the publishing transaction. Re-extraction of the
 * same artifact by the same extractor supersedes the earlier bundle instead of duplicating rows.
 */
export function registerBundle(database: Database, bundle: BundleRecord): void {
  database
    .query("UPDATE evidence_bundles SET superseded_by = ? WHERE run_id = ? AND artifact_id = ? AND extractor = ? AND superseded_by IS NULL")
    .run(bundle.bundle_id, bundle.run_id, bundle.artifact_id, bundle.extractor);
  database
    .query(
      "INSERT INTO evidence_bundles (bundle_id, run_id, artifact_id, extractor, extractor_version, tables, created_at, corpus_sequence, limitations) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
    )
    .run(
      bundle.bundle_id,
      bundle.run_id,
      bundle.artifact_id,
      bundle.extractor,
      bundle.extractor_version,
      JSON.stringify(bundle.tables),
      bundle.created_at,
      bundle.corpus_sequence,
      JSON.stringify(bundle.limitations),
    );
}

export function currentBundles(database: Database, filter: { runId?: string; artifactId?: string; maxSequence?: number }): BundleRecord[] {
  const clauses = ["superseded_by IS NULL"];
  const values: (string | number)[] = [];
  if (filter.runId) {
    clauses.push("run_id = ?");
    values.push(filter.runId);
  }
  if (filter.artifactId) {
    clauses.push("artifact_id = ?");
    values.push(filter.artifactId);
  }
  if (filter.maxSequence !== undefined) {
    clauses.push("corpus_sequence <= ?");
    values.push(filter.maxSequence);
  }
  return database
    .query<
      {
        bundle_id: string;
        run_id: string;
        artifact_id: string;
        extractor: string;
        extractor_version: string;
        tables: string;
        created_at: string;
        corpus_sequence: number;
        limitations: string;
      },
      (string | number)[]
    >(`SELECT * FROM evidence_bundles WHERE ${clauses.join(" AND ")} ORDER BY corpus_sequence, bundle_id`)
    .all(...values)
    .map((row) => ({
      ...row,
      tables: JSON.parse(row.tables) as Record<string, number>,
      limitations: JSON.parse(row.limitations) as string[],
    }));
}

/** One bundle's registration row as stored (superseded or not), for get_evidence(ref_type='generation'). */
export function readBundleRow(database: Database, bundleId: string): Record<string, unknown> | null {
  const row = database.query<Record<string, unknown>, [string]>("SELECT * FROM evidence_bundles WHERE bundle_id = ?").get(bundleId);
  return row ? { ...row, tables: JSON.parse(String(row.tables)), limitations: JSON.parse(String(row.limitations)) } : null;
}

/** The current (not superseded) bundles extracted from one artifact, across runs. */
export function currentBundlesOfArtifact(
  database: Database,
  artifactId: string,
): { extractor: string; tables: Record<string, number>; run_id: string }[] {
  return database
    .query<{ extractor: string; tables: string; run_id: string }, [string]>(
      "SELECT extractor, tables, run_id FROM evidence_bundles WHERE artifact_id = ? AND superseded_by IS NULL",
    )
    .all(artifactId)
    .map((row) => ({ extractor: row.extractor, tables: JSON.parse(row.tables) as Record<string, number>, run_id: row.run_id }));
}

/** Every current bundle's id and table counts, for integrity checks. */
export function currentBundleTables(database: Database): { bundle_id: string; tables: Record<string, number> }[] {
  return database
    .query<{ bundle_id: string; tables: string }, []>("SELECT bundle_id, tables FROM evidence_bundles WHERE superseded_by IS NULL")
    .all()
    .map((row) => ({ bundle_id: row.bundle_id, tables: JSON.parse(row.tables) as Record<string, number> }));
}
