import type { OperationStatus } from "../domain/results/providers.ts";
import type { StateSource } from "./sqlite.ts";

/** The process that runs an operation: (pid, start time, boot id) names it exactly, as a run's lease does. */
export type OperationOwner = { pid: number; start_time: string | null; boot_id: string | null };

export type StoredOperation = { status: OperationStatus; owner: OperationOwner };

type Row = {
  status: string;
  owner_pid: number;
  owner_start_time: string | null;
  owner_boot_id: string | null;
};

/**
 * Capability setup operations, one row per idempotency key. Every change is a compare-and-swap on
 * the revision, so two writers (the owner and a reader marking an orphan) never overwrite each other.
 */
export class CapabilitySetupStore {
  constructor(private readonly state: StateSource) {}

  find(operationId: string): StoredOperation | null {
    const row = this.state()
      .database.query<Row, [string]>(
        "SELECT status, owner_pid, owner_start_time, owner_boot_id FROM capability_operations WHERE operation_id = ?",
      )
      .get(operationId);
    return row ? stored(row) : null;
  }

  /** The most recent operation, for list_capabilities' latest_setup. */
  latest(): StoredOperation | null {
    const row = this.state()
      .database.query<Row, []>(
        "SELECT status, owner_pid, owner_start_time, owner_boot_id FROM capability_operations ORDER BY created_at DESC, operation_id LIMIT 1",
      )
      .get();
    return row ? stored(row) : null;
  }

  count(): number {
    return this.state().database.query<{ count: number }, []>("SELECT COUNT(*) AS count FROM capability_operations").get()?.count ?? 0;
  }

  /** Inserts a new operation; returns the one already stored under that id when another writer was first. */
  insert(status: OperationStatus, owner: OperationOwner): StoredOperation {
    const state = this.state();
    return state.write(() => {
      const existing = this.find(status.operation_id);
      if (existing) return existing;
      state.database
        .query(
          `INSERT INTO capability_operations
             (operation_id, request_digest, revision, state, owner_pid, owner_start_time, owner_boot_id, created_at, updated_at, status)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        )
        .run(
          status.operation_id,
          status.request_digest,
          status.revision,
          status.state,
          owner.pid,
          owner.start_time,
          owner.boot_id,
          status.created_at,
          status.updated_at,
          JSON.stringify(status),
        );
      return { status, owner };
    });
  }

  /** Replaces the status if its stored revision is still `expectedRevision`; false when someone else moved it on. */
  update(status: OperationStatus, expectedRevision: number): boolean {
    const state = this.state();
    return state.write(() => {
      const result = state.database
        .query(
          "UPDATE capability_operations SET revision = ?, state = ?, updated_at = ?, status = ? WHERE operation_id = ? AND revision = ?",
        )
        .run(status.revision, status.state, status.updated_at, JSON.stringify(status), status.operation_id, expectedRevision);
      return result.changes === 1;
    });
  }
}

function stored(row: Row): StoredOperation {
  return {
    status: JSON.parse(row.status) as OperationStatus,
    owner: { pid: row.owner_pid, start_time: row.owner_start_time, boot_id: row.owner_boot_id },
  };
}
