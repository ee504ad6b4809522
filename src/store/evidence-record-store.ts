import { digestOf } from "../domain/canonical-json.ts";
import { evidenceResourceUri } from "../domain/resource-uris.ts";
import type { StateSource } from "./sqlite.ts";

/** A recorded analysis or comparison: its exact inputs, the corpus commit it read, and a digest of its result. */
export type EvidenceRecord = {
  schema_version: 1;
  ref_type: "analysis" | "comparison";
  ref_id: string;
  recipe: string;
  inputs: Record<string, unknown>;
  corpus_commit_id: string;
  result_digest: string;
  created_at: string;
  result: Record<string, unknown>;
  resource_uri: string;
};

/** What record_analysis and record_comparison return: the record's identity, commit and result digest. */
export type EvidenceReceipt = {
  schema_version: 1;
  ref_type: "analysis" | "comparison";
  ref_id: string;
  recipe: string;
  corpus_commit_id: string;
  result_digest: string;
  created: boolean;
  decision?: string;
  validity?: string;
  estimate?: number | null;
  /** A comparison's interval of the ratio candidate/baseline; null when it is only descriptive. */
  ci?: { lower: number; upper: number; level: number } | null;
  resource_uri: string;
};

/** Recorded evidence is immutable and content-addressed by its id: recording it again returns the first record. */
export class EvidenceRecordStore {
  constructor(private readonly state: StateSource) {}

  /**
   * Persists a result with its exact inputs, pinned commit and result digest. Ids are deterministic,
   * so recording the same thing again returns the first record (created: false) instead of a copy.
   */
  record(entry: {
    refType: "analysis" | "comparison";
    refId: string;
    recipe: string;
    inputs: Record<string, unknown>;
    corpusCommitId: string;
    result: Record<string, unknown>;
  }): EvidenceReceipt {
    const record: EvidenceRecord = {
      schema_version: 1,
      ref_type: entry.refType,
      ref_id: entry.refId,
      recipe: entry.recipe,
      inputs: entry.inputs,
      corpus_commit_id: entry.corpusCommitId,
      result_digest: digestOf(JSON.parse(JSON.stringify(entry.result))),
      created_at: new Date().toISOString(),
      result: entry.result,
      resource_uri: evidenceResourceUri(entry.refType, entry.refId),
    };
    const created = this.insertIfAbsent(record);
    const stored = created ? record : (this.find(entry.refType, entry.refId) ?? record);
    return {
      schema_version: 1,
      ref_type: entry.refType,
      ref_id: entry.refId,
      recipe: entry.recipe,
      corpus_commit_id: stored.corpus_commit_id,
      result_digest: stored.result_digest,
      created,
      resource_uri: record.resource_uri,
    };
  }

  /** True when this call created the record; false when one with the same id already existed. */
  private insertIfAbsent(record: EvidenceRecord): boolean {
    const state = this.state();
    return state.write(
      () =>
        state.database
          .query(
            "INSERT OR IGNORE INTO evidence_records (ref_type, ref_id, recipe, corpus_commit_id, result_digest, created_at, record) VALUES (?, ?, ?, ?, ?, ?, ?)",
          )
          .run(
            record.ref_type,
            record.ref_id,
            record.recipe,
            record.corpus_commit_id,
            record.result_digest,
            record.created_at,
            JSON.stringify(record),
          ).changes === 1,
    );
  }

  find(refType: "analysis" | "comparison", refId: string): EvidenceRecord | null {
    const row = this.state()
      .database.query<{ record: string }, [string, string]>("SELECT record FROM evidence_records WHERE ref_type = ? AND ref_id = ?")
      .get(refType, refId);
    return row ? (JSON.parse(row.record) as EvidenceRecord) : null;
  }
}
