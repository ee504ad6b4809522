import { statSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { loadWorkspacePolicy } from "../config/workspace-policy.ts";
import { type PublishArtifactInput, reclaimUnpublished } from "../store/artifact-placement.ts";
import { type StagedArtifact, stageArtifactFileSync } from "../store/artifact-store.ts";
import type { Workspace } from "../store/workspace.ts";
import { processCancelled, toFlameoxError } from "../domain/errors.ts";
import type { ReductionIntent, ReductionRecord } from "../domain/reductions.ts";
import type { ReductionStore } from "../store/reduction-store.ts";
import { publishImportRun } from "./import-run.ts";

/**
 * The reduced candidate becomes a new artifact, registered in a new import run together with the
 * predicate's output on it, in one transaction with the corpus commit. The run's manifest says where
 * the artifact came from (original artifact, reduction, plan), so get_run and get_artifact show
 * its provenance without the reduction record.
 */
export function publishReduction(
  workspace: Workspace,
  intent: ReductionIntent,
  result: { bytes: Uint8Array; scratch: string; predicateOutputs: string[]; attempts: number; final: boolean },
): { runId: string; artifactId: string } {
  const policy = loadWorkspacePolicy(workspace.root);
  const original = intent.original;
  const path = join(result.scratch, `reduced${original.extension}`);
  writeFileSync(path, result.bytes, { mode: 0o600 });
  const maxBytes = policy.limits.max_artifact_bytes;
  const staged: StagedArtifact[] = [];
  try {
    const reduced = stageArtifactFileSync(workspace, path, { maxBytes });
    staged.push(reduced);
    const outputs = result.predicateOutputs.map((output) => {
      const artifact = stageArtifactFileSync(workspace, output, { maxBytes });
      staged.push(artifact);
      return { path: output, artifact };
    });
    const runId = crypto.randomUUID();
    const registrations: PublishArtifactInput[] = [
      {
        runId,
        artifact: reduced,
        displayName: `reduced-${original.display_name}`.slice(0, 200),
        kind: original.kind,
        role: result.final ? "reduction_final" : "reduction_best_known",
        mediaType: original.media_type,
        sensitivity: original.sensitivity,
        producer: "flameox.reduction",
        producerVersion: intent.engine_version,
        format: original.format,
      },
      ...outputs.map(({ path: output, artifact }) => ({
        runId,
        artifact,
        displayName: basename(output),
        kind: "process_output",
        role: `reduction_${basename(output)
          .replace(/\.txt$/, "")
          .replaceAll("-", "_")}`,
        mediaType: "text/plain",
        sensitivity: "internal",
        producer: intent.predicate.workload_name,
        producerVersion: null,
        format: "text",
      })),
    ];
    publishImportRun(workspace, {
      runId,
      registrations,
      workload: { name: intent.predicate.workload_name, definitionId: intent.predicate.workload_definition_id },
      limitations: [
        `${result.final ? "Reduced" : "Best known (not final) reduction"} of ${original.artifact_id} by reduction ${intent.reduction_id} after ${result.attempts} attempts; get_reduction shows each attempt.`,
      ],
      limitationDetails: [
        {
          source: "reduction",
          code: "reduction_provenance",
          message: `original_artifact_id=${original.artifact_id} reduction_id=${intent.reduction_id} partitioner=${intent.request.partitioner}`,
        },
      ],
      reasons: { run: "reduction", corpus: `reduction ${intent.reduction_id}` },
    });
    return { runId, artifactId: reduced.artifact_id };
  } catch (error) {
    reclaimUnpublished(workspace, staged);
    throw error;
  }
}

/** What one predicate run may print, stdout and stderr together, for either engine. */
export const predicateOutputBytes = 256 * 1024;

/**
 * Runs an engine's reduction against its record: the record is stored running first, a reduction that
 * throws is recorded inconclusive with the reason (never left running), and a cancelled one ends in the
 * typed cancellation once its attempts are recorded.
 */
export async function runRecorded(
  reductions: ReductionStore,
  record: ReductionRecord,
  engine: { reduce(): Promise<unknown>; fail(reason: string): void; cancelled(): boolean },
): Promise<void> {
  reductions.insert(record);
  try {
    await engine.reduce();
  } catch (error) {
    engine.fail(`The reduction stopped: ${toFlameoxError(error).message.slice(0, 300)}`);
    throw error;
  }
  if (engine.cancelled())
    throw processCancelled("The reduction was cancelled; the attempts so far are recorded.", {
      details: { reduction_id: record.reduction_id },
      remediation: ["Call get_reduction for what it tried; plan_reduction starts over."],
    });
}

/**
 * Stores a reduced candidate and says so in the record (run, final or best-known artifact, final size).
 * A publication that fails (disk full, over the artifact limit) is said in the record instead, which
 * the caller still writes, so the reduction never stays 'running'. Callers publish at most once.
 */
export function publishIntoRecord(
  workspace: Workspace,
  intent: ReductionIntent,
  record: ReductionRecord,
  candidate: { bytes: Uint8Array; scratch: string; predicateOutputs: string[]; attempts: number; units: () => number },
): void {
  const final = record.disposition === "succeeded";
  try {
    const published = publishReduction(workspace, intent, {
      bytes: candidate.bytes,
      scratch: candidate.scratch,
      predicateOutputs: candidate.predicateOutputs.filter(existsNonEmpty),
      attempts: candidate.attempts,
      final,
    });
    record.run_id = published.runId;
    if (final) record.final_artifact_id = published.artifactId;
    else record.best_known_artifact_id = published.artifactId;
    record.units.final = candidate.units();
    record.byte_lengths.final = candidate.bytes.length;
  } catch (error) {
    record.disposition = "inconclusive";
    record.limitations.push(`The reduced artifact could not be stored: ${toFlameoxError(error).message.slice(0, 300)}`);
  }
}

function existsNonEmpty(path: string): boolean {
  try {
    return statSync(path).size > 0;
  } catch {
    return false;
  }
}

export function sameBytes(left: Uint8Array, right: Uint8Array): boolean {
  if (left.length !== right.length) return false;
  for (let index = 0; index < left.length; index++) if (left[index] !== right[index]) return false;
  return true;
}
