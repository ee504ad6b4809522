import type { StateSource } from "./sqlite.ts";

/** Which plan and run an idempotency key started, so the same key always reconnects to the same capture. */
export type DetachedCaptureRecord = { plan_id: string; run_id: string };

export class DetachedCaptureStore {
  constructor(private readonly state: StateSource) {}

  find(idempotencyKey: string): DetachedCaptureRecord | null {
    return this.state()
      .database.query<DetachedCaptureRecord, [string]>("SELECT plan_id, run_id FROM detached_captures WHERE idempotency_key = ?")
      .get(idempotencyKey);
  }

  insert(idempotencyKey: string, record: DetachedCaptureRecord, createdAt: string): void {
    const state = this.state();
    state.write(() => {
      state.database
        .query("INSERT INTO detached_captures (idempotency_key, plan_id, run_id, created_at) VALUES (?, ?, ?, ?)")
        .run(idempotencyKey, record.plan_id, record.run_id, createdAt);
    });
  }
}
