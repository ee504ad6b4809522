import { copyFileSync, linkSync } from "node:fs";
import { callTool, type McpSession } from "../../../test/support/binary.ts";
import { load1, mebibytes, median, round, type Measured } from "./measure.ts";

/** One measured CLI step as figures: throughput over the input's bytes, peak RSS, and the error if it failed. */
export function ingestStep(result: Measured, bytes: number): Record<string, unknown> {
  const ok = result.exitCode === 0;
  return {
    ok,
    wall_s: round(result.wallMs / 1000, 2),
    cpu_s: round(result.cpuMs / 1000, 2),
    mb_per_s: ok ? round(mebibytes(bytes) / (result.wallMs / 1000), 1) : null,
    peak_rss_mb: mebibytes(result.maxRssBytes),
    peak_rss_polled: result.peakPolled,
    killed_by_rss_guard: result.killedByGuard,
    error: ok ? null : failureText(result.stderrTail || result.stdout),
  };
}

/** Median latency of one MCP tool call; a refusal or error is reported, never timed as a success. */
export async function toolLatency(
  session: McpSession,
  tool: string,
  args: Record<string, unknown>,
  repeats: number,
): Promise<Record<string, unknown>> {
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

/** The cached input appears inside the project (imports refuse paths outside it) without copying 1 GB when a hard link works. */
export function placeInProject(source: string, target: string): void {
  try {
    linkSync(source, target);
  } catch {
    copyFileSync(source, target);
  }
}

/**
 * The line that says why a step failed: the last "…Error: …" line (a Bun script's stderr ends with a
 * source excerpt and the runtime's version after it), else the last three lines.
 */
function failureText(output: string): string {
  const lines = output.trim().split("\n");
  const reason = lines.findLast((line) => /\b[A-Za-z ]*Error\b.*:/.test(line));
  return (reason ?? lines.slice(-3).join(" | ")).trim().slice(0, 600);
}
