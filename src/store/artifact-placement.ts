import { chmodSync, existsSync, mkdirSync, readdirSync, renameSync, rmdirSync, rmSync } from "node:fs";
import { basename, dirname } from "node:path";
import { internalError } from "../domain/errors.ts";
import { readArtifact, type RegistrationInput, registerArtifact } from "./artifact-registry.ts";
import { discardStagedArtifact, discardStagedArtifactInBackground, type StagedArtifact, type StoredArtifact } from "./artifact-store.ts";
import { crashPoint } from "./crash-points.ts";
import type { RunArtifactReference } from "./run-store.ts";
import type { Workspace } from "./workspace.ts";

export type PublishArtifactInput = Omit<RegistrationInput, "artifact"> & { artifact: StagedArtifact };

/**
 * Inside the caller's write transaction: makes the staged copy an object of the store and registers
 * the run's registration of it. Placement happens under the write lock, so whether the object is
 * already registered is decided against committed rows only: a registered object that is present is
 * reused (the staged copy dropped), a registered object that is missing is restored from this copy,
 * and otherwise the copy is renamed into place (over any unregistered leftover of a crash).
 */
export function publishArtifact(
  workspace: Workspace,
  input: PublishArtifactInput,
  registrationId?: string,
): { reference: RunArtifactReference; artifact: StoredArtifact } {
  const database = workspace.state.database;
  if (!database.inTransaction) throw internalError("An artifact can only be placed inside the publishing transaction.");
  const staged = input.artifact;
  const registered = readArtifact(database, staged.artifact_id);
  let artifact: StoredArtifact;
  if (registered && existsSync(workspace.path(registered.stored_path))) {
    discardStagedArtifactInBackground(staged);
    artifact = {
      ...withoutStaging(staged),
      stored_path: registered.stored_path,
      payload_name: registered.payload_name,
      already_present: true,
    };
  } else {
    const storedPath = registered?.stored_path ?? staged.stored_path;
    const target = workspace.path(storedPath);
    const created = mkdirSync(dirname(target), { recursive: true });
    chmodSync(staged.staged_path, 0o444);
    renameSync(staged.staged_path, target);
    workspace.state.syncBeforeCommit(dirname(target));
    // mkdirSync names the first folder it created; each created folder's entry lives in its parent, synced too.
    if (created !== undefined) {
      for (let folder = dirname(target); folder !== dirname(created) && folder !== dirname(folder); folder = dirname(folder))
        workspace.state.syncBeforeCommit(dirname(folder));
    }
    crashPoint("artifact_placed");
    artifact = { ...withoutStaging(staged), stored_path: storedPath, payload_name: basename(storedPath), already_present: false };
  }
  const reference = registerArtifact(database, { ...input, artifact }, registrationId);
  return { reference, artifact };
}

/**
 * After a publishing transaction failed: drops the staged copies, and removes an object this attempt
 * may have placed only if no committed row names it. The check and the removal run in one write
 * transaction, so a concurrent import of the same bytes that registered the object meanwhile keeps it.
 */
export function reclaimUnpublished(workspace: Workspace, staged: readonly StagedArtifact[]): void {
  for (const item of staged) discardStagedArtifact(item);
  if (staged.length === 0) return;
  workspace.state.write(() => {
    for (const item of staged) {
      if (readArtifact(workspace.state.database, item.artifact_id)) continue;
      const target = workspace.path(item.stored_path);
      if (!existsSync(target)) continue;
      rmSync(target, { force: true });
      removeEmptyObjectFolders(workspace, dirname(item.stored_path));
    }
  });
}

/** Removes `artifacts/sha256/ab/<hex>` and then `artifacts/sha256/ab` when they hold nothing. */
export function removeEmptyObjectFolders(workspace: Workspace, objectFolder: string): void {
  for (const folder of [objectFolder, dirname(objectFolder)]) {
    if (!folder.startsWith("artifacts/sha256/")) return;
    const absolute = workspace.path(folder);
    try {
      if (readdirSync(absolute).length > 0) return;
      rmdirSync(absolute);
    } catch {
      return;
    }
  }
}

function withoutStaging(staged: StagedArtifact): Omit<StoredArtifact, "already_present"> {
  const { staged_path: _staged, ...rest } = staged;
  return rest;
}
