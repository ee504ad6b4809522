import { afterAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { FlameoxError } from "../../../src/domain/errors.ts";
import { syncDirectory } from "../../../src/store/atomic-file.ts";
import { StateDatabase } from "../../../src/store/sqlite.ts";

const scratch = mkdtempSync(join(tmpdir(), "flameox-state-sync-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

type SyncCall = { folder: string; inTransaction: boolean; rowsSeenByAnotherConnection: number };

/**
 * A real control plane whose directory syncs are the real fsync, each recorded with what could be seen
 * at that moment: whether the transaction was still open, and how many rows another connection reads.
 */
function observedState(name: string) {
  const path = join(scratch, `${name}.sqlite`);
  const calls: SyncCall[] = [];
  let reader: Database | undefined;
  const state = StateDatabase.open(path, {
    create: true,
    syncDirectory: (folder) => {
      reader ??= new Database(path, { readonly: true });
      const { rows } = reader.query("SELECT count(*) AS rows FROM marks").get() as { rows: number };
      calls.push({ folder, inTransaction: state.database.inTransaction, rowsSeenByAnotherConnection: rows });
      syncDirectory(folder);
    },
  });
  state.write(() => state.database.exec("CREATE TABLE marks (at TEXT)"));
  const folders = ["a", "b"].map((folder) => {
    const absolute = join(scratch, name, folder);
    mkdirSync(absolute, { recursive: true });
    return absolute;
  });
  const rows = () => (state.database.query("SELECT count(*) AS rows FROM marks").get() as { rows: number }).rows;
  const close = () => {
    reader?.close();
    state.close();
  };
  return { state, calls, folders, rows, close };
}

describe("StateDatabase.syncBeforeCommit", () => {
  test("each queued folder is synced once, after the body (nested writes included) and before the COMMIT makes its rows visible", () => {
    const { state, calls, folders, rows, close } = observedState("once");
    const [a, b] = folders as [string, string];
    state.write(() => {
      state.database.exec("INSERT INTO marks VALUES ('one')");
      state.syncBeforeCommit(a);
      state.syncBeforeCommit(b);
      state.write(() => {
        state.database.exec("INSERT INTO marks VALUES ('two')");
        state.syncBeforeCommit(a);
      });
      // Nothing is synced while the body runs.
      expect(calls).toEqual([]);
    });
    expect(calls).toEqual([
      { folder: a, inTransaction: true, rowsSeenByAnotherConnection: 0 },
      { folder: b, inTransaction: true, rowsSeenByAnotherConnection: 0 },
    ]);
    expect(rows()).toBe(2);
    // The next transaction syncs only what it queues itself.
    state.write(() => state.database.exec("INSERT INTO marks VALUES ('three')"));
    expect(calls).toHaveLength(2);
    close();
  });

  test("a rolled-back transaction syncs nothing, and the folders it queued are not carried into the next one", () => {
    const { state, calls, folders, rows, close } = observedState("rollback");
    const [a, b] = folders as [string, string];
    expect(() =>
      state.write(() => {
        state.database.exec("INSERT INTO marks VALUES ('lost')");
        state.syncBeforeCommit(a);
        throw new Error("the publication fails after placing");
      }),
    ).toThrow("the publication fails after placing");
    expect(calls).toEqual([]);
    expect(rows()).toBe(0);
    state.write(() => {
      state.database.exec("INSERT INTO marks VALUES ('kept')");
      state.syncBeforeCommit(b);
    });
    expect(calls.map((call) => call.folder)).toEqual([b]);
    close();
  });

  test("a folder queued outside a write transaction is refused as an internal error", () => {
    const { state, folders, close } = observedState("outside");
    let caught: unknown;
    try {
      state.syncBeforeCommit(folders[0]!);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(FlameoxError);
    expect((caught as FlameoxError).code).toBe("INTERNAL_ERROR");
    close();
  });
});
