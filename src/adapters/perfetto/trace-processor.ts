/**
 * Perfetto protobuf traces are read through the host's own `trace_processor` (Perfetto's query
 * engine); flameox never parses the protobuf itself. Without one installed the answer is
 * CAPABILITY_UNAVAILABLE with the remedy, never a guess.
 */
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { artifactParseFailed, capabilityUnavailable, type FlameoxError } from "../../domain/errors.ts";
import type { EvidenceSink } from "../../domain/evidence.ts";
import { resolveExecutable } from "../../exec/executable.ts";
import type { CommandRunner } from "../capture-adapter.ts";

export const traceProcessorNames = ["trace_processor", "trace_processor_shell"];
export const traceProcessorQueryVersion = "flameox.perfetto-slices@1";
export const traceProcessorRemedy =
  "Install Perfetto's trace_processor (the trace_processor_shell binary of a Perfetto release, renamed or linked as trace_processor) on PATH, then call extract_perfetto again; or export the trace as Chrome JSON and import that.";

const sliceQuery = `SELECT s.id, s.ts, s.dur, s.name, s.category, s.depth, s.parent_id, t.tid, p.pid
FROM slice s LEFT JOIN thread_track tt ON s.track_id = tt.id LEFT JOIN thread t USING (utid) LEFT JOIN process p USING (upid)
ORDER BY s.ts, s.id;`;

export function findTraceProcessor(pathValue: string): string | null {
  for (const name of traceProcessorNames) {
    try {
      return resolveExecutable(name, pathValue);
    } catch {
      // Try the next name.
    }
  }
  return null;
}

export function traceProcessorUnavailable(runId: string): FlameoxError {
  return capabilityUnavailable("This trace is a Perfetto protobuf trace and no trace_processor is installed on this host.", {
    details: { run_id: runId, requirement: "trace_processor", next_tool: "list_capabilities" },
    remediation: [traceProcessorRemedy],
    next: { tool: "list_capabilities" },
  });
}

/** RFC 4180-ish CSV as trace_processor prints it (quoted header and strings). */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = "";
  let quoted = false;
  for (let index = 0; index < text.length; index += 1) {
    const character = text[index]!;
    if (quoted) {
      if (character === '"' && text[index + 1] === '"') {
        field += '"';
        index += 1;
      } else if (character === '"') quoted = false;
      else field += character;
    } else if (character === '"') quoted = true;
    else if (character === ",") {
      row.push(field);
      field = "";
    } else if (character === "\n") {
      row.push(field);
      rows.push(row);
      row = [];
      field = "";
    } else if (character !== "\r") field += character;
  }
  if (field.length > 0 || row.length > 0) rows.push([...row, field]);
  return rows;
}

export async function extractPerfettoProtobuf(
  input: { artifact: string; traceProcessor: string; run: CommandRunner; scratchDirectory: string },
  sink: EvidenceSink,
): Promise<{ sliceCount: number; limitations: string[] }> {
  mkdirSync(input.scratchDirectory, { recursive: true });
  const queryFile = join(input.scratchDirectory, "flameox-slices.sql");
  if (!existsSync(queryFile)) writeFileSync(queryFile, sliceQuery);
  const result = await input.run([input.traceProcessor, "--query-file", queryFile, input.artifact], { timeoutMs: 600_000 });
  if (result.exitCode !== 0) {
    throw artifactParseFailed(`trace_processor could not read the trace (exit ${result.exitCode}): ${result.stderr.trim().slice(-300)}`, {
      remediation: ["Check that the file is a complete Perfetto trace; record it again if it was cut short."],
    });
  }
  const rows = parseCsv(result.stdout).filter((row) => row.length >= 9);
  const header = rows.findIndex((row) => row[0] === "id" && row[1] === "ts");
  const body = header >= 0 ? rows.slice(header + 1) : rows;
  let sliceCount = 0;
  for (const row of body) {
    const [id, ts, dur, name, category, depth, parent, tid, pid] = row;
    const number = (value: string | undefined) => (value === undefined || value === "" || value === "[NULL]" ? null : Number(value));
    if (number(id) === null || number(ts) === null) continue;
    sink.traceEvent({
      event_id: number(id)!,
      parent_id: number(parent),
      depth: number(depth) ?? 0,
      name: name ?? "",
      category: category && category !== "[NULL]" ? category : null,
      ts_ns: number(ts)!,
      dur_ns: number(dur),
      pid: pid && pid !== "[NULL]" ? pid : null,
      tid: tid && tid !== "[NULL]" ? tid : null,
      args: null,
      correlation: null,
      device: null,
      stream: null,
      phase: "X",
    });
    sliceCount += 1;
  }
  return { sliceCount, limitations: ["Perfetto slices only (no args, flows or counters) through trace_processor."] };
}
