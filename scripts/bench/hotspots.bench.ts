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
 * The reference is the previous flameox (lib/previous-flameox.ts) answering the same question through its CLI,
 * BENCH_HOTSPOT_PREVIOUS_RUNS (1) times per shape; its answer is compared with this build's (`identical_to_previous`).
 * Children are killed past BENCH_RSS_GUARD_MB (12288) of RSS; a failed query is recorded, not retried.
 */
import { join } from "node:path";
import { previousFlameox } from "./lib/previous-flameox.ts";
import { frameCount, registerStackBundle } from "./lib/stack-bundle.ts";
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
const previousRuns = Number(process.env.BENCH_HOTSPOT_PREVIOUS_RUNS ?? 1);

/** The previous flameox's CLI on the same run, the same question: time, peak RSS and whether its answer equals this build's. */
async function previousReference(
  project: string,
  runId: string,
  answer: unknown,
  currentMs: number | null,
): Promise<Record<string, unknown>> {
  const previous = previousFlameox();
  if (!("commit" in previous)) return { previous_error: previous.error };
  const times: number[] = [];
  let rss = 0;
  let identical: boolean | null = null;
  for (let index = 0; index < previousRuns; index += 1) {
    const result = await measure([previous.binary, "analyze", "hotspots", runId, "--json", "--project-root", project], {
      cwd: project,
      rssGuardBytes,
    });
    rss = Math.max(rss, result.maxRssBytes);
    if (result.exitCode !== 0) {
      return {
        previous_commit: previous.commit,
        previous_error: result.killedByGuard
          ? `killed at the RSS guard after ${round(result.wallMs / 1000, 1)} s`
          : `exit ${result.exitCode}`,
        previous_peak_rss_mb: mebibytes(rss),
      };
    }
    times.push(result.wallMs);
    const parsed = JSON.parse(result.stdout);
    identical = JSON.stringify(parsed.result ?? parsed) === JSON.stringify(answer);
  }
  return {
    previous_commit: previous.commit,
    previous_cli_median_ms: times.length ? round(median(times)) : null,
    previous_peak_rss_mb: mebibytes(rss),
    cli_ratio_previous_over_current: times.length && currentMs ? round(median(times) / currentMs, 2) : null,
    identical_to_previous: identical,
  };
}

async function timeQueries(project: string, rows: number, repeats: number): Promise<Record<string, unknown>> {
  const { runId, generationMs } = await registerStackBundle(project, rows, samples);
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
  if (cli.length > 0 && previousRuns > 0) Object.assign(figures, await previousReference(project, runId, answer, median(cli)));
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
