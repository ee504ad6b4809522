/**
 * Chrome trace JSON (a bare array, or `{traceEvents: [...]}`): Chrome, Perfetto JSON, torch.profiler,
 * py-spy chrometrace. Events are streamed one by one through a bounded reorder window (producers
 * such as Chrome write X slices at completion, children first), then nested per pid/tid:
 * trace_events rows get parent/depth, and the self time of every slice (duration minus children)
 * becomes a stacks row for the root→leaf slice names (unit ns).
 *
 * Events come from the text scanner of chrome-event-scanner.ts (one pass per event, args kept as
 * their own JSON text where that equals the re-serialized value); `parseMode: "whole"` parses the
 * file with JSON.parse instead. Both give the same records. The reorder window is a min-heap of
 * (ts, B/E before X before others, longer X first, arrival) holding `reorderWindow` events: each new
 * event beyond that releases the smallest, exactly as before the scanner existed.
 */
import { projectRelativePath, type EvidenceSink, type TraceEventRow } from "../../domain/evidence.ts";
import {
  FrameTable,
  RowEmitter,
  StackAggregator,
  artifactParseFailed,
  type ExtractOptions,
  type ExtractResult,
  type StackGroup,
} from "./common.ts";
import {
  FastScanError,
  TraceEventRecord,
  UnsupportedShape,
  boundedArgsJson,
  correlationKeys,
  deviceKeys,
  maxArgsBytes,
  pick,
  recordFromObject,
  scanChromeEvents,
  streamKeys,
  torchTopLevelKeys,
} from "./chrome-event-scanner.ts";
import { readJsonWithVisitor, scanJsonFile, type JsonVisitor } from "./json-stream.ts";

export { boundedArgsJson, maxArgsBytes };

export type ChromeTraceOptions = ExtractOptions & {
  /** Events held back to restore timestamp order before nesting; bounds memory. */
  reorderWindow?: number;
};

type Pending = TraceEventRecord;

type OpenSlice = {
  id: number;
  name: string;
  tsNs: number;
  endNs: number;
  durNs: number;
  childNs: number;
  node: number;
  /** B slices wait for their E before their row can be written. */
  begin: { row: TraceEventRow; record: TraceEventRecord } | null;
};

type ThreadState = { pid: string | null; tid: string | null; stack: OpenSlice[]; lastNs: number; group: StackGroup };

const torchCategories = new Set([
  "cpu_op",
  "python_function",
  "user_annotation",
  "cpu_instant_event",
  "kernel",
  "cuda_runtime",
  "gpu_memcpy",
  "gpu_memset",
  "ac2g",
]);

function lessThan(left: Pending, right: Pending): boolean {
  if (left.ts !== right.ts) return left.ts < right.ts;
  if (left.group !== right.group) return left.group < right.group;
  if (left.sub !== right.sub) return left.sub < right.sub;
  return left.seq < right.seq;
}

/** Binary min-heap of pending events. */
class PendingHeap {
  private readonly items: Pending[] = [];
  get size(): number {
    return this.items.length;
  }
  push(item: Pending): void {
    const items = this.items;
    let at = items.length;
    items.push(item);
    while (at > 0) {
      const parent = (at - 1) >> 1;
      const above = items[parent] as Pending;
      if (!lessThan(item, above)) break;
      items[at] = above;
      at = parent;
    }
    items[at] = item;
  }
  pop(): Pending | undefined {
    const items = this.items;
    const top = items[0];
    const last = items.pop();
    const length = items.length;
    if (length > 0 && last) {
      let at = 0;
      for (;;) {
        const left = at * 2 + 1;
        if (left >= length) break;
        const right = left + 1;
        let child = left;
        if (right < length && lessThan(items[right] as Pending, items[left] as Pending)) child = right;
        const candidate = items[child] as Pending;
        if (!lessThan(candidate, last)) break;
        items[at] = candidate;
        at = child;
      }
      items[at] = last;
    }
    return top;
  }
}

