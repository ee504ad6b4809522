/**
 * Test scratch folders under the system temporary folder, removed after the last test: a full suite
 * makes hundreds (one project per e2e test, some holding 200 MB artifacts), and left behind they fill
 * the disk run after run. bunfig.toml preloads remove-temporary-folders.ts, whose afterAll runs once
 * after every file (bun test fires no process exit event). FLAMEOX_KEEP_TEST_FOLDERS=1 keeps them for
 * debugging a failure.
 */
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const made: string[] = [];

/** Removes every folder made so far. */
export function removeTemporaryFolders(): void {
  for (const folder of made.splice(0)) {
    try {
      rmSync(folder, { recursive: true, force: true });
    } catch {
      // A folder something still holds (a detached process's open file on another OS) stays.
    }
  }
}

/** Removes `folder` (and everything in it) after the last test. */
export function removeAfterTests(folder: string): string {
  if (process.env.FLAMEOX_KEEP_TEST_FOLDERS !== "1") made.push(folder);
  return folder;
}

/** A fresh folder `flameox-<prefix>-XXXXXX` (its real path), removed after the last test. */
export function temporaryFolder(prefix: string): string {
  return removeAfterTests(realpathSync(mkdtempSync(join(tmpdir(), `flameox-${prefix}-`))));
}
