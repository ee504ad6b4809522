import { join } from "node:path";
import { StateDatabase, type StateSource } from "../../../src/store/sqlite.ts";
import { temporaryFolder } from "../../support/temporary-folders.ts";

/** A fresh, fully migrated state.sqlite in its own folder: a real SQLite file, as a workspace has. */
export function freshState(prefix: string): { path: string; state: StateDatabase; source: StateSource } {
  const folder = temporaryFolder(`store-${prefix}`);
  const path = join(folder, "state.sqlite");
  const state = StateDatabase.open(path, { create: true });
  return { path, state, source: () => state };
}
