import { lstatSync, readdirSync } from "node:fs";
import { join, relative } from "node:path";
import { adapterDescriptor } from "../adapters/registry.ts";
import { loadWorkspacePolicy } from "../config/workspace-policy.ts";
import { executionRefused, invalidRequest } from "../domain/errors.ts";
import { runResourceUri } from "../domain/resource-uris.ts";
import { publishArtifact, reclaimUnpublished } from "../store/artifact-placement.ts";
import { type StagedArtifact, stageArtifactFileSync } from "../store/artifact-store.ts";
import { advanceCorpus, type CorpusHead } from "../store/corpus.ts";
import { isQuarantineId, listQuarantine, quarantineObjectFolder, removeQuarantine } from "../store/quarantine.ts";
import { readRun, reviseRun, type RunArtifactReference, type RunManifest } from "../store/run-store.ts";
import type { Workspace } from "../store/workspace.ts";
import type { WorkspaceHandle } from "../store/workspace-handle.ts";

export type QuarantineRestoreResult = {
  schema_version: 1;
  quarantine_id: string;
  run_id: string;
  restored_artifacts: { artifact_id: string; display_name: string; kind: string; byte_length: number }[];
  corpus_commit_id: string;
  resource_uri: string;
  next_tool: "get_run";
};

/** Files of one quarantined run at most; a capture's outputs are a handful. */
const maxRestoredFiles = 256;

/**
 * flameox recover --quarantine ID: the partial outputs of a capture whose flameox process died are
 * registered as artifacts of the run they came from (kept, not extracted: they were written by a
 * capture that never finished, which the run's record says), and the quarantine entry goes away.
 */
export class QuarantineService {
  constructor(private readonly workspace: WorkspaceHandle) {}

  restore(id: string): QuarantineRestoreResult {
    const workspace = this.workspace.open();
    const entry = isQuarantineId(id) ? listQuarantine(workspace).find((item) => item.quarantine_id === id) : undefined;
    if (!entry) {
      const known = listQuarantine(workspace).map((item) => item.quarantine_id);
      throw invalidRequest(`No quarantine entry ${JSON.stringify(id)} exists in this workspace.`, {
        details: { quarantine_ids: known.slice(0, 20) },
        remediation: [known.length > 0 ? `Quarantine entries here: ${known.slice(0, 5).join(", ")}.` : "The quarantine is empty."],
      });
    }
    const run = entry.run_id ? readRun(workspace.state.database, entry.run_id) : null;
    if (!run || entry.state !== "quarantined") {
      throw executionRefused(`Quarantine entry ${id} holds no run's outputs that can be registered.`, {
        details: { quarantine_id: id, state: entry.state },
        remediation: ["Only partial capture outputs can be restored; inspect this entry under .diagnostics/quarantine/ by hand."],
      });
    }
    const folder = quarantineObjectFolder(workspace, id);
    const maxBytes = loadWorkspacePolicy(workspace.root).limits.max_artifact_bytes;
    const staged: { name: string; artifact: StagedArtifact }[] = [];
    try {
      for (const path of regularFiles(folder))
        staged.push({ name: relative(folder, path), artifact: stageArtifactFileSync(workspace, path, { maxBytes }) });
      const { head, references } = registerWithRun(workspace, run, id, staged);
      removeQuarantine(workspace, id);
      return {
        schema_version: 1,
        quarantine_id: id,
        run_id: run.run_id,
        restored_artifacts: references.map((reference) => ({
          artifact_id: reference.artifact_id,
          display_name: reference.display_name,
          kind: reference.kind,
          byte_length: reference.byte_length,
        })),
        corpus_commit_id: head.commit_id,
        resource_uri: runResourceUri(run.run_id),
        next_tool: "get_run",
      };
    } catch (error) {
      reclaimUnpublished(
        workspace,
        staged.map((item) => item.artifact),
      );
      throw error;
    }
  }
}

/** One transaction: every staged output placed and registered with the run, the run's next revision, the corpus commit. */
function registerWithRun(
  workspace: Workspace,
  run: RunManifest,
  id: string,
  staged: { name: string; artifact: StagedArtifact }[],
): { head: CorpusHead; references: RunArtifactReference[] } {
  const defaultKind = adapterDescriptor(run.adapter ?? "")?.artifactKinds[0] ?? "collector_metadata";
  return workspace.state.write(() => {
    const database = workspace.state.database;
    const references = staged.map(({ name, artifact }) => {
      const stream = name === "stdout.txt" ? "stdout" : name === "stderr.txt" ? "stderr" : null;
      return publishArtifact(workspace, {
        runId: run.run_id,
        artifact,
        displayName: name,
        kind: stream ? "process_output" : defaultKind,
        role: stream ?? "recovered_output",
        mediaType: stream ? "text/plain" : null,
        sensitivity: "internal",
        producer: run.adapter,
        producerVersion: null,
        format: stream ? "text" : null,
      }).reference;
    });
    const current = readRun(database, run.run_id)!;
    reviseRun(
      database,
      run.run_id,
      current.revision,
      (manifest) => ({
        ...manifest,
        capture_status: "registered",
        artifacts: [...manifest.artifacts, ...references],
        limitations: [
          ...manifest.limitations,
          `${references.length} partial outputs were restored from quarantine; they were written by a capture that never finished and were not extracted.`,
        ],
      }),
      "restored from quarantine",
    );
    return { head: advanceCorpus(database, workspace.id, `restore quarantine ${id}`), references };
  });
}

/** Regular files below `folder` (links and special files are skipped), at most maxRestoredFiles. */
function regularFiles(folder: string): string[] {
  const found: string[] = [];
  const pending = [folder];
  while (pending.length > 0 && found.length < maxRestoredFiles) {
    const current = pending.pop()!;
    for (const name of readdirSync(current).sort()) {
      const path = join(current, name);
      const stat = lstatSync(path);
      if (stat.isDirectory()) pending.push(path);
      else if (stat.isFile()) found.push(path);
    }
  }
  return found.slice(0, maxRestoredFiles).sort();
}
