import { Database } from "bun:sqlite";
import { internalError, writeLockTimeout } from "../domain/errors.ts";
import { syncDirectory } from "./atomic-file.ts";
import { crashPoint } from "./crash-points.ts";
import { migrations } from "./migrations.ts";

/** Opens the control plane on first use, so an absent workspace is a typed error per call. */
export type StateSource = () => StateDatabase;

/**
 * The control plane. SQLite is the single authority for mutable state: WAL, and every write one
 * `BEGIN IMMEDIATE` transaction so concurrent flameox processes serialize instead of deadlocking.
 */
export class StateDatabase {
  readonly database: Database;
  /** Folders the open write transaction changed on disk, synced once each just before it commits. */
  private readonly changedDirectories = new Set<string>();

  private constructor(
    database: Database,
    private readonly syncFolder: (path: string) => void,
  ) {
    this.database = database;
  }

  /** `syncDirectory` defaults to the real fsync; tests pass one that also records when it ran. */
  static open(path: string, options: { create: boolean; busyTimeoutMs?: number; syncDirectory?: (path: string) => void }): StateDatabase {
    const database = new Database(path, { create: options.create, readwrite: true, strict: true });
    database.exec(`PRAGMA busy_timeout = ${options.busyTimeoutMs ?? 5000}`);
    database.exec("PRAGMA journal_mode = WAL");
    database.exec("PRAGMA synchronous = NORMAL");
    database.exec("PRAGMA foreign_keys = ON");
    const state = new StateDatabase(database, options.syncDirectory ?? syncDirectory);
    state.migrate();
    return state;
  }

  private migrate(): void {
    this.database.exec(
      "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)",
    );
    const applied = new Set(
      this.database
        .query<{ version: number }, []>("SELECT version FROM schema_migrations")
        .all()
        .map((row) => row.version),
    );
    for (const migration of migrations) {
      if (applied.has(migration.version)) continue;
      this.write(() => {
        // Another process may have applied it while we waited for the write lock.
        const done = this.database
          .query<{ version: number }, [number]>("SELECT version FROM schema_migrations WHERE version = ?")
          .get(migration.version);
        if (done) return;
        this.database.exec(migration.sql);
        this.database
          .query("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)")
          .run(migration.version, migration.name, new Date().toISOString());
      });
    }
  }

  /**
   * One write transaction. Lock waits beyond busy_timeout become WRITE_LOCK_TIMEOUT. A write inside
   * another joins it, so repositories can write on their own or as part of a caller's transaction.
   */
  write<T>(body: () => T): T {
    if (this.database.inTransaction) return body();
    try {
      this.database.exec("BEGIN IMMEDIATE");
    } catch (error) {
      if (isBusy(error)) {
        throw writeLockTimeout("state.sqlite", "Another flameox process holds the workspace write lock.");
      }
      throw error;
    }
    try {
      const result = body();
      if (this.changedDirectories.size > 0) {
        for (const folder of this.changedDirectories) this.syncFolder(folder);
        crashPoint("placements_synced");
      }
      this.database.exec("COMMIT");
      return result;
    } catch (error) {
      this.database.exec("ROLLBACK");
      throw error;
    } finally {
      this.changedDirectories.clear();
    }
  }

  /**
   * Inside a write transaction: `folder` gained an entry (a rename into artifacts/ or evidence/) that the
   * rows about to commit name. It is fsynced once, however many entries the transaction moved into it,
   * after the body and before COMMIT, so no committed row names an entry a power cut could undo. Synced
   * together at the end, a publication's folders share one filesystem journal commit (the first fsync
   * writes it; the others find their entries already on disk) instead of one fsync after each rename.
   */
  syncBeforeCommit(folder: string): void {
    if (!this.database.inTransaction) throw internalError("A folder can only be queued for sync inside a write transaction.");
    this.changedDirectories.add(folder);
  }

  close(): void {
    this.database.close(false);
  }

  /**
   * Moves what the WAL holds into the database as far as no reader or writer is in the way (PASSIVE: it
   * never waits for one). A capture does this while its collector runs, so the log its last commits
   * leave (closeKeepingLog) stays short and no later commit pays for a large automatic checkpoint.
   */
  checkpoint(): void {
    try {
      this.database.query("PRAGMA wal_checkpoint(PASSIVE)").get();
    } catch {
      // Best effort: the next checkpoint (automatic, or a plain close) merges what this one could not.
    }
  }

  /**
   * Closes without the checkpoint SQLite runs when the last connection to a WAL database closes: two
   * fsyncs, 10-50 ms at the end of a CLI command on a busy disk. Committed transactions stay in the
   * WAL, where every later connection reads them and the next checkpoint (a writer passing
   * wal_autocheckpoint, a server closing) moves them; durability is what synchronous = NORMAL gives
   * anyway. A read-only connection holds a read transaction meanwhile, so the closing one cannot take the
   * exclusive lock a checkpoint needs; it stays open until the process exits, and a read-only connection
   * never checkpoints, even when it closes last.
   */
  closeKeepingLog(): void {
    let reader: Database | null = null;
    try {
      reader = new Database(this.database.filename, { readonly: true });
      reader.exec("BEGIN");
      reader.query("SELECT count(*) FROM sqlite_master").get();
    } catch {
      reader?.close(false);
      reader = null;
    }
    this.database.close(false);
    if (reader) logHolders.push(reader);
  }
}

/** Read-only connections that keep closed control planes' logs from being checkpointed at exit. */
const logHolders: Database[] = [];

function isBusy(error: unknown): boolean {
  const message = error instanceof Error ? error.message : String(error);
  return /SQLITE_BUSY|database is locked/i.test(message);
}
