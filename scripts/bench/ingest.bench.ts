/**
 * Ingest: `flameox import` of a torch-like Chrome trace of BENCH_TRACE_MB MiB (default 1024) and of a
 * speedscope profile of BENCH_SPEEDSCOPE_SAMPLES samples (default 1,000,000), each against
 *   (a) Node: JSON.parse of the whole file (`node --max-old-space-size=BENCH_NODE_HEAP_MB`, default 8192), and
 *   (b) DuckDB: read_json of the unsplit file flattened to Parquet (memory_limit BENCH_DUCKDB_MEMORY_LIMIT, default 8GB).
 * Figures: wall time, MB/s (MiB of input per second), peak RSS (rusage of the child), exit status; a
 * baseline that fails is recorded with its error, never dropped. Every child is killed past
 * BENCH_RSS_GUARD_MB (default 12288) of RSS so nothing swaps the shared machine. Inputs are generated
 * once (streamed) and cached under .test-output/bench/; the import workspaces are temp folders there.
 */
import { copyFileSync, linkSync } from "node:fs";
import { join } from "node:path";
import { chromeTrace, speedscopeProfile } from "./lib/generate.ts";
import {
  benchOutput,
  binary,
  initProject,
  load1,
  measure,
  mebibytes,
  repositoryRoot,
  requireBinary,
  round,
  withTempFolder,
  type Measured,
} from "./lib/measure.ts";

const traceMegabytes = Number(process.env.BENCH_TRACE_MB ?? 1024);
const speedscopeSamples = Number(process.env.BENCH_SPEEDSCOPE_SAMPLES ?? 1_000_000);
const nodeHeapMegabytes = Number(process.env.BENCH_NODE_HEAP_MB ?? 8192);
const duckdbMemoryLimit = process.env.BENCH_DUCKDB_MEMORY_LIMIT ?? "8GB";
const rssGuardBytes = Number(process.env.BENCH_RSS_GUARD_MB ?? 12288) * (1 << 20);
const timeoutMs = Number(process.env.BENCH_INGEST_TIMEOUT_S ?? 900) * 1000;
const bun = join(repositoryRoot, "node_modules", ".bin", "bun");

type Input = { path: string; bytes: number };

function outcome(result: Measured, bytes: number, extra: Record<string, unknown> = {}): Record<string, unknown> {
  const ok = result.exitCode === 0;
  // The first error line names the cause (DuckDB's "Out of Memory Error: …", Node's "Error: Cannot create a string …").
  const lines = result.stderrTail.trim().split("\n").filter(Boolean);
  const errorLine = lines.find((line) => /error/i.test(line) && !/^\s*at /.test(line));
  const lastLine = errorLine ?? lines.slice(-3).join(" | ");
  return {
    ok,
    wall_s: round(result.wallMs / 1000, 2),
    mb_per_s: ok ? round(mebibytes(bytes) / (result.wallMs / 1000), 1) : null,
    peak_rss_mb: mebibytes(result.maxRssBytes),
    exit_code: result.exitCode,
    signal: result.signal,
    killed_by_rss_guard: result.killedByGuard,
    error: ok ? null : result.killedByGuard ? `killed at ${mebibytes(rssGuardBytes)} MiB RSS (guard)` : lastLine.slice(0, 600) || null,
    ...extra,
  };
}

async function flameoxImport(input: Input, name: string): Promise<Record<string, unknown>> {
  // The workspace lives beside the cached input (same file system) so the input can be hard-linked in.
  return withTempFolder(
    "import-",
    async (project) => {
      initProject(project);
      const inside = join(project, name);
      try {
        linkSync(input.path, inside);
      } catch {
        copyFileSync(input.path, inside);
      }
      const load = load1();
      const result = await measure([binary, "import", inside, "--json", "--project-root", project], {
        cwd: project,
        rssGuardBytes,
        timeoutMs,
      });
      let tables: unknown = null;
      if (result.exitCode === 0) tables = (JSON.parse(result.stdout) as { evidence?: { tables?: unknown } }).evidence?.tables ?? null;
      else if (!result.stderrTail) result.stderrTail = result.stdout.slice(0, 2000);
      return outcome(result, input.bytes, { evidence_rows: tables, load1: load });
    },
    benchOutput,
  );
}

async function nodeParse(input: Input, kind: string): Promise<Record<string, unknown>> {
  const load = load1();
  const result = await measure(
    ["node", `--max-old-space-size=${nodeHeapMegabytes}`, join(import.meta.dir, "lib", "node-json-parse.cjs"), kind, input.path],
    { rssGuardBytes, timeoutMs },
  );
  return outcome(result, input.bytes, {
    rows: result.exitCode === 0 ? JSON.parse(result.stdout).rows : null,
    heap_limit_mb: nodeHeapMegabytes,
    load1: load,
  });
}

async function duckdbReadJson(input: Input, kind: string): Promise<Record<string, unknown>> {
  return withTempFolder(
    "duckdb-",
    async (folder) => {
      const load = load1();
      const result = await measure(
        [bun, join(import.meta.dir, "lib", "duckdb-read-json.ts"), kind, input.path, join(folder, "out.parquet"), duckdbMemoryLimit],
        { cwd: repositoryRoot, rssGuardBytes, timeoutMs },
      );
      return outcome(result, input.bytes, {
        rows: result.exitCode === 0 ? JSON.parse(result.stdout).rows : null,
        memory_limit: duckdbMemoryLimit,
        load1: load,
      });
    },
    benchOutput,
  );
}

function ratios(flameox: Record<string, unknown>, other: Record<string, unknown>): Record<string, number | null> {
  const speed = (entry: Record<string, unknown>) => (entry.ok ? (entry.mb_per_s as number) : null);
  const fast = speed(flameox);
  const slow = speed(other);
  return {
    throughput_ratio: fast !== null && slow !== null ? round(fast / slow, 2) : null,
    peak_rss_ratio: round((flameox.peak_rss_mb as number) / Math.max(1, other.peak_rss_mb as number), 2),
  };
}

async function compare(
  kind: "chrome" | "speedscope",
  input: Input & Record<string, unknown>,
  name: string,
): Promise<Record<string, unknown>> {
  const flameox = await flameoxImport(input, name);
  const node = await nodeParse(input, kind);
  const duckdb = await duckdbReadJson(input, kind);
  return {
    input_mb: mebibytes(input.bytes),
    input_generated_ms: input.generated_ms,
    flameox_import: flameox,
    node_json_parse: node,
    duckdb_read_json: duckdb,
    flameox_vs_node: ratios(flameox, node),
    flameox_vs_duckdb: ratios(flameox, duckdb),
  };
}

export async function run(): Promise<Record<string, unknown>> {
  requireBinary();
  const trace = chromeTrace(traceMegabytes);
  const profile = speedscopeProfile(speedscopeSamples);
  return {
    trace_mb_requested: traceMegabytes,
    speedscope_samples: speedscopeSamples,
    chrome_trace: await compare("chrome", trace, "trace.json"),
    speedscope: await compare("speedscope", profile, "profile.speedscope.json"),
  };
}

if (import.meta.main) console.log(JSON.stringify(await run(), null, 2));
