// The Chrome trace extractor as it was before the byte-scanning fast path (commit 65b1873), kept as
// the reference the fast path is checked against row for row.
/**
 * Chrome trace JSON (a bare array, or `{traceEvents: [...]}`): Chrome, Perfetto JSON, torch.profiler,
 * py-spy chrometrace. Events are streamed one by one through a bounded reorder window (producers
 * such as Chrome write X slices at completion, children first), then nested per pid/tid:
 * trace_events rows get parent/depth, and the self time of every slice (duration minus children)
 * becomes a stacks row for the root→leaf slice names (unit ns).
 */
import { projectRelativePath, type EvidenceSink, type TraceEventRow } from "../../../../src/domain/evidence.ts";
import {
  FrameTable,
  RowEmitter,
  StackAggregator,
  artifactParseFailed,
  type ExtractOptions,
  type ExtractResult,
  type StackGroup,
} from "../../../../src/adapters/formats/common.ts";
import { readJsonWithVisitor, type JsonVisitor } from "../../../../src/adapters/formats/json-stream.ts";

type ChromeTraceOptions = ExtractOptions & {
  /** Events held back to restore timestamp order before nesting; bounds memory. */
  reorderWindow?: number;
};

/** Upper bound of the JSON text kept for an event's args. */
const maxArgsBytes = 4096;
const maxArgValueBytes = 1024;

type ChromeEvent = Record<string, unknown>;

type Pending = { ts: number; group: number; sub: number; seq: number; event: ChromeEvent };

type OpenSlice = {
  id: number;
  name: string;
  tsNs: number;
  endNs: number;
  durNs: number;
  childNs: number;
  node: number;
  /** B slices wait for their E before their row can be written. */
  begin: { row: TraceEventRow; args: Record<string, unknown> | null } | null;
};

type ThreadState = { pid: string | null; tid: string | null; stack: OpenSlice[]; lastNs: number; group: StackGroup };

const torchTopLevelKeys = new Set(["schemaVersion", "deviceProperties", "distributedInfo", "baseTimeNanoseconds", "trace_id"]);
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

function byteLength(text: string): number {
  return /^[\x00-\x7f]*$/.test(text) ? text.length : new TextEncoder().encode(text).length;
}

/**
 * JSON text of args, at most `maxArgsBytes`: oversized values become a truncated string preview,
 * and keys that no longer fit are dropped with `"…truncated": true`, so the text stays valid JSON
 * and small args (`Input Dims`, `Bytes`) survive whole.
 */
function boundedArgsJson(args: unknown): string | null {
  if (args === undefined || args === null) return null;
  const whole = JSON.stringify(args);
  if (whole === undefined) return null;
  if (byteLength(whole) <= maxArgsBytes) return whole;
  if (typeof args !== "object" || Array.isArray(args)) {
    return JSON.stringify({ "…truncated": true, preview: whole.slice(0, maxArgValueBytes) });
  }
  const kept: string[] = [];
  let used = 2 + 20; // braces and the truncation marker
  for (const [key, value] of Object.entries(args as Record<string, unknown>)) {
    let text = JSON.stringify(value);
    if (text === undefined) continue;
    if (byteLength(text) > maxArgValueBytes) text = JSON.stringify(`${text.slice(0, maxArgValueBytes / 2)}…`);
    const member = `${JSON.stringify(key)}:${text}`;
    const size = byteLength(member) + 1;
    if (used + size > maxArgsBytes) continue;
    used += size;
    kept.push(member);
  }
  kept.push('"…truncated":true');
  return `{${kept.join(",")}}`;
}

function asText(value: unknown): string | null {
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "bigint") return String(value);
  return null;
}

function pick(args: Record<string, unknown> | null, keys: readonly string[]): string | null {
  if (!args) return null;
  for (const key of keys) {
    const text = asText(args[key]);
    if (text !== null) return text;
  }
  return null;
}

const correlationKeys = ["correlation", "correlationId", "correlation_id", "Correlation ID", "External id", "external id"];
const deviceKeys = ["device", "deviceId", "Device"];
const streamKeys = ["stream", "streamId", "Stream"];

/** µs (possibly fractional) → integer ns. */
function microsToNs(value: unknown): number | null {
  const number = typeof value === "number" ? value : typeof value === "string" ? Number(value) : Number.NaN;
  return Number.isFinite(number) ? Math.round(number * 1000) : null;
}

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
    items.push(item);
    let at = items.length - 1;
    while (at > 0) {
      const parent = (at - 1) >> 1;
      if (!lessThan(items[at] as Pending, items[parent] as Pending)) break;
      [items[at], items[parent]] = [items[parent] as Pending, items[at] as Pending];
      at = parent;
    }
  }
  pop(): Pending | undefined {
    const items = this.items;
    const top = items[0];
    const last = items.pop();
    if (items.length > 0 && last) {
      items[0] = last;
      let at = 0;
      for (;;) {
        const left = at * 2 + 1;
        const right = left + 1;
        let smallest = at;
        if (left < items.length && lessThan(items[left] as Pending, items[smallest] as Pending)) smallest = left;
        if (right < items.length && lessThan(items[right] as Pending, items[smallest] as Pending)) smallest = right;
        if (smallest === at) break;
        [items[at], items[smallest]] = [items[smallest] as Pending, items[at] as Pending];
        at = smallest;
      }
    }
    return top;
  }
}

