/**
 * Issue 4, torch: a torch.profiler-like Chrome trace of BENCH_TORCH_TRACE_MB MiB (default 1024; the
 * ingest module's cached generator, `cpu_op` events with `Input Dims` and `[memory]` instants) through
 *   `flameox import --kind execution_trace --producer torch.profiler` (which extracts on import), then
 *   `flameox extract perfetto <run>` (re-extraction, superseding the first bundle),
 * each with wall time, MiB/s and peak RSS of the child; then the latency of each analysis an agent runs
 * on it over one long-lived MCP session (analyze_pytorch, get_trace_window at the start and in the middle
 * of the trace, analyze_failures, summarize_evidence): median of BENCH_ANALYSIS_REPEATS (default 3) calls,
 * the first (cold) call reported on its own. The 1-minute load average is recorded beside every figure.
 */
import { copyFileSync, linkSync } from "node:fs";
import { join } from "node:path";
import { callTool, connectMcp, type McpSession } from "../../test/support/binary.ts";
import { chromeTrace } from "./lib/generate.ts";
import { benchOutput, binary, initProject, load1, measure, mebibytes, median, requireBinary, round, withTempFolder, type Measured } from "./lib/measure.ts";

const traceMegabytes = Number(process.env.BENCH_TORCH_TRACE_MB ?? 1024);
const repeats = Number(process.env.BENCH_ANALYSIS_REPEATS ?? 3);
const rssGuardBytes = Number(process.env.BENCH_RSS_GUARD_MB ?? 12288) * (1 << 20);
const timeoutMs = Number(process.env.BENCH_INGEST_TIMEOUT_S ?? 900) * 1000;

function step(result: Measured, bytes: number): Record<string, unknown> {
  const ok = result.exitCode === 0;
  return {
    ok,
    wall_s: round(result.wallMs / 1000, 2),
    mb_per_s: ok ? round(mebibytes(bytes) / (result.wallMs / 1000), 1) : null,
    peak_rss_mb: mebibytes(result.maxRssBytes),
    killed_by_rss_guard: result.killedByGuard,
    error: ok ? null : (result.stderrTail || result.stdout).trim().split("\n").slice(-3).join(" | ").slice(0, 600),
  };
}

/** Median latency of one MCP tool call; a refusal or error is reported, never timed as a success. */
async function latency(session: McpSession, tool: string, args: Record<string, unknown>): Promise<Record<string, unknown>> {
  const times: number[] = [];
  let last: Awaited<ReturnType<typeof callTool>> | null = null;
  for (let index = 0; index < repeats; index += 1) {
    const started = performance.now();
    last = await callTool(session, tool, args);
    times.push(performance.now() - started);
    if (!last.envelope?.ok) break;
  }
  const ok = Boolean(last?.envelope?.ok);
  return {
    ok,
    median_ms: ok ? round(median(times), 1) : null,
    first_ms: round(times[0]!, 1),
    calls: times.length,
    returned: (last?.envelope?.result?.returned as number | undefined) ?? null,
    load1: load1(),
    error: ok ? null : `${last?.envelope?.error?.code}: ${String(last?.envelope?.error?.message).slice(0, 300)}`,
  };
}

export async function run(): Promise<Record<string, unknown>> {
  requireBinary();
  const input = chromeTrace(traceMegabytes);
  return withTempFolder("torch-ingest-", async (project) => {
    initProject(project);
    const inside = join(project, "torch-trace.json");
    try {
      linkSync(input.path, inside);
    } catch {
      copyFileSync(input.path, inside);
    }
    const loadImport = load1();
    const imported = await measure([binary, "import", inside, "--kind", "execution_trace", "--producer", "torch.profiler", "--json", "--project-root", project], { cwd: project, rssGuardBytes, timeoutMs });
    const importFigures = { ...step(imported, input.bytes), load1: loadImport };
    if (imported.exitCode !== 0) return { input_mb: mebibytes(input.bytes), flameox_import: importFigures };
    const receipt = JSON.parse(imported.stdout) as { run_id: string; evidence?: { tables?: Record<string, number> } };
    const loadExtract = load1();
    const extracted = await measure([binary, "extract", "perfetto", receipt.run_id, "--json", "--project-root", project], { cwd: project, rssGuardBytes, timeoutMs });
    const extractFigures = { ...step(extracted, input.bytes), load1: loadExtract };
    const session = await connectMcp(project);
    try {
      const first = await callTool(session, "get_run", { run_id: receipt.run_id });
      const artifact = (first.envelope?.result?.artifacts as { artifact_id: string; kind: string }[] | undefined)?.find((entry) => entry.kind === "execution_trace")?.artifact_id;
      const analyses: Record<string, unknown> = {
        analyze_pytorch: await latency(session, "analyze_pytorch", { run_or_artifact: receipt.run_id, limit: 20 }),
      };
      if (artifact) {
        const head = await callTool(session, "get_trace_window", { artifact_id: artifact, start_ns: 0, end_ns: Number.MAX_SAFE_INTEGER, limit: 1 });
        const startNs = Number(head.envelope?.result?.events?.[0]?.ts_ns ?? 0);
        analyses.get_trace_window_start_10ms = await latency(session, "get_trace_window", { artifact_id: artifact, start_ns: startNs, end_ns: startNs + 10_000_000, limit: 1000 });
        analyses.get_trace_window_plus_60s_10ms = await latency(session, "get_trace_window", { artifact_id: artifact, start_ns: startNs + 60_000_000_000, end_ns: startNs + 60_010_000_000, limit: 1000 });
      }
      analyses.analyze_failures = await latency(session, "analyze_failures", { limit: 20 });
      analyses.summarize_evidence = await latency(session, "summarize_evidence", { request: { run_ids: [receipt.run_id] } });
      return {
        input_mb: mebibytes(input.bytes),
        input_generated_ms: input.generated_ms,
        evidence_rows: receipt.evidence?.tables ?? null,
        flameox_import: importFigures,
        flameox_extract_perfetto: extractFigures,
        analysis_repeats: repeats,
        analyses,
      };
    } finally {
      await session.close();
    }
  }, benchOutput);
}

if (import.meta.main) console.log(JSON.stringify(await run(), null, 2));
