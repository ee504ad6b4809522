/**
 * Chrome trace event JSON (`{"traceEvents": [...]}`) for Perfetto UI, chrome://tracing and the
 * Firefox Profiler. Trace events are written back as they were kept; stacks, which carry no time,
 * become a synthetic flame chart per thread: every call-tree node one complete ("X") slice whose
 * duration is its total weight, children laid side by side from the parent's start.
 */
import type { FrameRow, StackRow, TraceEventRow } from "../../domain/evidence.ts";
import { invalidArguments } from "../../domain/errors.ts";
import {
  type ExportFrames,
  type ExportStacks,
  type ExportSummary,
  type StackGroup,
  batchText,
  frameMap,
  frameOf,
  groupStacks,
  groupStacksAsync,
  writeChunks,
} from "./rows.ts";

export type ChromeTraceEvent = {
  name: string;
  ph: string;
  ts: number;
  pid: number;
  tid: number;
  dur?: number;
  cat?: string;
  id?: string;
  args?: Record<string, unknown>;
};

export type ChromeTraceFile = { traceEvents: ChromeTraceEvent[]; displayTimeUnit: "ns" | "ms"; otherData?: Record<string, unknown> };

export type ChromeTraceSource = { trace_events: Iterable<TraceEventRow> } | { frames: ExportFrames; stacks: Iterable<StackRow> };

export type ChromeTraceOptions = {
  /** How long one sample lasts when stacks are counted in samples (default 1 ms). */
  sample_interval_ns?: number;
};

/** Chrome wants numeric pid/tid; names that are not numbers get small ids plus a name metadata event. */
class Identifiers {
  private readonly ids = new Map<string, number>();
  private next = 1_000_000;
  readonly metadata: ChromeTraceEvent[] = [];

  process(pid: string | null): number {
    return this.resolve(`p\u0000${pid ?? ""}`, pid, (id, name) => ({
      name: "process_name",
      ph: "M",
      ts: 0,
      pid: id,
      tid: 0,
      args: { name },
    }));
  }

  thread(pid: number, tid: string | null): number {
    return this.resolve(`t\u0000${pid}\u0000${tid ?? ""}`, tid, (id, name) => ({
      name: "thread_name",
      ph: "M",
      ts: 0,
      pid,
      tid: id,
      args: { name },
    }));
  }

  private resolve(key: string, value: string | null, describe: (id: number, name: string) => ChromeTraceEvent): number {
    const known = this.ids.get(key);
    if (known !== undefined) return known;
    let id: number;
    if (value !== null && /^\d{1,15}$/.test(value)) id = Number(value);
    else {
      id = this.next;
      this.next += 1;
      if (value !== null) this.metadata.push(describe(id, value));
    }
    this.ids.set(key, id);
    return id;
  }
}

function parsedArgs(text: string | null): Record<string, unknown> | undefined {
  if (text === null) return undefined;
  try {
    const value: unknown = JSON.parse(text);
    return value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : { value };
  } catch {
    return { text };
  }
}

function* fromTraceEvents(events: Iterable<TraceEventRow>): Generator<string> {
  const identifiers = new Identifiers();
  yield '{"displayTimeUnit":"ns","traceEvents":[';
  let first = true;
  for (const row of events) {
    const pid = identifiers.process(row.pid);
    // A begin event whose end was matched at import carries its duration: write it as one complete
    // event, since a lone "B" without its "E" would stay open to the end of the thread.
    const phase = row.phase === "B" && row.dur_ns !== null ? "X" : row.phase || "X";
    const event: ChromeTraceEvent = { name: row.name, ph: phase, ts: row.ts_ns / 1000, pid, tid: identifiers.thread(pid, row.tid) };
    if (row.category !== null) event.cat = row.category;
    if (row.dur_ns !== null && (event.ph === "X" || row.dur_ns > 0)) event.dur = row.dur_ns / 1000;
    if (row.correlation !== null) event.id = row.correlation;
    const args = parsedArgs(row.args);
    if (args) event.args = args;
    for (const metadata of identifiers.metadata.splice(0)) {
      yield `${first ? "" : ","}${JSON.stringify(metadata)}`;
      first = false;
    }
    yield `${first ? "" : ","}${JSON.stringify(event)}`;
    first = false;
  }
  yield "]}\n";
}

