import { existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, renameSync, rmSync } from "node:fs";
import { dirname, isAbsolute, join, relative, sep } from "node:path";
import { executionRefused, invalidRequest, workspaceInvalid } from "../domain/errors.ts";
import { removeEmptyObjectFolders } from "./artifact-placement.ts";
import { writeFileAtomically } from "./atomic-file.ts";
import type { Workspace } from "./workspace.ts";

/**
 * Recoverable trash for garbage collection: trash/<id>/manifest.json names every moved path
 * (relative to the workspace folder) and the retention roots that kept everything else, and
 * trash/<id>/objects/<path> holds the moved files. The manifest is written before anything moves
 * (state `moving`), so an interrupted apply or restore is finished by `flameox recover`. A manifest
 * is `recoverable` until it expires; only then may it be purged.
 */
export type TrashEntry = { path: string; category: string; bytes: number; modified_at: string };

export type RetentionRoot = { kind: string; id: string; detail: string | null };

export type TrashManifest = {
  schema_version: 1;
  trash_id: string;
  state: "moving" | "recoverable" | "restoring";
  created_at: string;
  expires_at: string;
  minimum_age_hours: number;
  retention_roots: RetentionRoot[];
  entries: TrashEntry[];
};

const trashIdPattern = /^trash-[0-9]{8}T[0-9]{6}Z-[0-9a-f]{8}$/;

export function newTrashId(now: Date): string {
  const stamp = now
    .toISOString()
    .replace(/[-:]/g, "")
    .replace(/\.\d+Z$/, "Z");
  return `trash-${stamp}-${crypto.randomUUID().slice(0, 8)}`;
}

/** Moves every entry into a new trash folder; the manifest goes first. */
export function moveToTrash(workspace: Workspace, manifest: Omit<TrashManifest, "state" | "schema_version">): TrashManifest {
  const written: TrashManifest = { schema_version: 1, state: "moving", ...manifest };
  mkdirSync(workspace.path("trash", written.trash_id, "objects"), { recursive: true });
  writeManifest(workspace, written);
  return finishMoving(workspace, written);
}

function finishMoving(workspace: Workspace, manifest: TrashManifest): TrashManifest {
  for (const entry of manifest.entries) {
    const object = objectPath(workspace, manifest.trash_id, entry.path);
    if (existsSync(object) || !existsSync(workspace.path(entry.path))) continue;
    mkdirSync(dirname(object), { recursive: true });
    renameSync(workspace.path(entry.path), object);
    // An artifact file's object folder has nothing else in it; restore recreates it.
    removeEmptyObjectFolders(workspace, dirname(entry.path));
  }
  const done: TrashManifest = { ...manifest, state: "recoverable" };
  writeManifest(workspace, done);
  return done;
}

/** Moves every entry back to where it was; refuses, moving nothing, when one of those paths is taken again. */
export function restoreFromTrash(workspace: Workspace, manifest: TrashManifest): string[] {
  if (manifest.state === "moving") throw unfinished(manifest);
  if (manifest.state === "recoverable") {
    const taken = manifest.entries.filter(
      (entry) => existsSync(objectPath(workspace, manifest.trash_id, entry.path)) && existsSync(workspace.path(entry.path)),
    );
    if (taken.length > 0) {
      throw executionRefused(`${taken.length} paths of trash manifest ${manifest.trash_id} exist again, so it cannot be restored.`, {
        details: { trash_id: manifest.trash_id, paths: taken.slice(0, 20).map((entry) => `.diagnostics/${entry.path}`) },
        remediation: ["Move those paths aside first (or leave the trash to expire), then restore again."],
      });
    }
    writeManifest(workspace, { ...manifest, state: "restoring" });
  }
  return finishRestoring(workspace, manifest);
}

function finishRestoring(workspace: Workspace, manifest: TrashManifest): string[] {
  const restored: string[] = [];
  for (const entry of [...manifest.entries].reverse()) {
    const object = objectPath(workspace, manifest.trash_id, entry.path);
    if (!existsSync(object) || existsSync(workspace.path(entry.path))) continue;
    mkdirSync(dirname(workspace.path(entry.path)), { recursive: true });
    renameSync(object, workspace.path(entry.path));
    restored.push(entry.path);
  }
  rmSync(workspace.path("trash", manifest.trash_id), { recursive: true, force: true });
  return restored.reverse();
}

