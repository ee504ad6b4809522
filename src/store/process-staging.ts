import { Database } from "bun:sqlite";
import { existsSync, lstatSync, mkdirSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { Workspace } from "./workspace.ts";

/**
 * Every flameox process keeps its work in progress (staged artifact copies, unfinished evidence
 * bundles, DuckDB spill, temporary catalogs) in its own folder `staging/proc-<uuid>/`, and holds
 * an exclusive SQLite lock on `owner.lock` inside it for as long as it lives. The OS drops that
 * lock when the process dies however it dies (kill -9 included), so "whose is this?" has an exact
 * answer: a folder whose lock can be taken belongs to nobody and is a leftover. The folder is
 * removed when its process exits normally; a crashed process's folder is reclaimed by recovery.
 */
export const processStagingPrefix = "proc-";
const lockName = "owner.lock";
/** A folder not yet holding its lock may be one a live process is creating this instant. */
const creationGraceMs = 60_000;

type Owned = { folder: string; lock: Database };
const owned = new Map<string, Owned>();
let exitHookInstalled = false;

/** A path inside this process's staging folder of `workspace`, creating the folder (and taking its lock) on first use. */
export function processStagingPath(workspace: Workspace, ...parts: string[]): string {
  return join(ownFolder(workspace.root), ...parts);
}

function ownFolder(workspaceRoot: string): string {
  const known = owned.get(workspaceRoot);
  if (known && existsSync(join(known.folder, lockName))) return known.folder;
  if (known) release(workspaceRoot);
  for (let attempt = 0; ; attempt++) {
    const folder = join(workspaceRoot, "staging", `${processStagingPrefix}${crypto.randomUUID()}`);
    mkdirSync(folder, { recursive: true, mode: 0o700 });
    const lock = new Database(join(folder, lockName), { create: true });
    try {
      takeLock(lock);
    } catch (error) {
      lock.close();
      if (attempt >= 3) throw error;
      continue;
    }
    // A reclaimer that found the folder before the lock was taken removes it while holding the lock; start over then.
    if (!existsSync(join(folder, lockName))) {
      lock.close();
      continue;
    }
    owned.set(workspaceRoot, { folder, lock });
    installExitHook();
    return folder;
  }
}

function release(workspaceRoot: string): void {
  const entry = owned.get(workspaceRoot);
  if (!entry) return;
  owned.delete(workspaceRoot);
  try {
    entry.lock.close();
  } catch {
    // Already closed.
  }
  rmSync(entry.folder, { recursive: true, force: true });
}

/** Whatever this process staged and did not publish is garbage once it exits. */
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on("exit", () => {
    for (const root of [...owned.keys()]) release(root);
  });
}

export type StagingOwner = "this_process" | "live" | "none";

/** Who owns `staging/<name>` when it is a process folder: this process, another live one, or nobody. */
export function processStagingOwner(workspaceRoot: string, name: string): StagingOwner {
  const folder = join(workspaceRoot, "staging", name);
  if (owned.get(workspaceRoot)?.folder === folder) return "this_process";
  const lockPath = join(folder, lockName);
  if (!existsSync(lockPath)) return isYoung(folder) ? "live" : "none";
  let probe: Database;
  try {
    probe = new Database(lockPath, { readwrite: true, create: false });
  } catch {
    return isYoung(folder) ? "live" : "none";
  }
  try {
    takeLock(probe);
    probe.exec("ROLLBACK");
    return "none";
  } catch {
    return "live";
  } finally {
    probe.close();
  }
}

/**
 * Removes a process folder whose owner is gone. The lock is held while the folder is removed, so a
 * process that is creating that very folder cannot take it meanwhile (it notices and starts over).
 * Returns false, and removes nothing, when a live process holds the folder.
 */
export function removeOrphanedProcessStaging(workspaceRoot: string, name: string): boolean {
  const folder = join(workspaceRoot, "staging", name);
  if (owned.get(workspaceRoot)?.folder === folder) return false;
  const lockPath = join(folder, lockName);
  if (!existsSync(lockPath)) {
    if (isYoung(folder)) return false;
    rmSync(folder, { recursive: true, force: true });
    return true;
  }
  let probe: Database;
  try {
    probe = new Database(lockPath, { readwrite: true, create: false });
  } catch {
    return false;
  }
  try {
    try {
      takeLock(probe);
    } catch {
      return false;
    }
    for (const entry of readdirSync(folder)) if (entry !== lockName) rmSync(join(folder, entry), { recursive: true, force: true });
    rmSync(lockPath, { force: true });
    probe.exec("ROLLBACK");
  } finally {
    probe.close();
  }
  rmSync(folder, { recursive: true, force: true });
  return true;
}

/**
 * An exclusive lock without a journal file: nothing is ever written, so neither the owner nor a probe
 * changes the folder (its age is what garbage collection goes by) and no hot journal is left to roll back.
 */
function takeLock(database: Database): void {
  database.exec("PRAGMA busy_timeout = 0");
  database.exec("PRAGMA journal_mode = MEMORY");
  database.exec("BEGIN EXCLUSIVE");
}

function isYoung(folder: string): boolean {
  try {
    return Date.now() - lstatSync(folder).mtimeMs < creationGraceMs;
  } catch {
    return false;
  }
}
