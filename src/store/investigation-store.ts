import type { EvidenceReference, EvidenceReferenceType, Finding, Hypothesis, Investigation } from "../domain/investigation.ts";
import type { StateSource } from "./sqlite.ts";

/** A keyset position in a newest-first listing: rows created before `created_at`, then by id. */
export type ListPosition = { created_at: string; id: string };

/** One page of a newest-first listing pinned at `pinnedAt`, with `limit + 1` rows to tell whether more follow. */
export type ListQuery = { pinnedAt: string; after: ListPosition | null; limit: number };

export type ListedRecords<Item> = { total: number; rows: (ListPosition & { record: Item })[] };

const existenceQueries: Record<EvidenceReferenceType, string> = {
  run: "SELECT 1 FROM runs WHERE run_id = ?",
  artifact: "SELECT 1 FROM artifacts WHERE artifact_id = ?",
  run_set: "SELECT 1 FROM run_sets WHERE run_set_id = ?",
  trial: "SELECT 1 FROM trials WHERE trial_id = ?",
  experiment: "SELECT 1 FROM experiments WHERE experiment_id = ?",
  analysis: "SELECT 1 FROM evidence_records WHERE ref_id = ? AND ref_type = 'analysis'",
  comparison: "SELECT 1 FROM evidence_records WHERE ref_id = ? AND ref_type = 'comparison'",
};

/**
 * Investigations, and the append-only revisions of hypotheses and findings (the highest revision is
 * current). Revisions are written by `appendHypothesis` / `appendFinding`, which read the current
 * revision and insert the next in one transaction, so a compare-and-swap in `next` cannot race.
 */
export class InvestigationStore {
  constructor(private readonly state: StateSource) {}

  insertInvestigation(record: Investigation): void {
    const state = this.state();
    state.write(() => {
      state.database
        .query("INSERT INTO investigations (investigation_id, created_at, record) VALUES (?, ?, ?)")
        .run(record.investigation_id, record.created_at, JSON.stringify(record));
    });
  }

  findInvestigation(investigationId: string): Investigation | null {
    const row = this.state()
      .database.query<{ record: string }, [string]>("SELECT record FROM investigations WHERE investigation_id = ?")
      .get(investigationId);
    return row ? (JSON.parse(row.record) as Investigation) : null;
  }

  listInvestigations(query: ListQuery): ListedRecords<Investigation> {
    return this.list<Investigation>("SELECT record, created_at, investigation_id AS id FROM investigations", [], query);
  }

  findHypothesis(hypothesisId: string): Hypothesis | null {
    const row = this.state()
      .database.query<{ record: string }, [string]>("SELECT record FROM hypotheses WHERE hypothesis_id = ? ORDER BY revision DESC LIMIT 1")
      .get(hypothesisId);
    return row ? (JSON.parse(row.record) as Hypothesis) : null;
  }

  /** `next` gets the current revision (null for a new id) and returns the next one, or throws to refuse. */
  appendHypothesis(hypothesisId: string | null, next: (current: Hypothesis | null) => Hypothesis): Hypothesis {
    const state = this.state();
    return state.write(() => {
      const record = next(hypothesisId === null ? null : this.findHypothesis(hypothesisId));
      state.database
        .query("INSERT INTO hypotheses (hypothesis_id, revision, investigation_id, created_at, record) VALUES (?, ?, ?, ?, ?)")
        .run(record.hypothesis_id, record.revision, record.investigation_id, record.created_at, JSON.stringify(record));
      return record;
    });
  }

  findFinding(findingId: string): Finding | null {
    const row = this.state()
      .database.query<{ record: string }, [string]>("SELECT record FROM findings WHERE finding_id = ? ORDER BY revision DESC LIMIT 1")
      .get(findingId);
    return row ? (JSON.parse(row.record) as Finding) : null;
  }

  /** Like appendHypothesis; the finding's evidence references are indexed with the revision that cites them. */
  appendFinding(findingId: string | null, next: (current: Finding | null) => Finding): Finding {
    const state = this.state();
    return state.write(() => {
      const finding = next(findingId === null ? null : this.findFinding(findingId));
      state.database
        .query(
          "INSERT INTO findings (finding_id, revision, investigation_id, first_created_at, created_at, record) VALUES (?, ?, ?, ?, ?, ?)",
        )
        .run(
          finding.finding_id,
          finding.revision,
          finding.investigation_id,
          finding.first_created_at,
          finding.created_at,
          JSON.stringify(finding),
        );
      const insert = state.database.query(
        "INSERT INTO evidence_references (owner_type, owner_id, owner_revision, ref_type, ref_id, relation) VALUES ('finding', ?, ?, ?, ?, ?)",
      );
      for (const reference of finding.evidence as EvidenceReference[])
        insert.run(finding.finding_id, finding.revision, reference.ref_type, reference.ref_id, reference.relation);
      return finding;
    });
  }

  /** Current revisions only, ordered by when each finding was first recorded. */
  listFindings(filter: { investigationId: string | null; assessment: string | null }, query: ListQuery): ListedRecords<Finding> {
    const clauses: string[] = ["f.revision = (SELECT max(revision) FROM findings g WHERE g.finding_id = f.finding_id)"];
    const values: string[] = [];
    if (filter.investigationId) {
      clauses.push("f.investigation_id = ?");
      values.push(filter.investigationId);
    }
    if (filter.assessment) {
      clauses.push("json_extract(f.record, '$.assessment') = ?");
      values.push(filter.assessment);
    }
    return this.list<Finding>(
      `SELECT f.record, f.first_created_at AS created_at, f.finding_id AS id FROM findings f WHERE ${clauses.join(" AND ")}`,
      values,
      query,
    );
  }

  /** True when a typed reference names something that exists in this workspace. */
  referenceExists(refType: EvidenceReferenceType, refId: string): boolean {
    return this.state().database.query(existenceQueries[refType]).get(refId) !== null;
  }

  private list<Item>(baseSql: string, values: string[], query: ListQuery): ListedRecords<Item> {
    const database = this.state().database;
    const outer = `SELECT * FROM (${baseSql}) WHERE created_at <= ?`;
    const total =
      database.query<{ count: number }, string[]>(`SELECT count(*) AS count FROM (${outer})`).get(...values, query.pinnedAt)?.count ?? 0;
    const keyset = query.after ? " AND (created_at < ? OR (created_at = ? AND id > ?))" : "";
    const rows = database
      .query<{ record: string; created_at: string; id: string }, (string | number)[]>(
        `${outer}${keyset} ORDER BY created_at DESC, id ASC LIMIT ?`,
      )
      .all(
        ...values,
        query.pinnedAt,
        ...(query.after ? [query.after.created_at, query.after.created_at, query.after.id] : []),
        query.limit + 1,
      );
    return { total, rows: rows.map((row) => ({ created_at: row.created_at, id: row.id, record: JSON.parse(row.record) as Item })) };
  }
}
