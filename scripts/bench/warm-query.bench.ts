/**
 * Warm analyze_hotspots over MCP: one `flameox mcp serve` session per build, the first call (cold: DuckDB
 * loads, the view opens, the ranking is computed) and then BENCH_WARM_CALLS (20) repeats of the same
 * question, plus the second page, on two bundles in one project:
 *   - `small`: BENCH_WARM_SMALL_STACKS (204) stack rows, the issue's row;
 *   - `large`: BENCH_WARM_LARGE_STACKS (1,000,000) stack rows, 10M samples; 0 skips it.
 * The reference is the previous flameox (lib/previous-flameox.ts) answering the same questions on the same
 * workspace in the same run, BENCH_WARM_PREVIOUS_CALLS (5, 2 on the large bundle) times; both builds'
 * answers are compared field for field (`identical_to_previous`). Ratios are previous / current.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { binary, initProject, load1, median, requireBinary, round, withTempFolder } from "./lib/measure.ts";
import { previousFlameox } from "./lib/previous-flameox.ts";
import { registerStackBundle } from "./lib/stack-bundle.ts";

const smallStacks = Number(process.env.BENCH_WARM_SMALL_STACKS ?? 204);
const largeStacks = Number(process.env.BENCH_WARM_LARGE_STACKS ?? 1_000_000);
const calls = Number(process.env.BENCH_WARM_CALLS ?? 20);
const previousCalls = Number(process.env.BENCH_WARM_PREVIOUS_CALLS ?? 5);

type Answer = { ok: boolean; result: Record<string, unknown> | null; error: unknown };

async function session(
  command: string,
  project: string,
): Promise<{ call: (args: Record<string, unknown>) => Promise<Answer>; close: () => Promise<void> }> {
  const transport = new StdioClientTransport({
    command,
    args: ["mcp", "serve", "--project-root", project],
    stderr: "ignore",
    cwd: project,
  });
  const client = new Client({ name: "flameox-bench", version: "1.0.0" });
  await client.connect(transport);
  return {
    call: async (args) => {
      const raw = await client.callTool({ name: "analyze_hotspots", arguments: args }, undefined, { timeout: 1_800_000 });
      const envelope = raw.structuredContent as { ok: boolean; result: Record<string, unknown> | null; error: unknown };
      return { ok: envelope.ok, result: envelope.result, error: envelope.error };
    },
    close: () => client.close(),
  };
}

/** First call, then `repeats` more of the same question, then page two: latencies in ms and the answers. */
async function timeBuild(command: string, project: string, runId: string, repeats: number) {
  const connection = await session(command, project);
  try {
    const question = { run_or_artifact: runId, limit: 20 };
    let started = performance.now();
    const first = await connection.call(question);
    const firstMs = performance.now() - started;
    if (!first.ok) return { error: JSON.stringify(first.error).slice(0, 400) };
    const times: number[] = [];
    for (let index = 0; index < repeats; index += 1) {
      started = performance.now();
      await connection.call(question);
      times.push(performance.now() - started);
    }
    started = performance.now();
    const second = await connection.call({ ...question, cursor: first.result?.next_cursor ?? null });
    const secondPageMs = performance.now() - started;
    return { firstMs, times, secondPageMs, first: first.result, second: second.result };
  } finally {
    await connection.close();
  }
}

/** The answer without what legitimately differs between builds and calls (cursors are signed per call). */
function comparable(result: Record<string, unknown> | null | undefined): unknown {
  if (!result) return null;
  const { next_cursor: _cursor, ...rest } = result;
  return rest;
}

async function measureBundle(project: string, rows: number, previous: string | null, previousRepeats: number) {
  const { runId } = await registerStackBundle(project, rows, Math.max(rows, 10 * rows));
  const figures: Record<string, unknown> = { stack_rows: rows, load1_before: load1() };
  const current = await timeBuild(binary, project, runId, calls);
  if ("error" in current) return { ...figures, error: current.error };
  const currentMedian = median(current.times);
  Object.assign(figures, {
    first_ms: round(current.firstMs),
    warm_median_ms: round(currentMedian, 2),
    warm_min_ms: round(Math.min(...current.times), 2),
    second_page_ms: round(current.secondPageMs, 2),
    warm_calls: current.times.length,
  });
  if (previous && previousRepeats > 0) {
    const before = await timeBuild(previous, project, runId, previousRepeats);
    if ("error" in before) return { ...figures, previous_error: before.error };
    const previousMedian = median(before.times);
    Object.assign(figures, {
      previous_first_ms: round(before.firstMs),
      previous_warm_median_ms: round(previousMedian, 2),
      previous_second_page_ms: round(before.secondPageMs, 2),
      warm_ratio_previous_over_current: round(previousMedian / currentMedian, 1),
      first_ratio_previous_over_current: round(before.firstMs / current.firstMs, 2),
      identical_to_previous:
        JSON.stringify(comparable(before.first)) === JSON.stringify(comparable(current.first)) &&
        JSON.stringify(comparable(before.second)) === JSON.stringify(comparable(current.second)),
    });
  }
  figures.load1_after = load1();
  return figures;
}

export async function run(): Promise<Record<string, unknown>> {
  requireBinary();
  const previous = previousFlameox();
  return withTempFolder("flameox-bench-warm-", async (project) => {
    initProject(project);
    const previousBinary = previous.binary;
    const small = await measureBundle(project, smallStacks, previousBinary, previousCalls);
    const large =
      largeStacks > 0 ? await measureBundle(project, largeStacks, previousBinary, Math.min(previousCalls, 2)) : { skipped: true };
    return {
      previous: "commit" in previous ? previous.commit : { error: previous.error },
      small,
      large,
    };
  });
}

if (import.meta.main) console.log(JSON.stringify(await run(), null, 2));
