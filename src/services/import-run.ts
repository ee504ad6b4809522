import { type PublishArtifactInput, publishArtifact } from "../store/artifact-placement.ts";
import { artifactReference } from "../store/artifact-registry.ts";
import { advanceCorpus, type CorpusHead } from "../store/corpus.ts";
import { blankManifest, insertRun } from "../store/run-store.ts";
import type { Workspace } from "../store/workspace.ts";
import type { PreparedBundle } from "./evidence-publisher.ts";
import type { LimitationDetail } from "./import-plan.ts";

/** An import run as it is published: its staged artifacts and what its manifest says about them. */
export type ImportRun = {
  runId: string;
  registrations: PublishArtifactInput[];
  limitations: string[];
  limitationDetails?: LimitationDetail[];
  /** The workload whose output the artifacts are (a reduction's predicate), when there is one. */
  workload?: { name: string; definitionId: string };
  /** Why the run row and the corpus commit were written, as their histories show it. */
  reasons: { run: string; corpus: string };
  /** Evidence extracted before publication, registered against the new corpus head. */
  bundle?: PreparedBundle | null;
};

/**
 * One transaction: the import run, its artifacts (placed, then registered), the corpus commit and the
 * evidence bundle, so a reader sees all of them or none. Every importer (files, xctrace packages,
 * reductions) publishes through here.
 */
export function publishImportRun(workspace: Workspace, run: ImportRun): CorpusHead {
  return workspace.state.write(() => {
    const database = workspace.state.database;
    const manifest = blankManifest(run.runId, "import", new Date().toISOString());
    manifest.capture_status = "registered";
    if (run.workload) {
      manifest.workload_name = run.workload.name;
      manifest.workload_definition_id = run.workload.definitionId;
    }
    manifest.limitations = run.limitations;
    if (run.limitationDetails) manifest.limitation_details = run.limitationDetails;
    const identified = run.registrations.map((registration) => ({ registration, id: `reg-${crypto.randomUUID()}` }));
    manifest.artifacts = identified.map(({ registration, id }) =>
      artifactReference({ ...registration, artifact: { ...registration.artifact, already_present: false } }, id),
    );
    insertRun(database, manifest, run.reasons.run);
    for (const { registration, id } of identified) publishArtifact(workspace, registration, id);
    const head = advanceCorpus(database, workspace.id, run.reasons.corpus);
    run.bundle?.register(head);
    return head;
  });
}
