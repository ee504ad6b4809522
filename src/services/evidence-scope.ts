import { digestOf } from "../domain/canonical-json.ts";
import { artifactNotFound, queryBudgetExceeded, runNotFound } from "../domain/errors.ts";
import { corpusHead } from "../store/corpus.ts";
import { evidenceEngine, type EvidenceView } from "../store/evidence-query.ts";
import { currentBundles, type BundleRecord } from "../store/evidence-registry.ts";
import { readRun } from "../store/run-store.ts";
import { artifactExists } from "../store/artifact-registry.ts";
import type { WorkspaceHandle } from "../store/workspace-handle.ts";

export type EvidenceScope = {
  kind: "run" | "artifact";
  id: string;
  runIds: string[];
  bundles: BundleRecord[];
  /** Digest of the exact bundle set: cursors bind to it, so a superseded input makes them stale. */
  snapshot: string;
  corpusCommitId: string;
};

/**
 * Pins the evidence for `run_or_artifact` at the current corpus head: a run id selects the run's
 * current bundles, a `sha256:` id selects the artifact's bundles across runs.
 */
export function pinEvidenceScope(workspace: WorkspaceHandle, runOrArtifact: string): EvidenceScope {
  const database = workspace.state().database;
  const head = corpusHead(database);
  if (runOrArtifact.startsWith("sha256:")) {
    if (!artifactExists(database, runOrArtifact)) throw artifactNotFound(runOrArtifact);
    const bundles = currentBundles(database, { artifactId: runOrArtifact, maxSequence: head.sequence });
    return {
      kind: "artifact",
      id: runOrArtifact,
      runIds: [...new Set(bundles.map((bundle) => bundle.run_id))],
      bundles,
      snapshot: digestOf(bundles.map((bundle) => bundle.bundle_id)),
      corpusCommitId: head.commit_id,
    };
  }
  if (!readRun(database, runOrArtifact)) throw runNotFound(runOrArtifact);
  const bundles = currentBundles(database, { runId: runOrArtifact, maxSequence: head.sequence });
  return {
    kind: "run",
    id: runOrArtifact,
    runIds: [runOrArtifact],
    bundles,
    snapshot: digestOf(bundles.map((bundle) => bundle.bundle_id)),
    corpusCommitId: head.commit_id,
  };
}

export async function withEvidence<T>(
  workspace: WorkspaceHandle,
  scope: EvidenceScope,
  body: (view: EvidenceView) => Promise<T>,
): Promise<T> {
  return withBundles(
    workspace,
    scope.bundles.map((bundle) => bundle.bundle_id),
    body,
  );
}

/** Queries exactly these bundles through the workspace's long-lived engine (a warm view when one is open). */
export async function withBundles<T>(
  workspace: WorkspaceHandle,
  bundleIds: string[],
  body: (view: EvidenceView) => Promise<T>,
): Promise<T> {
  return evidenceEngine(workspace.open()).use(bundleIds, body);
}

export function limitWithin(limit: number, maximum: number): number {
  if (!Number.isInteger(limit) || limit < 1 || limit > maximum) {
    throw queryBudgetExceeded(limit, maximum);
  }
  return limit;
}

/**
 * What the extractors recorded about the bundles an analysis reads (values left out, clamped or
 * missing), each once: at most 10, so a result stays bounded; the last entry says how many more.
 */
export function scopeLimitations(scope: EvidenceScope): string[] {
  const distinct = [...new Set(scope.bundles.flatMap((bundle) => bundle.limitations))];
  if (distinct.length <= 10) return distinct;
  return [
    ...distinct.slice(0, 9),
    `${distinct.length - 9} more limitation(s): see each run's get_run or get_evidence(ref_type='generation').`,
  ];
}