export async function extractChromeTraceReference(path: string, sink: EvidenceSink, options: ChromeTraceOptions): Promise<ExtractResult> {
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

  const threadKey = (pid: string | null, tid: string | null): string => `${pid ?? ""}\u0000${tid ?? ""}`;
  const threadOf = (pid: string | null, tid: string | null): ThreadState => {
    const key = threadKey(pid, tid);
    let state = threads.get(key);
    if (!state) {
      const group = aggregator.group(key, { thread: tid, process: pid, unit: "ns", scale: 1 });
      state = { pid, tid, stack: [], lastNs: Number.NEGATIVE_INFINITY, group };
      threads.set(key, state);
    }
    return state;
  };

  const sliceFrame = (name: string, category: string | null, args: Record<string, unknown> | null): number => {
    const file = typeof args?.filename === "string" ? args.filename : typeof args?.file === "string" ? args.file : null;
    const line = typeof args?.line === "number" && Number.isFinite(args.line) ? args.line : null;
    return frames.intern({
      function: name,
      file: projectRelativePath(file, options.projectRoot),
      line,
      module: category,
      language: options.language ?? (category === "py-spy" ? "python" : "trace"),
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

  const baseRow = (
    event: ChromeEvent,
    phase: string,
    tsNs: number,
    args: Record<string, unknown> | null,
    pid: string | null,
    tid: string | null,
  ): TraceEventRow => {
    const name = typeof event.name === "string" ? event.name : (asText(event.name) ?? "");
    return {
      event_id: nextId++,
      parent_id: null,
      depth: 0,
      name,
      category: typeof event.cat === "string" ? event.cat : null,
      ts_ns: tsNs,
      dur_ns: null,
      pid,
      tid,
      args: boundedArgsJson(event.args),
      correlation: pick(args, correlationKeys),
      device: pick(args, deviceKeys),
      stream: pick(args, streamKeys),
      phase,
    };
  };

  const process = (event: ChromeEvent): void => {
    const phase = event.ph as string;
    const args =
      event.args && typeof event.args === "object" && !Array.isArray(event.args) ? (event.args as Record<string, unknown>) : null;
    const tsNs = microsToNs(event.ts) ?? 0;
    const pid = asText(event.pid);
    const tid = asText(event.tid);
    const category = typeof event.cat === "string" ? event.cat : null;
    if (category === "py-spy") hints.pySpy++;
    else if (category !== null) hints.other++;
    if (
      !hints.torch &&
      ((category !== null && torchCategories.has(category)) || (typeof event.name === "string" && event.name.startsWith("ProfilerStep#")))
    ) {
      hints.torch = true;
    }
    switch (phase) {
      case "X":
      case "B": {
        const thread = threadOf(pid, tid);
        closeEnded(thread, tsNs);
        const parent = thread.stack[thread.stack.length - 1] ?? null;
        const row = baseRow(event, phase, tsNs, args, pid, tid);
        row.parent_id = parent?.id ?? null;
        row.depth = thread.stack.length;
        const name = row.name === "" ? "<unnamed>" : row.name;
        const node = aggregator.child(parent?.node ?? 0, sliceFrame(name, row.category, args));
        if (phase === "X") {
          const durNs = Math.max(0, microsToNs(event.dur) ?? 0);
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
            begin: { row, args },
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
        closeBegin(thread, thread.stack.pop() as OpenSlice, tsNs, args);
        return;
      }
      case "M": {
        const name = typeof args?.name === "string" ? args.name : null;
        if (event.name === "process_name" && pid !== null && name) processNames.set(pid, name);
        if (event.name === "thread_name" && name) threadNames.set(threadKey(pid, tid), name);
        emitter.traceEvent(baseRow(event, phase, microsToNs(event.ts) ?? 0, args, pid, tid));
        return;
      }
      case "i":
      case "I":
      case "n":
      case "s":
      case "t":
      case "f": {
        const row = baseRow(event, phase, tsNs, args, pid, tid);
        if (phase === "s" || phase === "t" || phase === "f") row.correlation ??= asText(event.id) ?? asText(event.bind_id);
        const scope = typeof event.s === "string" ? event.s : "t";
        if (scope === "t" && phase !== "n") {
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
        const row = baseRow(event, phase, tsNs, args, pid, tid);
        if (event.id !== undefined) row.correlation ??= asText(event.id);
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
      const merged = { ...(begin.args ?? {}), ...endArgs };
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
    process(item.event);
  };

  const accept = (value: unknown): void => {
    counters.events++;
    if (!value || typeof value !== "object" || Array.isArray(value)) {
      counters.nonObjects++;
      return;
    }
    const event = value as ChromeEvent;
    if (typeof event.ph !== "string") {
      counters.withoutPhase++;
      return;
    }
    const ph = event.ph;
    const ts = ph === "M" ? Number.NEGATIVE_INFINITY : (microsToNs(event.ts) ?? 0);
    let group = 2;
    let sub = 0;
    if (ph === "B" || ph === "E") group = 0;
    else if (ph === "X") {
      group = 1;
      sub = -(microsToNs(event.dur) ?? 0);
    }
    if (ts < releasedTs) counters.late++;
    heap.push({ ts, group, sub, seq: seq++, event });
    if (heap.size > window) release();
  };

  const visitor: JsonVisitor = {
    select(p) {
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
    },
    value(_p, value) {
      accept(value);
    },
  };

  await readJsonWithVisitor(path, visitor, { mode: options.parseMode });
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
