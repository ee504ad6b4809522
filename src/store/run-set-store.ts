import type { StateSource } from "./sqlite.ts";

export type RunSetMemberInput = { run_id: string; trial_id?: string | null; included?: boolean; reason?: string | null };

export type RunSetMember = {
  order: number;
  run_id: string;
  trial_id: string | null;
  experiment_id: string | null;
  block_id: string | null;
  treatment: string | null;
  included: boolean;
  reason: string | null;
};

export type RunSet = {
  schema_version: 1;
  run_set_id: string;
  membership_digest: string;
  corpus_commit_id: string;
  created_at: string;
  selection: Record<string, unknown>;
  experiment_id: string | null;
  members: RunSetMember[];
  counts: { members: number; included: number; excluded: number };
  resource_uri: string;
};

/** Frozen cohorts, keyed by a digest of their content: inserting the same set twice keeps the first. */
export class RunSetStore {
  constructor(private readonly state: StateSource) {}

  insertIfAbsent(record: RunSet): void {
    const state = this.state();
    state.write(() => {
      state.database
        .query(
          "INSERT OR IGNORE INTO run_sets (run_set_id, membership_digest, corpus_commit_id, experiment_id, created_at, record) VALUES (?, ?, ?, ?, ?, ?)",
        )
        .run(
          record.run_set_id,
          record.membership_digest,
          record.corpus_commit_id,
          record.experiment_id,
          record.created_at,
          JSON.stringify(record),
        );
    });
  }

  find(runSetId: string): RunSet | null {
    const row = this.state().database.query<{ record: string }, [string]>("SELECT record FROM run_sets WHERE run_set_id = ?").get(runSetId);
    return row ? (JSON.parse(row.record) as RunSet) : null;
  }
}
