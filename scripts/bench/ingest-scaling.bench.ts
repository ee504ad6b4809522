/**
 * Issue 16 items 1 and 2: how ingest scales, against references measured in the same run.
 *
 * Traces: torch-like Chrome traces of each size in BENCH_INGEST_SIZES_MB (default 64,256,1024), in
 * four shapes (BENCH_INGEST_SHAPES) — `plain` (the ingest module's generator), `distinctSteps` (every
 * few operators in their own ProfilerStep#n, so distinct stacks grow with the trace), `plainGzip`
 * (the plain trace as `.json.gz`, as torch.profiler exports it; sizes are the inflated ones) and
 * `shuffled` (the plain trace's events in a seeded random order, so import sorts them in runs spilled
 * to disk and merges those) — each through
 *   `flameox import` (this build), the previous flameox (BENCH_PREVIOUS_COMMIT, built into
 *   .test-output/bench/), `cat` of the same file (the read floor; `gzip -dc` for the gzip shape), and
 *   DuckDB read_json of it;
 * wall time, CPU time, MiB/s of the inflated trace and peak RSS (rusage) of each, the ratios flameox/cat,
 * flameox/DuckDB and flameox/previous, and the growth of time and memory per doubling of the input.
 * For the uncompressed shapes, two floors of any trace ingest on this machine, measured on the same input:
 * the runtime's native `JSON.parse` of the trace (lib/runtime-json-parse.ts) and DuckDB converting the
 * very rows this import staged, from a file, on an engine made as import makes it (one thread:
 * lib/trace-conversion-floor.ts). `two_core_ceiling_mb_per_s` is the input over the larger of the
 * conversion's wall time and half the CPU time of both floors together: the rate no import that parses
 * events no cheaper than the native parser and converts its rows through DuckDB can pass on two cores.
 * Profiles: speedscope profiles through this build, the previous one, and Python's json.load of the same
 * file: the issue's shape (BENCH_SPEEDSCOPE_SAMPLES, default 1,000,000 samples over 204 distinct stacks of
 * depth 3, about 18 MB) and the bench generator's shape (10,000 distinct stacks of depth 6–30, about 88 bytes
 * a sample) at each size in BENCH_PROFILE_SIZES_MB (default 64,256,1024), with growth per doubling.
 * json.load runs up to BENCH_PYTHON_MAX_MB (default 256; it needs about ten times the file in memory).
 * Every child is killed past BENCH_RSS_GUARD_MB (default 12288) and BENCH_INGEST_TIMEOUT_S
 * (default 900); a reference that fails is recorded with its error.
 */
import { join } from "node:path";
import { linkSync, copyFileSync } from "node:fs";
import { chromeTrace, gzippedChromeTrace, shuffledChromeTrace, speedscopeProfile } from "./lib/generate.ts";
import { ingestStep } from "./lib/ingest-figures.ts";
import {
  benchOutput,
  binary,
  load1,
  measure,
  mebibytes,
  repositoryRoot,
  requireBinary,
  round,
  toolsBin,
  withTempFolder,
} from "./lib/measure.ts";
import { previousCommit, previousFlameox } from "./lib/previous-flameox.ts";

const sizes = (process.env.BENCH_INGEST_SIZES_MB ?? "64,256,1024")
  .split(",")
  .map(Number)
  .filter((size) => size > 0);
type Shape = "plain" | "distinctSteps" | "plainGzip" | "shuffled";
const shapes = (process.env.BENCH_INGEST_SHAPES ?? "plain,distinctSteps,plainGzip,shuffled").split(",") as Shape[];
const speedscopeSamples = Number(process.env.BENCH_SPEEDSCOPE_SAMPLES ?? 1_000_000);
const profileSizes = (process.env.BENCH_PROFILE_SIZES_MB ?? "64,256,1024")
  .split(",")
  .map(Number)
  .filter((size) => size > 0);
const pythonMaximumBytes = Number(process.env.BENCH_PYTHON_MAX_MB ?? 256) * (1 << 20);
/** Bytes per sample of the generator's default speedscope shape, to turn a size into a sample count. */
const speedscopeBytesPerSample = 88;
const rssGuardBytes = Number(process.env.BENCH_RSS_GUARD_MB ?? 12288) * (1 << 20);
const timeoutMs = Number(process.env.BENCH_INGEST_TIMEOUT_S ?? 900) * 1000;
const duckdbMemoryLimit = process.env.BENCH_DUCKDB_MEMORY_LIMIT ?? "8GB";
const bun = join(repositoryRoot, "node_modules", ".bin", "bun");

type Figures = Record<string, unknown> & { ok: boolean; wall_s: number; peak_rss_mb: number };

