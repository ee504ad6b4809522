import type { Database } from "bun:sqlite";
import { existsSync, lstatSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { removeEmptyObjectFolders } from "./artifact-placement.ts";
import { processStagingOwner, processStagingPrefix, removeOrphanedProcessStaging } from "./process-staging.ts";
import type { Workspace } from "./workspace.ts";

/**
 * What a crashed or killed flameox process can leave in a workspace, found by comparing the folders
 * with the committed rows and the live owners:
 * - `orphaned_staging`: a process staging folder whose owner is gone, a run's staging folder whose
 *   run is closed (or was never started), or anything else in staging/ no live process owns;
 * - `unregistered_bundle`: a folder in evidence/ that no evidence_bundles row names;
 * - `unregistered_artifact`: a file under artifacts/ that is not a registered object's stored path;
 * - `empty_artifact_folder`: an object folder with nothing in it.
 * None was ever visible: publication moves objects and bundles into place inside the transaction
 * that registers them, so these are exactly the crash windows, and reclaiming them loses nothing.
 */
export type LeftoverKind = "orphaned_staging" | "unregistered_bundle" | "unregistered_artifact" | "empty_artifact_folder";

export type Leftover = {
  kind: LeftoverKind;
  /** Relative to the workspace folder (staging/…, evidence/…, artifacts/…). */
  path: string;
  bytes: number;
  /** The newest modification time in the tree, in ms since the epoch. */
  modified_ms: number;
};

/** Whether a run's staging folder is in use ("owned"), belongs to a run whose owner died ("stale", run recovery's), or to nobody. */
export type RunStagingOwner = (runId: string) => "owned" | "stale" | "none";

/** A consumed capture plan starts its run within moments; its staging folder is in use meanwhile. */
const consumedPlanGraceMs = 60_000;

/** Lists candidates from the folders, then confirms them against committed rows under the write lock. */
export function findLeftovers(workspace: Workspace, runStagingOwner: RunStagingOwner): Leftover[] {
  const candidates = [...stagingCandidates(workspace, runStagingOwner), ...evidenceCandidates(workspace), ...artifactCandidates(workspace)];
  if (candidates.length === 0) return [];
  return workspace.state.write(() => confirm(workspace, candidates));
}

/**
 * Removes leftovers: each one is confirmed again under the write lock, so an object or bundle a live
 * process registered meanwhile is kept. Returns what was removed.
 */
export function reclaimLeftovers(workspace: Workspace, leftovers: readonly Leftover[]): Leftover[] {
  const removed: Leftover[] = [];
  for (const leftover of leftovers.filter((item) => item.kind === "orphaned_staging")) {
    const name = leftover.path.slice("staging/".length);
    if (name.startsWith(processStagingPrefix)) {
      if (removeOrphanedProcessStaging(workspace.root, name)) removed.push(leftover);
    } else {
      rmSync(workspace.path(leftover.path), { recursive: true, force: true });
      removed.push(leftover);
    }
  }
  const stored = leftovers.filter((item) => item.kind !== "orphaned_staging");
  if (stored.length === 0) return removed;
  workspace.state.write(() => {
    for (const leftover of confirm(workspace, stored)) {
      const absolute = workspace.path(leftover.path);
      if (leftover.kind === "empty_artifact_folder") removeEmptyObjectFolders(workspace, leftover.path);
      else rmSync(absolute, { recursive: true, force: true });
      if (leftover.kind === "unregistered_artifact") removeEmptyObjectFolders(workspace, parentOf(leftover.path));
      removed.push(leftover);
    }
  });
  return removed;
}

/** Bytes and newest modification time of a file or folder tree (links are not followed). */
export function treeFacts(path: string): { bytes: number; modified_ms: number } {
  let bytes = 0;
  let newest = 0;
  const pending = [path];
  while (pending.length > 0) {
    const current = pending.pop()!;
    let stat: ReturnType<typeof lstatSync>;
    try {
      stat = lstatSync(current);
    } catch {
      continue;
    }
    newest = Math.max(newest, stat.mtimeMs);
    if (stat.isDirectory()) {
      let names: string[] = [];
      try {
        names = readdirSync(current);
      } catch {
        // Unreadable: counted by what could be read.
      }
      for (const name of names) pending.push(join(current, name));
    } else bytes += stat.size;
  }
  return { bytes, modified_ms: newest };
}

function leftover(workspace: Workspace, kind: LeftoverKind, path: string): Leftover {
  return { kind, path, ...treeFacts(workspace.path(path)) };
}

function entries(folder: string): string[] {
  try {
    return readdirSync(folder).sort();
  } catch {
    return [];
  }
}

function stagingCandidates(workspace: Workspace, runStagingOwner: RunStagingOwner): Leftover[] {
  const pendingRuns = pendingCaptureRuns(workspace.state.database, Date.now());
  const found: Leftover[] = [];
  for (const name of entries(workspace.path("staging"))) {
    if (name.startsWith(processStagingPrefix)) {
      if (processStagingOwner(workspace.root, name) !== "none") continue;
    } else if (name.startsWith("run-")) {
      const runId = name.slice("run-".length);
      if (pendingRuns.has(runId) || runStagingOwner(runId) !== "none") continue;
    }
    found.push(leftover(workspace, "orphaned_staging", `staging/${name}`));
  }
  return found;
}

function evidenceCandidates(workspace: Workspace): Leftover[] {
  return entries(workspace.path("evidence")).map((name) => leftover(workspace, "unregistered_bundle", `evidence/${name}`));
}

/** Every file and folder under artifacts/sha256/ (its two levels of folders, and the objects in them). */
function artifactCandidates(workspace: Workspace): Leftover[] {
  const found: Leftover[] = [];
  const root = workspace.path("artifacts");
  for (const top of entries(root)) {
    if (top !== "sha256") {
      found.push(leftover(workspace, "unregistered_artifact", `artifacts/${top}`));
      continue;
    }
    for (const prefix of entries(join(root, "sha256"))) {
      const prefixPath = `artifacts/sha256/${prefix}`;
      const objects = entries(workspace.path(prefixPath));
      if (objects.length === 0 && isFolder(workspace.path(prefixPath)))
        found.push(leftover(workspace, "empty_artifact_folder", prefixPath));
      for (const object of objects) {
        const objectPath = `${prefixPath}/${object}`;
        if (!isFolder(workspace.path(objectPath))) {
          found.push(leftover(workspace, "unregistered_artifact", objectPath));
          continue;
        }
        const files = entries(workspace.path(objectPath));
        if (files.length === 0) found.push(leftover(workspace, "empty_artifact_folder", objectPath));
        for (const file of files) found.push(leftover(workspace, "unregistered_artifact", `${objectPath}/${file}`));
      }
    }
  }
  return found;
}

/** Keeps the candidates that are still there and still named by no committed row. */
function confirm(workspace: Workspace, candidates: readonly Leftover[]): Leftover[] {
  const database = workspace.state.database;
  const objects = new Set(
    database
      .query<{ stored_path: string }, []>("SELECT stored_path FROM artifacts")
      .all()
      .map((row) => row.stored_path),
  );
  const bundles = new Set(
    database
      .query<{ bundle_id: string }, []>("SELECT bundle_id FROM evidence_bundles")
      .all()
      .map((row) => row.bundle_id),
  );
  return candidates.filter((candidate) => {
    const absolute = workspace.path(candidate.path);
    if (!existsSync(absolute)) return false;
    switch (candidate.kind) {
      case "unregistered_bundle":
        return !bundles.has(candidate.path.slice("evidence/".length));
      case "unregistered_artifact":
        return !objects.has(candidate.path);
      case "empty_artifact_folder":
        return isFolder(absolute) && entries(absolute).length === 0;
      default:
        return true;
    }
  });
}

/** Run ids of capture plans not yet executed (unconsumed and unexpired, or consumed a moment ago). */
function pendingCaptureRuns(database: Database, nowMs: number): Set<string> {
  const rows = database
    .query<{ run_id: string; consumed_at: string | null; expires_at_ms: number }, []>(
      "SELECT run_id, consumed_at, expires_at_ms FROM capture_plans WHERE NOT EXISTS (SELECT 1 FROM runs WHERE runs.run_id = capture_plans.run_id)",
    )
    .all();
  return new Set(
    rows
      .filter((row) => (row.consumed_at === null ? row.expires_at_ms > nowMs : nowMs - Date.parse(row.consumed_at) < consumedPlanGraceMs))
      .map((row) => row.run_id),
  );
}

function isFolder(path: string): boolean {
  try {
    return lstatSync(path).isDirectory();
  } catch {
    return false;
  }
}

function parentOf(path: string): string {
  return path.slice(0, path.lastIndexOf("/"));
}
