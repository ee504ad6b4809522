import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { StateDatabase, type StateSource } from "../../../src/store/sqlite.ts";

/** A fresh, fully migrated state.sqlite in its own folder: a real SQLite file, as a workspace has. */
export function freshState(prefix: string): { path: string; state: StateDatabase; source: StateSource } {
  const folder = mkdtempSync(join(tmpdir(), `flameox-store-${prefix}-`));
  const path = join(folder, "state.sqlite");
  const state = StateDatabase.open(path, { create: true });
  return { path, state, source: () => state };
}
