/**
 * A synthetic stack bundle registered in a real workspace as the import service would: frames.parquet and
 * stacks.parquet written directly by DuckDB into a bundle folder, then an import run, its artifact (the
 * generator's parameters) and the bundle registered through the store API in one SQLite transaction.
 * Stacks are depth 4–24 over `frameCount` (5000) frames, five threads, nearly all distinct; weights are q or
 * q+1 so they sum to exactly `samples`. Shared by the hotspot and warm-query benchmarks.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Services } from "../../../src/services/services.ts";
import { publishArtifact } from "../../../src/store/artifact-placement.ts";
import { artifactReference } from "../../../src/store/artifact-registry.ts";
import { stageArtifactFile } from "../../../src/store/artifact-store.ts";
import { advanceCorpus } from "../../../src/store/corpus.ts";
import { loadDuckdb } from "../../../src/store/duckdb.ts";
import { escapeSql } from "../../../src/store/evidence-bundle.ts";
import { registerBundle } from "../../../src/store/evidence-registry.ts";
import { blankManifest, insertRun } from "../../../src/store/run-store.ts";

export const frameCount = 5000;

/** Writes frames.parquet and stacks.parquet of `rows` rows whose weights sum to `samples` into `folder` with DuckDB. */
async function writeBundle(folder: string, runId: string, artifactId: string, rows: number, samples: number): Promise<void> {
  // Weights q or q+1 so they sum to exactly `samples`.
  const quotient = Math.floor(samples / rows);
  const remainder = samples % rows;
  const duckdb = await loadDuckdb();
  const instance = await duckdb.DuckDBInstance.create(":memory:", { threads: "2", memory_limit: "4GB" });
  const connection = await instance.connect();
  try {
    await connection.run(`CREATE TABLE frames AS
      SELECT 'f_' || substr(md5('bench-frame-' || i), 1, 24) AS frame_key, 'function_' || i AS function,
             'package_' || (i % 97) || '/module_' || (i % 389) || '.py' AS file, CAST(10 + i % 700 AS BIGINT) AS line,
             CAST(NULL AS VARCHAR) AS module, 'python' AS language
      FROM range(${frameCount}) t(i)`);
    await connection.run(
      `COPY (SELECT * FROM frames ORDER BY frame_key) TO '${escapeSql(join(folder, "frames.parquet"))}' (FORMAT parquet, COMPRESSION zstd)`,
    );
    // Level d picks among 1 + 8d frames of its own range, so roots are shared and leaves spread out.
    await connection.run(`COPY (
        WITH k AS (SELECT list(frame_key ORDER BY rowid) AS keys FROM frames)
        SELECT '${runId}' AS run_id, '${artifactId}' AS artifact_id,
               CASE WHEN i % 10 < 6 THEN 'MainThread' ELSE 'worker-' || (i % 10 - 5) END AS thread,
               'pid 100' AS process,
               list_transform(range(CAST(4 + hash(i) % 21 AS BIGINT)), d -> k.keys[1 + ((d * 211 + CAST(hash(i, d) % 1000003 AS BIGINT) % (1 + d * 8)) % ${frameCount})]) AS frame_keys,
               CAST(${quotient} + (i < ${remainder})::INTEGER AS DOUBLE) AS weight, 'samples' AS unit,
               CAST(${quotient} + (i < ${remainder})::INTEGER AS BIGINT) AS sample_count
        FROM range(${rows}) t(i), k
      ) TO '${escapeSql(join(folder, "stacks.parquet"))}' (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE 122880)`);
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}

/** Registers an import run with one artifact (the generator's parameters) and the bundle, in one transaction. */
export async function registerStackBundle(
  project: string,
  rows: number,
  samples: number,
): Promise<{ runId: string; generationMs: number }> {
  const services = new Services({ projectRoot: project });
  try {
    const workspace = services.workspace();
    const runId = crypto.randomUUID();
    const spec = join(project, `hotspots-bench-input-${rows}.json`);
    writeFileSync(spec, JSON.stringify({ generator: "scripts/bench/lib/stack-bundle.ts", samples, rows, frames: frameCount }));
    const stored = await stageArtifactFile(workspace, spec, { maxBytes: 1 << 20 });
    const bundleId = `bundle-${crypto.randomUUID()}`;
    const folder = workspace.path("evidence", bundleId);
    mkdirSync(folder, { recursive: true });
    const started = performance.now();
    await writeBundle(folder, runId, stored.artifact_id, rows, samples);
    const generationMs = performance.now() - started;
    workspace.state.write(() => {
      const database = workspace.state.database;
      const manifest = blankManifest(runId, "import", new Date().toISOString());
      manifest.capture_status = "registered";
      const registration = {
        runId,
        artifact: stored,
        displayName: "hotspots-bench-input.json",
        kind: "sample_profile",
        role: "imported",
        mediaType: "application/json",
        sensitivity: "internal",
        producer: "flameox-bench",
        producerVersion: null,
        format: null,
      };
      const registrationId = `reg-${crypto.randomUUID()}`;
      manifest.artifacts = [artifactReference({ ...registration, artifact: { ...stored, already_present: false } }, registrationId)];
      // The run row first: registrations reference it.
      insertRun(database, manifest, "import");
      publishArtifact(workspace, registration, registrationId);
      const head = advanceCorpus(database, workspace.id, `bench ${runId}`);
      registerBundle(database, {
        bundle_id: bundleId,
        run_id: runId,
        artifact_id: stored.artifact_id,
        extractor: "profile",
        extractor_version: "1",
        tables: { frames: frameCount, stacks: rows },
        created_at: new Date().toISOString(),
        corpus_sequence: head.sequence,
        limitations: [],
      });
    });
    return { runId, generationMs };
  } finally {
    services.close();
  }
}
