import type { ReductionAttempt, ReductionRecord } from "../domain/reductions.ts";
import type { StateSource } from "./sqlite.ts";

/**
 * Reductions and their attempts. The record is written when execution starts (disposition running)
 * and replaced when it ends; each attempt is appended as it happens, so a reduction that dies midway
 * still shows what it tried.
 */
export class ReductionStore {
  constructor(private readonly state: StateSource) {}

  insert(record: ReductionRecord): void {
    const state = this.state();
    state.write(() => {
      state.database
        .query(
          "INSERT INTO reductions (reduction_id, plan_digest, original_artifact_id, disposition, created_at, record) VALUES (?, ?, ?, ?, ?, ?)",
        )
        .run(
          record.reduction_id,
          record.plan_digest,
          record.original_artifact_id,
          record.disposition,
          record.started_at,
          JSON.stringify(record),
        );
    });
  }

  update(record: ReductionRecord): void {
    const state = this.state();
    state.write(() => {
      state.database
        .query("UPDATE reductions SET disposition = ?, record = ? WHERE reduction_id = ?")
        .run(record.disposition, JSON.stringify(record), record.reduction_id);
    });
  }

  find(reductionId: string): ReductionRecord | null {
    const row = this.state()
      .database.query<{ record: string }, [string]>("SELECT record FROM reductions WHERE reduction_id = ?")
      .get(reductionId);
    return row ? (JSON.parse(row.record) as ReductionRecord) : null;
  }

  appendAttempt(reductionId: string, attempt: ReductionAttempt): void {
    const state = this.state();
    state.write(() => {
      state.database
        .query("INSERT INTO reduction_attempts (reduction_id, ordinal, record) VALUES (?, ?, ?)")
        .run(reductionId, attempt.attempt, JSON.stringify(attempt));
    });
  }

  /** Attempts after `afterOrdinal` in order; `limit + 1` rows tell whether more follow. */
  attempts(reductionId: string, afterOrdinal: number, limit: number): { total: number; rows: ReductionAttempt[] } {
    const database = this.state().database;
    const total =
      database
        .query<{ count: number }, [string]>("SELECT COUNT(*) AS count FROM reduction_attempts WHERE reduction_id = ?")
        .get(reductionId)?.count ?? 0;
    const rows = database
      .query<{ record: string }, [string, number, number]>(
        "SELECT record FROM reduction_attempts WHERE reduction_id = ? AND ordinal > ? ORDER BY ordinal LIMIT ?",
      )
      .all(reductionId, afterOrdinal, limit + 1);
    return { total, rows: rows.map((row) => JSON.parse(row.record) as ReductionAttempt) };
  }
}
