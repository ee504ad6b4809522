/**
 * Hotspot query latency over BENCH_HOTSPOT_SAMPLES samples (default 10,000,000), in two shapes:
 *   - `aggregated`: BENCH_HOTSPOT_STACKS (200,000) distinct stack rows whose weights sum to the samples —
 *     what the extractors write (they aggregate identical stacks); median of BENCH_HOTSPOT_RUNS (5);
 *   - `row_per_sample`: one stack row of weight 1 per sample (the worst case: every sample its own row);
 *     BENCH_HOTSPOT_WORST_RUNS (1) runs, since each takes minutes at 10M rows here; 0 skips it.
 * Stacks are depth 4–24 over 5000 frames, five threads, nearly all distinct. The Parquet files are
 * written directly by DuckDB into a bundle folder and registered through the store API in one SQLite
 * transaction, as the import service does. Then analyze_hotspots (top 20 functions by self) is timed
 *   - through the CLI, `flameox analyze hotspots <run> --json` (process start + DuckDB load + query), and
 *   - in-process through `Services` in a child Bun process (pure service + query time; first call and the rest).
 * Children are killed past BENCH_RSS_GUARD_MB (12288) of RSS; a failed query is recorded, not retried.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Services } from "../../src/services/services.ts";
import { publishArtifact } from "../../src/store/artifact-placement.ts";
import { artifactReference } from "../../src/store/artifact-registry.ts";
import { stageArtifactFile } from "../../src/store/artifact-store.ts";
import { advanceCorpus } from "../../src/store/corpus.ts";
import { loadDuckdb } from "../../src/store/duckdb.ts";
import { escapeSql } from "../../src/store/evidence-bundle.ts";
import { registerBundle } from "../../src/store/evidence-registry.ts";
import { blankManifest, insertRun } from "../../src/store/run-store.ts";
import {
  binary,
  initProject,
  load1,
  measure,
  median,
  mebibytes,
  repositoryRoot,
  requireBinary,
  round,
  withTempFolder,
} from "./lib/measure.ts";

const samples = Number(process.env.BENCH_HOTSPOT_SAMPLES ?? 10_000_000);
const distinctStacks = Math.min(samples, Number(process.env.BENCH_HOTSPOT_STACKS ?? 200_000));
const runs = Number(process.env.BENCH_HOTSPOT_RUNS ?? 5);
const worstRuns = Number(process.env.BENCH_HOTSPOT_WORST_RUNS ?? 1);
const rssGuardBytes = Number(process.env.BENCH_RSS_GUARD_MB ?? 12288) * (1 << 20);
const frameCount = 5000;

/** Writes frames.parquet and stacks.parquet of `rows` rows whose weights sum to `samples` into `folder` with DuckDB. */
async function writeBundle(folder: string, runId: string, artifactId: string, rows: number): Promise<void> {
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
async function registerRun(project: string, rows: number): Promise<{ runId: string; generationMs: number }> {
  const services = new Services({ projectRoot: project });
  try {
    const workspace = services.workspace();
    const runId = crypto.randomUUID();
    const spec = join(project, `hotspots-bench-input-${rows}.json`);
    writeFileSync(spec, JSON.stringify({ generator: "scripts/bench/hotspots.bench.ts", samples, rows, frames: frameCount }));
    const stored = stageArtifactFile(workspace, spec, { maxBytes: 1 << 20 });
    const bundleId = `bundle-${crypto.randomUUID()}`;
    const folder = workspace.path("evidence", bundleId);
    mkdirSync(folder, { recursive: true });
    const started = performance.now();
    await writeBundle(folder, runId, stored.artifact_id, rows);
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

async function timeQueries(project: string, rows: number, repeats: number): Promise<Record<string, unknown>> {
  const { runId, generationMs } = await registerRun(project, rows);
  const figures: Record<string, unknown> = { stack_rows: rows, samples, bundle_generation_s: round(generationMs / 1000, 1) };
  const cli: number[] = [];
  const cliRss: number[] = [];
  const loads: number[] = [];
  let answer: { total_weight?: number; total?: number; hotspots?: { function: string }[] } = {};
  for (let index = 0; index < repeats; index += 1) {
    loads.push(load1());
    const result = await measure([binary, "analyze", "hotspots", runId, "--json", "--project-root", project], {
      cwd: project,
      rssGuardBytes,
    });
    cliRss.push(result.maxRssBytes);
    if (result.exitCode !== 0) {
      figures.cli_error = result.killedByGuard
        ? `killed at ${mebibytes(rssGuardBytes)} MiB RSS (guard) after ${round(result.wallMs / 1000, 1)} s`
        : `exit ${result.exitCode}: ${`${result.stdout}${result.stderrTail}`.slice(0, 800)}`;
      break;
    }
    cli.push(result.wallMs);
    const parsed = JSON.parse(result.stdout);
    answer = parsed.result ?? parsed;
  }
  if (cli.length > 0 && answer.total_weight !== samples) throw new Error(`expected total_weight ${samples}, got ${answer.total_weight}`);
  Object.assign(figures, {
    functions_ranked: answer.total ?? null,
    top_function: answer.hotspots?.[0]?.function ?? null,
    cli_median_ms: cli.length ? round(median(cli)) : null,
    cli_ms: cli.map((value) => round(value)),
    cli_peak_rss_mb: mebibytes(Math.max(0, ...cliRss)),
  });
  if (cli.length === repeats) {
    loads.push(load1());
    const child = await measure(
      [
        join(repositoryRoot, "node_modules", ".bin", "bun"),
        join(import.meta.dir, "lib", "hotspots-in-process.ts"),
        project,
        runId,
        String(Math.max(0, repeats - 1)),
      ],
      { cwd: repositoryRoot, rssGuardBytes },
    );
    if (child.exitCode !== 0) {
      figures.in_process_error = child.killedByGuard
        ? `killed at ${mebibytes(rssGuardBytes)} MiB RSS (guard)`
        : child.stderrTail.slice(-800);
    } else {
      // The first call pays DuckDB's load; the median is over first + the rest, so it is a median of `repeats`.
      const inProcess = JSON.parse(child.stdout) as { first_ms: number; ms: number[] };
      const all = [inProcess.first_ms, ...inProcess.ms];
      Object.assign(figures, {
        in_process_first_ms: round(inProcess.first_ms),
        in_process_median_ms: round(median(all)),
        in_process_ms: all.map((value) => round(value)),
        in_process_peak_rss_mb: mebibytes(child.maxRssBytes),
        cli_over_in_process_ratio: cli.length ? round(median(cli) / median(all), 2) : null,
      });
    }
  }
  figures.load1_per_round = loads;
  return figures;
}

export async function run(): Promise<Record<string, unknown>> {
  requireBinary();
  return withTempFolder("flameox-bench-hotspots-", async (project) => {
    initProject(project);
    const aggregated = await timeQueries(project, distinctStacks, runs);
    const rowPerSample = worstRuns > 0 ? await timeQueries(project, samples, worstRuns) : { skipped: "BENCH_HOTSPOT_WORST_RUNS=0" };
    return { samples, frames: frameCount, aggregated, row_per_sample: rowPerSample };
  });
}

if (import.meta.main) console.log(JSON.stringify(await run(), null, 2));
