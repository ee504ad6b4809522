/**
 * Cold MCP handshake of the compiled binary: spawn → initialize → tools/list, median of N runs;
 * plus tools/list size (whole answer, and the part a model reads), binary size and first-run DuckDB
 * extraction time; and `flameox status --json`, median wall and CPU time of BENCH_STATUS_RUNS (15) starts
 * with a warm cache, against two references in the same run: `flameox --version` (the process-start floor
 * of this binary) and the previous flameox's `status` (lib/previous-flameox.ts) on the same workspace.
 */
import { previousFlameox } from "./lib/previous-flameox.ts";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { framedModelVisibleBytes, modelVisibleBytes } from "../../src/mcp/model-visible.ts";

const root = resolve(import.meta.dir, "../..");
const binary = process.env.FLAMEOX_BINARY || join(root, "dist", "flameox");
const runs = Number(process.env.BENCH_RUNS ?? 25);
const statusRuns = Number(process.env.BENCH_STATUS_RUNS ?? 15);

/** Median wall and CPU (user + system, from rusage) of `runs` starts of argv. */
function startMedians(argv: string[], env: Record<string, string | undefined>): { wall_ms: number; cpu_ms: number } {
  const wall: number[] = [];
  const cpu: number[] = [];
  for (let index = 0; index < statusRuns; index += 1) {
    const started = performance.now();
    const result = Bun.spawnSync(argv, { env, stdout: "ignore", stderr: "ignore" });
    wall.push(performance.now() - started);
    const used = result.resourceUsage?.cpuTime;
    if (used) cpu.push(Number(used.user + used.system) / 1000);
  }
  return { wall_ms: Number(median(wall).toFixed(1)), cpu_ms: Number(median(cpu).toFixed(1)) };
}

async function handshakeOnce(
  project: string,
): Promise<{ ms: number; toolsListBytes: number; modelVisibleBytes: number; framedVisibleBytes: number }> {
  const started = performance.now();
  const child = Bun.spawn([binary, "mcp", "serve", "--project-root", project], { stdin: "pipe", stdout: "pipe", stderr: "ignore" });
  child.stdin.write(
    `${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "bench", version: "1" } } })}\n`,
  );
  child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" })}\n`);
  child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" })}\n`);
  await child.stdin.flush();
  const reader = child.stdout.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  let toolsListBytes = 0;
  let visibleBytes = 0;
  let framedBytes = 0;
  let elapsed = 0;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) throw new Error("server exited before answering tools/list");
    buffer += decoder.decode(value, { stream: true });
    const lines = buffer.split("\n");
    buffer = lines.pop() ?? "";
    const answer = lines.find((line) => line.includes('"id":2'));
    if (answer) {
      elapsed = performance.now() - started;
      toolsListBytes = Buffer.byteLength(answer);
      visibleBytes = modelVisibleBytes(JSON.parse(answer).result.tools);
      framedBytes = framedModelVisibleBytes(JSON.parse(answer).result.tools);
      break;
    }
  }
  child.kill();
  await child.exited;
  return { ms: elapsed, toolsListBytes, modelVisibleBytes: visibleBytes, framedVisibleBytes: framedBytes };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

export async function run(): Promise<Record<string, number>> {
  const folders: string[] = [];
  try {
    return await measureHandshake(folders);
  } finally {
    for (const folder of folders) rmSync(folder, { recursive: true, force: true });
  }
}

async function measureHandshake(folders: string[]): Promise<Record<string, number>> {
  const project = mkdtempSync(join(tmpdir(), "flameox-bench-"));
  folders.push(project);
  await handshakeOnce(project);
  const times: number[] = [];
  let bytes = 0;
  let visible = 0;
  let framed = 0;
  for (let index = 0; index < runs; index += 1) {
    const result = await handshakeOnce(project);
    times.push(result.ms);
    bytes = result.toolsListBytes;
    visible = result.modelVisibleBytes;
    framed = result.framedVisibleBytes;
  }
  const cache = mkdtempSync(join(tmpdir(), "flameox-bench-cache-"));
  folders.push(cache);
  const init = Bun.spawnSync([binary, "init", project, "--json"], { env: { ...process.env, FLAMEOX_CACHE_DIR: cache } });
  if (init.exitCode !== 0) throw new Error("init failed");
  const coldCache = mkdtempSync(join(tmpdir(), "flameox-bench-cache-"));
  folders.push(coldCache);
  let started = performance.now();
  Bun.spawnSync([binary, "status", "--json", "--project-root", project], { env: { ...process.env, FLAMEOX_CACHE_DIR: coldCache } });
  const coldStatus = performance.now() - started;
  started = performance.now();
  Bun.spawnSync([binary, "status", "--json", "--project-root", project], { env: { ...process.env, FLAMEOX_CACHE_DIR: coldCache } });
  const warmStatus = performance.now() - started;
  const warmEnv = { ...process.env, FLAMEOX_CACHE_DIR: coldCache };
  const status = startMedians([binary, "status", "--json", "--project-root", project], warmEnv);
  const version = startMedians([binary, "--version"], warmEnv);
  const previous = previousFlameox();
  const previousStatus =
    "commit" in previous ? startMedians([previous.binary, "status", "--json", "--project-root", project], warmEnv) : null;
  return {
    status_median_ms: status.wall_ms,
    status_median_cpu_ms: status.cpu_ms,
    status_runs: statusRuns,
    version_median_ms: version.wall_ms,
    version_median_cpu_ms: version.cpu_ms,
    status_over_version_ratio: Number((status.wall_ms / version.wall_ms).toFixed(2)),
    previous_status_median_ms: previousStatus?.wall_ms ?? Number.NaN,
    previous_status_median_cpu_ms: previousStatus?.cpu_ms ?? Number.NaN,
    status_ratio_previous_over_current: previousStatus ? Number((previousStatus.wall_ms / status.wall_ms).toFixed(2)) : Number.NaN,
    handshake_median_ms: Number(median(times).toFixed(1)),
    handshake_min_ms: Number(Math.min(...times).toFixed(1)),
    handshake_runs: runs,
    tools_list_bytes: bytes,
    tools_list_model_visible_bytes: visible,
    tools_list_model_visible_framed_bytes: framed,
    binary_bytes: statSync(binary).size,
    duckdb_first_run_extraction_ms: Number((coldStatus - warmStatus).toFixed(1)),
    status_cold_cache_ms: Number(coldStatus.toFixed(1)),
    status_warm_cache_ms: Number(warmStatus.toFixed(1)),
  };
}

if (import.meta.main) console.log(JSON.stringify(await run(), null, 2));