async function flameoxImport(
  executable: string,
  input: string,
  bytes: number,
  name: string,
  /** Called with the project after a successful import, before it is removed. */
  afterImport?: (project: string) => Promise<void>,
): Promise<Figures> {
  return withTempFolder(
    "scaling-",
    async (project) => {
      const init = Bun.spawnSync([executable, "init", project, "--json"], { stdout: "pipe", stderr: "pipe" });
      if (init.exitCode !== 0) return { ok: false, wall_s: 0, peak_rss_mb: 0, error: init.stdout.toString().slice(0, 300) };
      const inside = join(project, name);
      try {
        linkSync(input, inside);
      } catch {
        copyFileSync(input, inside);
      }
      const load = load1();
      const result = await measure([executable, "import", inside, "--json", "--project-root", project], {
        cwd: project,
        rssGuardBytes,
        timeoutMs,
      });
      const figures = { ...ingestStep(result, bytes), load1: load } as unknown as Figures;
      if (result.exitCode === 0) {
        const receipt = JSON.parse(result.stdout) as { evidence?: { tables?: unknown; limitations?: string[] } };
        figures.evidence_rows = receipt.evidence?.tables ?? null;
        await afterImport?.(project);
      }
      return figures;
    },
    benchOutput,
  );
}

/**
 * A floor measured by a child script (scripts/bench/lib/) that times only its own part and prints it as
 * `<part>_wall_s` and `<part>_cpu_s`, with whatever else it counts; peak RSS is the whole child's.
 */
async function floorStep(script: string, args: string[], bytes: number, part: string): Promise<Figures> {
  const result = await measure([bun, join(import.meta.dir, "lib", script), ...args], { cwd: repositoryRoot, rssGuardBytes, timeoutMs });
  const step = ingestStep(result, bytes) as Figures;
  if (!step.ok) return step;
  const printed = JSON.parse(result.stdout) as Record<string, number>;
  const wall = printed[`${part}_wall_s`] as number;
  return {
    ok: true,
    ...printed,
    wall_s: wall,
    cpu_s: printed[`${part}_cpu_s`],
    mb_per_s: round(mebibytes(bytes) / wall, 1),
    peak_rss_mb: step.peak_rss_mb,
  };
}

/** DuckDB's share of the import alone, from the rows it wrote into the project's workspace. */
async function conversionFloor(project: string, bytes: number): Promise<Figures> {
  const [relative] = [...new Bun.Glob("**/trace_events.parquet").scanSync({ cwd: join(project, ".diagnostics"), dot: true })];
  if (!relative) return { ok: false, wall_s: 0, peak_rss_mb: 0, error: "the import left no trace_events.parquet" };
  return withTempFolder(
    "floor-",
    (scratch) => floorStep("trace-conversion-floor.ts", [join(project, ".diagnostics", relative), scratch], bytes, "conversion"),
    benchOutput,
  );
}

/** The runtime's native JSON parser on the same trace (decode and parse only). */
function runtimeJsonParse(path: string, bytes: number): Promise<Figures> {
  return floorStep("runtime-json-parse.ts", [path], bytes, "parse");
}

/** See the file comment: the most a two-core import can reach given both floors. */
function twoCoreCeiling(bytes: number, parse: Figures | undefined, conversion: Figures | undefined): number | null {
  if (!parse?.ok || !conversion?.ok) return null;
  const seconds = Math.max(conversion.wall_s, ((parse.cpu_s as number) + (conversion.cpu_s as number)) / 2);
  return round(mebibytes(bytes) / seconds, 1);
}

async function reference(argv: string[], bytes: number, options: { cwd?: string } = {}): Promise<Figures> {
  const load = load1();
  const result = await measure(argv, { cwd: options.cwd, rssGuardBytes, timeoutMs });
  return { ...ingestStep(result, bytes), load1: load } as unknown as Figures;
}

function ratio(numerator: Figures | undefined, denominator: Figures | undefined): number | null {
  if (!numerator?.ok || !denominator?.ok || denominator.wall_s === 0) return null;
  return round(numerator.wall_s / denominator.wall_s, 2);
}

/** Growth of wall time and peak RSS per doubling of the input between consecutive sizes (2.0 = linear time; 1.0 = flat memory). */
function growth(rows: { size: number; flameox: Figures }[]): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (let index = 1; index < rows.length; index++) {
    const before = rows[index - 1]!;
    const after = rows[index]!;
    if (!before.flameox.ok || !after.flameox.ok) continue;
    const doublings = Math.log2(after.size / before.size);
    out.push({
      from_mb: before.size,
      to_mb: after.size,
      time_per_doubling: round((after.flameox.wall_s / before.flameox.wall_s) ** (1 / doublings), 2),
      memory_per_doubling: round((after.flameox.peak_rss_mb / before.flameox.peak_rss_mb) ** (1 / doublings), 2),
    });
  }
  return out;
}

