import { writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { loadWorkspacePolicy } from "../config/workspace-policy.ts";
import { type PublishArtifactInput, reclaimUnpublished } from "../store/artifact-placement.ts";
import { type StagedArtifact, stageArtifactFile } from "../store/artifact-store.ts";
import type { Workspace } from "../store/workspace.ts";
import type { ReductionIntent } from "../domain/reductions.ts";
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
    const reduced = stageArtifactFile(workspace, path, { maxBytes });
    staged.push(reduced);
    const outputs = result.predicateOutputs.map((output) => {
      const artifact = stageArtifactFile(workspace, output, { maxBytes });
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
