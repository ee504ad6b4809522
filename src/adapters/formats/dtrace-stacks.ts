/**
 * DTrace aggregated stacks, as printed for `@[stack()] = count()` or `@[ustack()] = count()`
 * (FlameGraph's stackcollapse.pl input): after the header (`CPU ID FUNCTION:NAME` and the probe
 * that ended the run), each entry is its frames, leaf first, one `module`function+0xoffset` (or a
 * bare address) per indented line, then its count on an indented line of its own, then a blank line.
 * A blank line before a count drops what came before it (the header's probe line). The count is
 * taken as samples (a `sum()` aggregation would be some other unit; the file does not say).
 */
import type { EvidenceSink } from "../../domain/evidence.ts";
import { FrameTable, RowEmitter, fileParseFailed, boundStaging, type ExtractOptions, type ExtractResult } from "./common.ts";
import { readArtifactLines } from "./artifact-lines.ts";
import { StackAggregator } from "./stack-aggregator.ts";

export const dtraceHeader = /^CPU\s+ID\s+FUNCTION:NAME\s*$/;
export const dtraceFrameLine = /^\s+\S+`\S+/;
export const dtraceCountLine = /^\s+(-?\d+)\s*$/;

/** `module`function+0xoffset` → function and module; a frame without a module is its text. */
export function parseDtraceFrame(text: string): { function: string; module: string | null } {
  const trimmed = text.trim();
  const tick = trimmed.indexOf("`");
  const module = tick > 0 ? trimmed.slice(0, tick) : null;
  const symbol = (tick >= 0 ? trimmed.slice(tick + 1) : trimmed).replace(/\+0x[0-9a-fA-F]+$/, "");
  return { function: symbol === "" ? "[unknown]" : symbol, module };
}

export async function extractDtraceStacks(path: string, sink: EvidenceSink, options: ExtractOptions): Promise<ExtractResult> {
  boundStaging(sink, path);
  const frames = new FrameTable();
  const aggregator = new StackAggregator();
  const group = aggregator.group("", { thread: null, process: null, unit: "samples", scale: 1 });
  let pending: string[] = [];
  let entries = 0;
  let negative = 0;
  for await (const { line } of readArtifactLines(path)) {
    if (line.trim() === "") {
      pending = [];
      continue;
    }
    if (dtraceHeader.test(line)) continue;
    const count = dtraceCountLine.exec(line);
    if (count) {
      entries++;
      const weight = Number(count[1]);
      if (!(weight >= 0 && weight <= Number.MAX_SAFE_INTEGER)) negative++;
      else if (pending.length > 0) {
        let node = 0;
        for (let index = pending.length - 1; index >= 0; index--) {
          const frame = parseDtraceFrame(pending[index] as string);
          node = aggregator.child(node, frames.intern({ ...frame, file: null, line: null, language: options.language ?? "native" }));
        }
        aggregator.add(group, node, weight, weight);
      }
      pending = [];
      continue;
    }
    pending.push(line);
  }
  if (entries === 0) throw fileParseFailed(path, "no aggregated stacks (frame lines followed by a count line) were found");
  const emitter = new RowEmitter(sink, options.maxRows);
  aggregator.emit(emitter, (frameId) => frames.rows[frameId] as (typeof frames.rows)[number]);
  const limitations = [
    "Counts are taken as samples: the file does not say what the aggregation counted.",
    ...aggregator.limitations(),
    ...emitter.limitations(),
  ];
  if (negative > 0) limitations.unshift(`${negative} entries had a negative or absurd count and were left out.`);
  return { rows: emitter.counts, producer: "dtrace", limitations };
}