type Node = { key: string; total: number; children: Map<string, Node> };

function* fromStacks(frames: ReadonlyMap<string, FrameRow>, groups: StackGroup[], options: ChromeTraceOptions): Generator<string> {
  const identifiers = new Identifiers();
  const sampleNs = options.sample_interval_ns ?? 1_000_000;
  yield '{"displayTimeUnit":"ns","otherData":{"producer":"flameox","note":"synthetic flame chart: durations are total weights, not wall-clock times"},"traceEvents":[';
  let first = true;
  for (const group of groups) {
    if (group.unit === "bytes") {
      throw invalidArguments(
        "chrome trace export",
        [{ field: "stacks.unit", message: "byte-weighted stacks have no duration to lay out on a timeline", type: "unsupported_unit" }],
        ["Export memory profiles as speedscope or pprof."],
      );
    }
    const toMicros = group.unit === "ns" ? 1 / 1000 : sampleNs / 1000;
    const root: Node = { key: "", total: 0, children: new Map() };
    for (const stack of group.stacks) {
      root.total += stack.weight;
      let node = root;
      for (const key of stack.frame_keys) {
        let child = node.children.get(key);
        if (!child) {
          child = { key, total: 0, children: new Map() };
          node.children.set(key, child);
        }
        child.total += stack.weight;
        node = child;
      }
    }
    const pid = identifiers.process(group.process);
    const tid = identifiers.thread(pid, group.thread);
    for (const metadata of identifiers.metadata.splice(0)) {
      yield `${first ? "" : ","}${JSON.stringify(metadata)}`;
      first = false;
    }
    // Explicit work list, parents before children, so deep recursion cannot overflow the call stack.
    const work: Array<{ node: Node; start: number }> = [];
    let offset = 0;
    for (const child of root.children.values()) {
      work.push({ node: child, start: offset });
      offset += child.total;
    }
    work.reverse();
    while (work.length > 0) {
      const { node, start } = work.pop() as { node: Node; start: number };
      const frame = frameOf(frames, node.key);
      const args: Record<string, unknown> = {};
      if (frame.file) args.filename = frame.file;
      if (frame.line !== null) args.line = frame.line;
      const event: ChromeTraceEvent = {
        name: frame.function,
        cat: "flameox",
        ph: "X",
        ts: start * toMicros,
        dur: node.total * toMicros,
        pid,
        tid,
        args,
      };
      yield `${first ? "" : ","}${JSON.stringify(event)}`;
      first = false;
      const children: Array<{ node: Node; start: number }> = [];
      let childStart = start;
      for (const child of node.children.values()) {
        children.push({ node: child, start: childStart });
        childStart += child.total;
      }
      for (let index = children.length - 1; index >= 0; index -= 1) work.push(children[index] as { node: Node; start: number });
    }
  }
  yield "]}\n";
}

/** The trace as an object (small inputs). */
export function toChromeTrace(source: ChromeTraceSource, options: ChromeTraceOptions = {}): ChromeTraceFile {
  const text =
    "trace_events" in source
      ? [...fromTraceEvents(source.trace_events)].join("")
      : [...fromStacks(frameMap(source.frames), groupStacks(source.stacks), options)].join("");
  return JSON.parse(text) as ChromeTraceFile;
}

/** Streams the trace to `path`: trace events when given, else a flame chart synthesized from stacks. */
export async function writeChromeTrace(
  path: string,
  source: { trace_events: Iterable<TraceEventRow> } | { frames: ExportFrames; stacks: ExportStacks },
  options: ChromeTraceOptions = {},
): Promise<ExportSummary> {
  if ("trace_events" in source) return writeChunks(path, batchText(fromTraceEvents(source.trace_events)), "chrome_trace");
  const groups = await groupStacksAsync(source.stacks);
  return writeChunks(path, batchText(fromStacks(frameMap(source.frames), groups, options)), "chrome_trace");
}
