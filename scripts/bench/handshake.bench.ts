/**
 * Cold MCP handshake of the compiled binary: spawn → initialize → tools/list, median of N runs;
 * plus tools/list size (whole answer, and the part a model reads), binary size and first-run DuckDB
 * extraction time.
 */
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { modelVisibleBytes, promptVisibleBytes } from "../../src/mcp/model-visible.ts";

const root = resolve(import.meta.dir, "../..");
const binary = process.env.FLAMEOX_BINARY || join(root, "dist", "flameox");
const runs = Number(process.env.BENCH_RUNS ?? 25);

async function handshakeOnce(
  project: string,
): Promise<{ ms: number; toolsListBytes: number; modelVisibleBytes: number; promptVisibleBytes: number }> {
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
  let promptBytes = 0;
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
      promptBytes = promptVisibleBytes(JSON.parse(answer).result.tools);
      break;
    }
  }
  child.kill();
  await child.exited;
  return { ms: elapsed, toolsListBytes, modelVisibleBytes: visibleBytes, promptVisibleBytes: promptBytes };
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
  let prompt = 0;
  for (let index = 0; index < runs; index += 1) {
    const result = await handshakeOnce(project);
    times.push(result.ms);
    bytes = result.toolsListBytes;
    visible = result.modelVisibleBytes;
    prompt = result.promptVisibleBytes;
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
  return {
    handshake_median_ms: Number(median(times).toFixed(1)),
    handshake_min_ms: Number(Math.min(...times).toFixed(1)),
    handshake_runs: runs,
    tools_list_bytes: bytes,
    tools_list_model_visible_bytes: visible,
    tools_list_prompt_visible_bytes: prompt,
    binary_bytes: statSync(binary).size,
    duckdb_first_run_extraction_ms: Number((coldStatus - warmStatus).toFixed(1)),
    status_cold_cache_ms: Number(coldStatus.toFixed(1)),
    status_warm_cache_ms: Number(warmStatus.toFixed(1)),
  };
}

if (import.meta.main) console.log(JSON.stringify(await run(), null, 2));
