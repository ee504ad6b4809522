import type { EvidenceSink } from "../domain/evidence.ts";
import { advanceCorpus, type CorpusHead } from "../store/corpus.ts";
import { EvidenceBundleWriter, placeBundle } from "../store/evidence-bundle.ts";
import { registerBundle } from "../store/evidence-registry.ts";
import type { Workspace } from "../store/workspace.ts";
import { rmSync } from "node:fs";

export type PreparedBundle = {
  bundleId: string;
  tables: Record<string, number>;
  runId: string;
  artifactId: string;
  extractor: string;
  extractorVersion: string;
  /** What the extractor recorded about its input, registered with the bundle. */
  limitations: string[];
  /** Moves the bundle into evidence/ and registers it inside the caller's write transaction; until then nobody sees it. */
  register(corpus: CorpusHead): void;
  /** Removes the finished folder (in staging, or placed by a transaction that then failed); its id is unique, so nothing else can name it. */
  discard(): void;
};

/**
 * Runs an extractor into a staging bundle and finishes its Parquet files. On any failure the
 * staging folder is removed and the error propagates, so a failed extraction leaves nothing. The
 * limitations the extractor returns are registered with the bundle (at most 20, each bounded), so
 * analyses over it can repeat them.
 */
export async function prepareBundle(
  workspace: Workspace,
  context: { runId: string; artifactId: string; extractor: string; extractorVersion: string },
  extract: (sink: EvidenceSink) => Promise<readonly string[] | undefined>,
): Promise<PreparedBundle> {
  const writer = new EvidenceBundleWriter(workspace, { runId: context.runId, artifactId: context.artifactId });
  let finished: { bundleId: string; tables: Record<string, number>; folder: string };
  let limitations: string[];
  try {
    limitations = boundedLimitations((await extract(writer)) ?? []);
    finished = await writer.finish();
  } catch (error) {
    writer.abandon();
    throw error;
  }
  return {
    bundleId: finished.bundleId,
    tables: finished.tables,
    runId: context.runId,
    artifactId: context.artifactId,
    extractor: context.extractor,
    extractorVersion: context.extractorVersion,
    limitations,
    register(corpus) {
      placeBundle(workspace, finished.bundleId, finished.folder);
      registerBundle(workspace.state.database, {
        bundle_id: finished.bundleId,
        run_id: context.runId,
        artifact_id: context.artifactId,
        extractor: context.extractor,
        extractor_version: context.extractorVersion,
        tables: finished.tables,
        created_at: new Date().toISOString(),
        corpus_sequence: corpus.sequence,
        limitations,
      });
    },
    discard() {
      rmSync(finished.folder, { recursive: true, force: true });
      rmSync(workspace.path("evidence", finished.bundleId), { recursive: true, force: true });
    },
  };
}

/** Publishes bundles for an existing run in one transaction that also advances the corpus. */
export function publishBundles(workspace: Workspace, bundles: PreparedBundle[], reason: string): CorpusHead {
  try {
    return workspace.state.write(() => {
      const corpus = advanceCorpus(workspace.state.database, workspace.id, reason);
      for (const bundle of bundles) bundle.register(corpus);
      return corpus;
    });
  } catch (error) {
    for (const bundle of bundles) bundle.discard();
    throw error;
  }
}

/** Distinct, at most 20, each at most 500 characters: a registration row, not a log. */
function boundedLimitations(limitations: readonly string[]): string[] {
  return [...new Set(limitations.map((text) => (text.length > 500 ? `${text.slice(0, 497)}...` : text)))].slice(0, 20);
}
