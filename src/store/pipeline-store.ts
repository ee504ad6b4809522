import type { ArtifactPipeline } from "../domain/pipelines.ts";
import type { StateSource } from "./sqlite.ts";

/** Registered artifact pipelines: written once, read by id. */
export class PipelineStore {
  constructor(private readonly state: StateSource) {}

  insert(record: ArtifactPipeline): void {
    const state = this.state();
    state.write(() => {
      state.database
        .query("INSERT INTO artifact_pipelines (pipeline_id, run_id, pipeline_name, created_at, record) VALUES (?, ?, ?, ?, ?)")
        .run(record.pipeline_id, record.run_id, record.pipeline_name, record.created_at, JSON.stringify(record));
    });
  }

  find(pipelineId: string): ArtifactPipeline | null {
    const row = this.state()
      .database.query<{ record: string }, [string]>("SELECT record FROM artifact_pipelines WHERE pipeline_id = ?")
      .get(pipelineId);
    return row ? (JSON.parse(row.record) as ArtifactPipeline) : null;
  }
}
