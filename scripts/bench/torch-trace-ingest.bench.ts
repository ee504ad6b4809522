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
import { join } from "node:path";
import { callTool, connectMcp } from "../../test/support/binary.ts";
import { ingestStep, placeInProject, toolLatency } from "./lib/ingest-figures.ts";
import { chromeTrace } from "./lib/generate.ts";
import { benchOutput, binary, initProject, load1, measure, mebibytes, requireBinary, withTempFolder } from "./lib/measure.ts";

const traceMegabytes = Number(process.env.BENCH_TORCH_TRACE_MB ?? 1024);
const repeats = Number(process.env.BENCH_ANALYSIS_REPEATS ?? 3);
const rssGuardBytes = Number(process.env.BENCH_RSS_GUARD_MB ?? 12288) * (1 << 20);
const timeoutMs = Number(process.env.BENCH_INGEST_TIMEOUT_S ?? 900) * 1000;

export async function run(): Promise<Record<string, unknown>> {
  requireBinary();
  const input = chromeTrace(traceMegabytes);
  return withTempFolder(
    "torch-ingest-",
    async (project) => {
      initProject(project);
      const inside = join(project, "torch-trace.json");
      placeInProject(input.path, inside);
      const loadImport = load1();
      const imported = await measure(
        [binary, "import", inside, "--kind", "execution_trace", "--producer", "torch.profiler", "--json", "--project-root", project],
        { cwd: project, rssGuardBytes, timeoutMs },
      );
      const importFigures = { ...ingestStep(imported, input.bytes), load1: loadImport };
      if (imported.exitCode !== 0) return { input_mb: mebibytes(input.bytes), flameox_import: importFigures };
      const receipt = JSON.parse(imported.stdout) as { run_id: string; evidence?: { tables?: Record<string, number> } };
      const loadExtract = load1();
      const extracted = await measure([binary, "extract", "perfetto", receipt.run_id, "--json", "--project-root", project], {
        cwd: project,
        rssGuardBytes,
        timeoutMs,
      });
      const extractFigures = { ...ingestStep(extracted, input.bytes), load1: loadExtract };
      const session = await connectMcp(project);
      try {
        const first = await callTool(session, "get_run", { run_id: receipt.run_id });
        const artifact = (first.envelope?.result?.artifacts as { artifact_id: string; kind: string }[] | undefined)?.find(
          (entry) => entry.kind === "execution_trace",
        )?.artifact_id;
        const analyses: Record<string, unknown> = {
          analyze_pytorch: await toolLatency(session, "analyze_pytorch", { run_or_artifact: receipt.run_id, limit: 20 }, repeats),
        };
        if (artifact) {
          const head = await callTool(session, "get_trace_window", {
            artifact_id: artifact,
            start_ns: 0,
            end_ns: Number.MAX_SAFE_INTEGER,
            limit: 1,
          });
          const startNs = Number(head.envelope?.result?.events?.[0]?.ts_ns ?? 0);
          analyses.get_trace_window_start_10ms = await toolLatency(
            session,
            "get_trace_window",
            { artifact_id: artifact, start_ns: startNs, end_ns: startNs + 10_000_000, limit: 1000 },
            repeats,
          );
          analyses.get_trace_window_plus_60s_10ms = await toolLatency(
            session,
            "get_trace_window",
            { artifact_id: artifact, start_ns: startNs + 60_000_000_000, end_ns: startNs + 60_010_000_000, limit: 1000 },
            repeats,
          );
        }
        analyses.analyze_failures = await toolLatency(session, "analyze_failures", { limit: 20 }, repeats);
        analyses.summarize_evidence = await toolLatency(session, "summarize_evidence", { request: { run_ids: [receipt.run_id] } }, repeats);
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
    },
    benchOutput,
  );
}

if (import.meta.main) console.log(JSON.stringify(await run(), null, 2));
