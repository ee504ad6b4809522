import type { Database } from "bun:sqlite";
import { digestOf } from "../domain/canonical-json.ts";

export type CorpusHead = { sequence: number; commit_id: string };

/** Must run inside a write transaction: every publication moves the corpus head exactly once. */
export function advanceCorpus(database: Database, workspaceId: string, reason: string): CorpusHead {
  const head = corpusHead(database);
  const sequence = head.sequence + 1;
  const commitId = digestOf({ workspace_id: workspaceId, sequence, parent: head.commit_id, reason });
  database
    .query("INSERT INTO corpus_commits (sequence, commit_id, reason, created_at) VALUES (?, ?, ?, ?)")
    .run(sequence, commitId, reason, new Date().toISOString());
  return { sequence, commit_id: commitId };
}

export function corpusHead(database: Database): CorpusHead {
  return (
    database.query<CorpusHead, []>("SELECT sequence, commit_id FROM corpus_commits ORDER BY sequence DESC LIMIT 1").get() ?? {
      sequence: 0,
      commit_id: "",
    }
  );
}