/** The trace of one shape and size; `bytes` is what the importer reads (inflated for gzip), for MiB/s. */
function traceInput(shape: Shape, size: number): { path: string; bytes: number; name: string; read: string } {
  if (shape === "plainGzip") {
    const zipped = gzippedChromeTrace(size);
    return { path: zipped.path, bytes: zipped.inflated_bytes, name: "trace.json.gz", read: `gzip -dc "${zipped.path}" > /dev/null` };
  }
  const input = shape === "shuffled" ? shuffledChromeTrace(size) : chromeTrace(size, shape);
  return { path: input.path, bytes: input.bytes, name: "trace.json", read: `cat "${input.path}" > /dev/null` };
}

async function traceShape(shape: Shape, previous: string | null): Promise<Record<string, unknown>> {
  const rows: { size: number; flameox: Figures; [key: string]: unknown }[] = [];
  for (const size of sizes) {
    const input = traceInput(shape, size);
    const floors = shape !== "plainGzip";
    let conversion: Figures | undefined;
    const flameox = await flameoxImport(
      binary,
      input.path,
      input.bytes,
      input.name,
      floors
        ? async (project) => {
            conversion = await conversionFloor(project, input.bytes);
          }
        : undefined,
    );
    const parse = floors ? await runtimeJsonParse(input.path, input.bytes) : undefined;
    const ceiling = twoCoreCeiling(input.bytes, parse, conversion);
    const prior = previous ? await flameoxImport(previous, input.path, input.bytes, input.name) : undefined;
    const cat = await reference(["sh", "-c", input.read], input.bytes);
    const duckdb = await withTempFolder(
      "duckdb-",
      (folder) =>
        reference(
          [
            bun,
            join(import.meta.dir, "lib", "duckdb-read-json.ts"),
            "chrome",
            input.path,
            join(folder, "out.parquet"),
            duckdbMemoryLimit,
            String(input.bytes),
          ],
          input.bytes,
          {
            cwd: repositoryRoot,
          },
        ),
      benchOutput,
    );
    rows.push({
      size,
      input_mb: mebibytes(input.bytes),
      flameox,
      previous_flameox: prior ?? null,
      cat,
      duckdb_read_json: duckdb,
      runtime_json_parse: parse ?? null,
      duckdb_conversion_floor: conversion ?? null,
      two_core_ceiling_mb_per_s: ceiling,
      flameox_share_of_ceiling: ceiling && flameox.ok ? round((flameox.mb_per_s as number) / ceiling, 2) : null,
      flameox_over_cat: ratio(flameox, cat),
      flameox_over_duckdb: ratio(flameox, duckdb),
      flameox_over_previous: ratio(flameox, prior),
      rss_over_previous: prior?.ok && flameox.ok ? round(flameox.peak_rss_mb / prior.peak_rss_mb, 2) : null,
    });
  }
  return { rows, growth: growth(rows) };
}

/** One speedscope file through this build, the previous one and json.load. */
async function profileRow(
  profile: { path: string; bytes: number },
  previous: string | null,
): Promise<Record<string, unknown> & { flameox: Figures }> {
  const flameox = await flameoxImport(binary, profile.path, profile.bytes, "profile.speedscope.json");
  const prior = previous ? await flameoxImport(previous, profile.path, profile.bytes, "profile.speedscope.json") : undefined;
  const python =
    profile.bytes <= pythonMaximumBytes
      ? await reference([join(toolsBin, "python"), "-c", "import json,sys; json.load(open(sys.argv[1]))", profile.path], profile.bytes)
      : undefined;
  return {
    input_mb: mebibytes(profile.bytes),
    flameox,
    previous_flameox: prior ?? null,
    python_json_load: python ?? `skipped above BENCH_PYTHON_MAX_MB (${mebibytes(pythonMaximumBytes)} MiB)`,
    flameox_over_python: ratio(flameox, python),
    flameox_over_previous: ratio(flameox, prior),
    rss_over_previous: prior?.ok && flameox.ok ? round(flameox.peak_rss_mb / prior.peak_rss_mb, 2) : null,
  };
}

export async function run(): Promise<Record<string, unknown>> {
  requireBinary();
  const previous = previousFlameox();
  const traces: Record<string, unknown> = {};
  for (const shape of shapes) traces[shape] = await traceShape(shape, previous.binary);
  const issueShape = await profileRow(speedscopeProfile(speedscopeSamples, { stacksPerThread: 102, maximumDepth: 3 }), previous.binary);
  const series: (Record<string, unknown> & { size: number; flameox: Figures })[] = [];
  for (const size of profileSizes) {
    const samples = Math.round((size * (1 << 20)) / speedscopeBytesPerSample);
    series.push({ size, samples, ...(await profileRow(speedscopeProfile(samples), previous.binary)) });
  }
  return {
    previous_flameox: "error" in previous ? previous.error : previousCommit,
    sizes_mb: sizes,
    traces,
    speedscope: { samples: speedscopeSamples, distinct_stacks: 204, ...issueShape },
    speedscope_series: { rows: series, growth: growth(series) },
  };
}

if (import.meta.main) console.log(JSON.stringify(await run(), null, 2));