/** Deletes an expired, recoverable manifest and everything it holds. */
export function purgeTrash(workspace: Workspace, manifest: TrashManifest, now: Date): void {
  if (manifest.state !== "recoverable") throw unfinished(manifest);
  if (Date.parse(manifest.expires_at) > now.getTime()) {
    throw executionRefused(`Trash manifest ${manifest.trash_id} has not expired yet (it expires at ${manifest.expires_at}).`, {
      details: { trash_id: manifest.trash_id, expires_at: manifest.expires_at },
      remediation: [
        "Purge only deletes expired trash: wait until it expires, or restore it with flameox gc --restore.",
        "Nothing was deleted.",
      ],
    });
  }
  rmSync(workspace.path("trash", manifest.trash_id), { recursive: true, force: true });
}

/** Finishes moves and restores that a crash interrupted; returns their trash ids. */
export function resumeTrashMoves(workspace: Workspace): string[] {
  const resumed: string[] = [];
  for (const manifest of listTrash(workspace)) {
    if (manifest.state === "moving") finishMoving(workspace, manifest);
    else if (manifest.state === "restoring") finishRestoring(workspace, manifest);
    else continue;
    resumed.push(manifest.trash_id);
  }
  return resumed;
}

export function listTrash(workspace: Workspace): TrashManifest[] {
  const root = workspace.path("trash");
  if (!existsSync(root)) return [];
  return readdirSync(root)
    .filter((name) => trashIdPattern.test(name) && existsSync(join(root, name, "manifest.json")))
    .sort()
    .map((name) => readManifest(workspace, name));
}

/** A manifest named by its trash id, or by the path of its manifest.json (inside this workspace's trash). */
export function findTrashManifest(workspace: Workspace, reference: string): TrashManifest {
  let id = reference;
  if (isAbsolute(reference)) {
    const trashRoot = realpathSync(workspace.path("trash"));
    const real = existsSync(reference) ? realpathSync(reference) : reference;
    const inside = relative(trashRoot, real).split(sep);
    if (inside.length !== 2 || inside[1] !== "manifest.json") {
      throw invalidRequest("The trash manifest must be a trash/<id>/manifest.json of this workspace, or a trash id.", {
        remediation: ["Pass the manifest path flameox gc --apply printed, or its trash_id."],
      });
    }
    id = inside[0]!;
  }
  if (!trashIdPattern.test(id) || !existsSync(workspace.path("trash", id, "manifest.json"))) {
    throw workspaceInvalid(`No trash manifest ${id} exists in this workspace.`, {
      details: { trash_id: id },
      remediation: ["List .diagnostics/trash/ for the manifests there, or run flameox gc to see what could be collected."],
    });
  }
  return readManifest(workspace, id);
}

function readManifest(workspace: Workspace, id: string): TrashManifest {
  try {
    const parsed = JSON.parse(readFileSync(workspace.path("trash", id, "manifest.json"), "utf8")) as TrashManifest;
    if (parsed.trash_id !== id || !Array.isArray(parsed.entries)) throw new Error("inconsistent manifest");
    return parsed;
  } catch (error) {
    throw workspaceInvalid(`Trash manifest ${id} cannot be read.`, {
      details: { trash_id: id },
      remediation: ["Inspect .diagnostics/trash/ by hand; flameox never deletes a trash folder whose manifest it cannot read."],
      cause: error,
    });
  }
}

function writeManifest(workspace: Workspace, manifest: TrashManifest): void {
  writeFileAtomically(workspace.path("trash", manifest.trash_id, "manifest.json"), `${JSON.stringify(manifest, null, 2)}\n`);
}

function objectPath(workspace: Workspace, trashId: string, path: string): string {
  return workspace.path("trash", trashId, "objects", path);
}

function unfinished(manifest: TrashManifest) {
  return executionRefused(`Trash manifest ${manifest.trash_id} is in the middle of a move (${manifest.state}).`, {
    details: { trash_id: manifest.trash_id, state: manifest.state },
    remediation: ["Run flameox recover to finish the interrupted move, then try again."],
  });
}