export async function extractChromeTrace(path: string, sink: EvidenceSink, options: ChromeTraceOptions): Promise<ExtractResult> {
  const emitter = new RowEmitter(sink, options.maxRows);
  const frames = new FrameTable();
  const aggregator = new StackAggregator();
  const heap = new PendingHeap();
  const window = Math.max(1, options.reorderWindow ?? 20_000);
  const threads = new Map<string, ThreadState>();
  const processNames = new Map<string, string>();
  const threadNames = new Map<string, string>();
  const counters = { nonObjects: 0, withoutPhase: 0, unmatchedEnds: 0, unclosedBegins: 0, late: 0, events: 0 };
  const hints = { torch: false, pySpy: 0, other: 0, topLevelObject: false, sawTraceEvents: false };
  let seq = 0;
  let nextId = 1;
  let releasedTs = Number.NEGATIVE_INFINITY;
  const language = options.language;

  const threadKey = (pid: string | null, tid: string | null): string => `${pid ?? ""}\u0000${tid ?? ""}`;
  // Most events hit the thread of the previous one.
  let lastThread: ThreadState | null = null;
  const threadOf = (pid: string | null, tid: string | null): ThreadState => {
    if (lastThread !== null && lastThread.pid === pid && lastThread.tid === tid) return lastThread;
    const key = threadKey(pid, tid);
    let state = threads.get(key);
    if (!state) {
      const group = aggregator.group(key, { thread: tid, process: pid, unit: "ns", scale: 1 });
      state = { pid, tid, stack: [], lastNs: Number.NEGATIVE_INFINITY, group };
      threads.set(key, state);
    }
    lastThread = state;
    return state;
  };

  // Frames of slices without file/line, by category then name (interning builds a key per call).
  const plainFrames = new Map<string | null, Map<string, number>>();
  const sliceFrame = (name: string, category: string | null, record: TraceEventRecord): number => {
    const file = record.file;
    const line = record.line;
    if (file === null && line === null) {
      let byName = plainFrames.get(category);
      if (!byName) {
        byName = new Map();
        plainFrames.set(category, byName);
      }
      const known = byName.get(name);
      if (known !== undefined) return known;
      const frame = frames.intern({
        function: name,
        file: null,
        line: null,
        module: category,
        language: language ?? (category === "py-spy" ? "python" : "trace"),
      });
      byName.set(name, frame);
      return frame;
    }
    return frames.intern({
      function: name,
      file: projectRelativePath(file, options.projectRoot),
      line,
      module: category,
      language: language ?? (category === "py-spy" ? "python" : "trace"),
    });
  };

  const finishSlice = (thread: ThreadState, slice: OpenSlice): void => {
    const self = Math.max(0, slice.durNs - slice.childNs);
    if (self > 0) aggregator.add(thread.group, slice.node, self, 1);
    const parent = thread.stack[thread.stack.length - 1];
    if (parent) parent.childNs += Math.max(0, Math.min(slice.endNs, parent.endNs) - slice.tsNs);
  };

  /** Closes complete (X) slices that ended at or before `tsNs`. */
  const closeEnded = (thread: ThreadState, tsNs: number): void => {
    for (;;) {
      const top = thread.stack[thread.stack.length - 1];
      if (!top || top.begin || top.endNs > tsNs) return;
      thread.stack.pop();
      finishSlice(thread, top);
    }
  };

  const baseRow = (record: TraceEventRecord, phase: string, tsNs: number): TraceEventRow => ({
    event_id: nextId++,
    parent_id: null,
    depth: 0,
    name: record.name,
    category: record.category,
    ts_ns: tsNs,
    dur_ns: null,
    pid: record.pid,
    tid: record.tid,
    args: record.argsJson,
    correlation: record.correlation,
    device: record.device,
    stream: record.stream,
    phase,
  });

  const process = (record: TraceEventRecord): void => {
    const phase = record.ph as string;
    const tsNs = record.tsNs ?? 0;
    const pid = record.pid;
    const tid = record.tid;
    const category = record.category;
    if (category === "py-spy") hints.pySpy++;
    else if (category !== null) hints.other++;
    if (!hints.torch && ((category !== null && torchCategories.has(category)) || record.nameString?.startsWith("ProfilerStep#"))) {
      hints.torch = true;
    }
    switch (phase) {
      case "X":
      case "B": {
        const thread = threadOf(pid, tid);
        closeEnded(thread, tsNs);
        const parent = thread.stack[thread.stack.length - 1] ?? null;
        const row = baseRow(record, phase, tsNs);
        row.parent_id = parent?.id ?? null;
        row.depth = thread.stack.length;
        const name = row.name === "" ? "<unnamed>" : row.name;
        const node = aggregator.child(parent?.node ?? 0, sliceFrame(name, row.category, record));
        if (phase === "X") {
          const durNs = Math.max(0, record.durNs ?? 0);
          row.dur_ns = durNs;
          emitter.traceEvent(row);
          thread.stack.push({ id: row.event_id, name, tsNs, endNs: tsNs + durNs, durNs, childNs: 0, node, begin: null });
          thread.lastNs = Math.max(thread.lastNs, tsNs + durNs);
        } else {
          thread.stack.push({
            id: row.event_id,
            name,
            tsNs,
            endNs: Number.POSITIVE_INFINITY,
            durNs: 0,
            childNs: 0,
            node,
            begin: { row, record },
          });
          thread.lastNs = Math.max(thread.lastNs, tsNs);
        }
        return;
      }
      case "E": {
        const thread = threadOf(pid, tid);
        thread.lastNs = Math.max(thread.lastNs, tsNs);
        let at = thread.stack.length - 1;
        while (at >= 0 && !thread.stack[at]?.begin) at--;
        if (at < 0) {
          counters.unmatchedEnds++;
          return;
        }
        // Complete slices still open above the B end with it (badly nested input).
        while (thread.stack.length - 1 > at) {
          const inner = thread.stack.pop() as OpenSlice;
          finishSlice(thread, inner);
        }
        closeBegin(thread, thread.stack.pop() as OpenSlice, tsNs, record.argsObject());
        return;
      }
      case "M": {
        const name = record.metaName;
        if (record.nameString === "process_name" && pid !== null && name) processNames.set(pid, name);
        if (record.nameString === "thread_name" && name) threadNames.set(threadKey(pid, tid), name);
        emitter.traceEvent(baseRow(record, phase, tsNs));
        return;
      }
      case "i":
      case "I":
      case "n":
      case "s":
      case "t":
      case "f": {
        const row = baseRow(record, phase, tsNs);
        if (phase === "s" || phase === "t" || phase === "f") row.correlation ??= record.idText ?? record.bindIdText;
        if (record.scope === "t" && phase !== "n") {
          const thread = threadOf(pid, tid);
          closeEnded(thread, tsNs);
          const parent = thread.stack[thread.stack.length - 1];
          row.parent_id = parent?.id ?? null;
          row.depth = thread.stack.length;
        }
        emitter.traceEvent(row);
        return;
      }
      default: {
        const row = baseRow(record, phase, tsNs);
        if (record.idDefined) row.correlation ??= record.idText;
        emitter.traceEvent(row);
      }
    }
  };

  const closeBegin = (thread: ThreadState, slice: OpenSlice, endNs: number, endArgs: Record<string, unknown> | null): void => {
    const begin = slice.begin as NonNullable<OpenSlice["begin"]>;
    slice.durNs = Math.max(0, endNs - slice.tsNs);
    slice.endNs = slice.tsNs + slice.durNs;
    const row = begin.row;
    row.dur_ns = slice.durNs;
    if (endArgs) {
      const merged = { ...(begin.record.argsObject() ?? {}), ...endArgs };
      row.args = boundedArgsJson(merged);
      row.correlation ??= pick(merged, correlationKeys);
      row.device ??= pick(merged, deviceKeys);
      row.stream ??= pick(merged, streamKeys);
    }
    emitter.traceEvent(row);
    finishSlice(thread, slice);
  };

  const release = (): void => {
    const item = heap.pop();
    if (!item) return;
    releasedTs = Math.max(releasedTs, item.ts);
    process(item);
  };

  const acceptRecord = (record: TraceEventRecord): void => {
    counters.events++;
    const ph = record.ph;
    if (ph === null) {
      counters.withoutPhase++;
      return;
    }
    const ts = ph === "M" ? Number.NEGATIVE_INFINITY : (record.tsNs ?? 0);
    let group = 2;
    let sub = 0;
    if (ph === "B" || ph === "E") group = 0;
    else if (ph === "X") {
      group = 1;
      sub = -(record.durNs ?? 0);
    }
    if (ts < releasedTs) counters.late++;
    record.ts = ts;
    record.group = group;
    record.sub = sub;
    record.seq = seq++;
    heap.push(record);
    if (heap.size > window) release();
  };

  const accept = (value: unknown): void => {
    if (!value || typeof value !== "object" || Array.isArray(value)) {
      counters.events++;
      counters.nonObjects++;
      return;
    }
    const record = new TraceEventRecord();
    recordFromObject(value as Record<string, unknown>, record);
    acceptRecord(record);
  };

  const select: JsonVisitor["select"] = (p) => {
    if (p.length === 0) return "enter";
    const first = p[0];
    if (p.length === 1) {
      if (typeof first === "number") return "capture";
      hints.topLevelObject = true;
      if (first === "traceEvents") {
        hints.sawTraceEvents = true;
        return "enter";
      }
      if (torchTopLevelKeys.has(first as string)) hints.torch = true;
      return "skip";
    }
    return p.length === 2 && first === "traceEvents" ? "capture" : "skip";
  };
  const visitor: JsonVisitor = {
    select,
    value(_p, value) {
      accept(value);
    },
  };

  // A sink that streams its rows (the evidence bundle writer) may ask the reader to wait for it.
  const drain = (sink as { drain?: () => Promise<void> }).drain;
  let generic = options.parseMode === "whole";
  if (!generic) {
    try {
      await scanChromeEvents(path, {
        topLevelKey(key) {
          hints.topLevelObject = true;
          if (torchTopLevelKeys.has(key)) hints.torch = true;
        },
        sawTraceEvents() {
          hints.topLevelObject = true;
          hints.sawTraceEvents = true;
        },
        event: acceptRecord,
        other: accept,
        chunk: typeof drain === "function" ? () => drain.call(sink) : undefined,
      });
    } catch (error) {
      if (error instanceof UnsupportedShape) generic = true;
      else if (error instanceof FastScanError) {
        // The generic scanner names the exact place; it throws ARTIFACT_PARSE_FAILED.
        await scanJsonFile(path, { select, value: () => {} });
        throw artifactParseFailed(path, error.message);
      } else throw error;
    }
  }
  if (generic) await readJsonWithVisitor(path, visitor, { mode: options.parseMode });
  if (hints.topLevelObject && !hints.sawTraceEvents) {
    throw artifactParseFailed(path, "the JSON object has no `traceEvents` array: this is not a Chrome trace");
  }
  while (heap.size > 0) release();

  for (const thread of threads.values()) {
    while (thread.stack.length > 0) {
      const slice = thread.stack.pop() as OpenSlice;
      if (slice.begin) {
        counters.unclosedBegins++;
        closeBegin(thread, slice, Math.max(thread.lastNs, slice.tsNs), null);
      } else finishSlice(thread, slice);
    }
  }

  // Thread/process names from M events apply to the stacks rows (trace rows keep raw ids).
  for (const thread of threads.values()) {
    const group = thread.group;
    group.thread = threadNames.get(threadKey(thread.pid, thread.tid)) ?? thread.tid;
    group.process = (thread.pid !== null ? processNames.get(thread.pid) : undefined) ?? thread.pid;
  }
  aggregator.emit(emitter, (frameId) => frames.rows[frameId] as (typeof frames.rows)[number]);

  const limitations: string[] = [];
  if (counters.nonObjects > 0) limitations.push(`${counters.nonObjects} trace entries were not objects and were skipped.`);
  if (counters.withoutPhase > 0) limitations.push(`${counters.withoutPhase} events had no "ph" and were skipped.`);
  if (counters.unmatchedEnds > 0) limitations.push(`${counters.unmatchedEnds} E events had no open B on their thread.`);
  if (counters.unclosedBegins > 0) {
    limitations.push(`${counters.unclosedBegins} B events were never closed; they end at their thread's last timestamp.`);
  }
  if (counters.late > 0) {
    limitations.push(
      `${counters.late} events arrived more than ${window} events out of timestamp order; their nesting may be approximate.`,
    );
  }
  limitations.push(...emitter.limitations());
  const result: ExtractResult = { rows: emitter.counts, limitations };
  if (hints.torch) result.producer = "torch.profiler";
  else if (hints.pySpy > 0 && hints.other === 0) result.producer = "py-spy";
  return result;
}
