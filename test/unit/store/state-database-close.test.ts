import { afterAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { Database } from "bun:sqlite";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

setDefaultTimeout(30_000);
const scratch = mkdtempSync(join(tmpdir(), "flameox-state-close-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
const source = join(import.meta.dir, "../../../src/store/sqlite.ts");

/** A process that opens a control plane, commits one write, closes it the given way and exits. */
function writeAndExit(path: string, close: "close" | "closeKeepingLog"): void {
  const script = `const { StateDatabase } = await import(${JSON.stringify(source)});
const state = StateDatabase.open(${JSON.stringify(path)}, { create: true });
state.write(() => state.database.exec("CREATE TABLE IF NOT EXISTS marks (at TEXT); INSERT INTO marks VALUES ('${close}')"));
state.${close}();`;
  const child = Bun.spawnSync([process.execPath, "-e", script], { stdout: "pipe", stderr: "pipe" });
  if (child.exitCode !== 0) throw new Error(child.stderr.toString());
}

describe("StateDatabase.closeKeepingLog", () => {
  test("a process that ends this way leaves its log unmerged, and the next connection reads every committed row", () => {
    const path = join(scratch, "kept.sqlite");
    writeAndExit(path, "closeKeepingLog");
    // SQLite deletes the log once its closing checkpoint has merged it: it is still here, so none ran.
    expect(existsSync(`${path}-wal`)).toBe(true);
    writeAndExit(path, "closeKeepingLog");
    const reader = new Database(path, { readonly: true });
    expect(reader.query("SELECT at FROM marks").all()).toEqual([{ at: "closeKeepingLog" }, { at: "closeKeepingLog" }]);
    reader.close();
    // An ordinary close after it merges everything, as before.
    writeAndExit(path, "close");
    expect(existsSync(`${path}-wal`)).toBe(false);
    const after = new Database(path, { readonly: true });
    expect((after.query("SELECT count(*) AS rows FROM marks").get() as { rows: number }).rows).toBe(3);
    after.close();
  });
});
