import type { Database } from "bun:sqlite";
import { corpusHead } from "./corpus.ts";
import type { RetentionRoot } from "./trash.ts";

const bundleIdPattern = /bundle-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;

/**
 * What garbage collection must keep, read from the control plane: the corpus head (its current
 * bundles and every registered artifact, which runs never stop referencing) and any evidence
 * bundle a durable record names (a finding citing a generation, a recorded analysis listing its
 * inputs), even when a later extraction superseded it.
 */
export function retentionRoots(database: Database): { roots: RetentionRoot[]; keptBundles: Set<string> } {
  const head = corpusHead(database);
  const count = (sql: string) => database.query<{ count: number }, []>(sql).get()?.count ?? 0;
  const roots: RetentionRoot[] = [
    {
      kind: "corpus_head",
      id: head.commit_id,
      detail: `${count("SELECT COUNT(*) AS count FROM evidence_bundles WHERE superseded_by IS NULL")} current evidence bundles, ${count("SELECT COUNT(*) AS count FROM artifacts")} registered artifacts`,
    },
  ];
  const keptBundles = new Set<string>();
  const cited = database
    .query<{ owner_type: string; owner_id: string; ref_id: string }, []>(
      "SELECT owner_type, owner_id, ref_id FROM evidence_references WHERE ref_type = 'generation' ORDER BY owner_id",
    )
    .all();
  for (const row of cited) {
    if (keptBundles.has(row.ref_id)) continue;
    keptBundles.add(row.ref_id);
    roots.push({ kind: "evidence_reference", id: row.ref_id, detail: `${row.owner_type} ${row.owner_id}` });
  }
  const records = database
    .query<{ ref_type: string; ref_id: string; record: string }, []>(
      "SELECT ref_type, ref_id, record FROM evidence_records ORDER BY ref_id",
    )
    .all();
  for (const record of records) {
    for (const bundleId of record.record.match(bundleIdPattern) ?? []) {
      if (keptBundles.has(bundleId)) continue;
      keptBundles.add(bundleId);
      roots.push({ kind: "recorded_analysis_input", id: bundleId, detail: `${record.ref_type} ${record.ref_id}` });
    }
  }
  return { roots, keptBundles };
}

/** Bundles a later extraction of the same artifact replaced: queries never read them again. */
export function supersededBundleIds(database: Database): string[] {
  return database
    .query<{ bundle_id: string }, []>("SELECT bundle_id FROM evidence_bundles WHERE superseded_by IS NOT NULL ORDER BY bundle_id")
    .all()
    .map((row) => row.bundle_id);
}

export function isSupersededBundle(database: Database, bundleId: string): boolean {
  return (
    database
      .query<{ one: number }, [string]>("SELECT 1 AS one FROM evidence_bundles WHERE bundle_id = ? AND superseded_by IS NOT NULL")
      .get(bundleId) !== null
  );
}
