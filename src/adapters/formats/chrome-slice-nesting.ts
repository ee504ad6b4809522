/**
 * Nests the events of a Chrome trace per thread (pid and tid), fed in timestamp order: X and B/E
 * slices form each thread's open stack, trace_events rows get parent/depth, and the self time of
 * every slice (duration minus children) becomes stacks weight for its root→leaf slice names (ns).
 *
 * Where input does not nest, it is handled the way trace viewers do, with a limitation:
 * - an X slice that starts inside the open slice but ends after it ends that slice first (they are
 *   siblings; the overlap counts for both), so `ts=i, dur=5` chains stay flat and linear;
 * - an E closes the innermost open B of its name (or the innermost B when it has none); an E whose
 *   name matches no open B closes nothing;
 * - slices deeper than `maxOpenSlices` are leaves of the deepest one.
 * kineto's bookkeeping spans (category `Trace` on its `Spans` track: `PyTorch Profiler (0)`,
 * `__MTIA_CCP_events__ (-1)`, `MTIA Activity Trace (-1)`) stay trace events but are not work: they
 * are no stack frame and carry no self time.
 */
import { projectRelativePath, type TraceEventRow } from "../../domain/evidence.ts";
import { FrameTable, type RowEmitter, ownedString } from "./common.ts";
import {
  type TraceClock,
  type TraceEventRecord,
  boundedArgsJson,
  correlationKeys,
  deviceKeys,
  pick,
  streamKeys,
} from "./chrome-event-record.ts";
import { StackAggregator } from "./stack-aggregator.ts";
import { nestingNotes } from "./chrome-nesting-notes.ts";
import { isBookkeepingSpan, isTorchCategory } from "./kineto.ts";
import { isPySpyContextFrame } from "./py-spy-raw.ts";
import { ThreadLabels } from "./thread-labels.ts";
import { type OpenSlice, type ThreadState, popSlice, pushBegin } from "./chrome-open-stack.ts";

/** py-spy's `process N:"…"` and `thread (N)` slices (chrometrace with --subprocesses/--threads). */
function isPySpyContextSlice(record: TraceEventRecord): boolean {
  return record.category === "py-spy" && !record.file && isPySpyContextFrame(record.name);
}

export type NestingOptions = {
  projectRoot: string | null;
  language?: string;
  clock: TraceClock;
  /** Open slices per thread beyond which new slices are leaves. */
  maxOpenSlices?: number;
  /** Emitted stack frames per stack (root-side frames beyond are folded into one). */
  maxStackFrames?: number;
  /** Distinct stacks held before they are flushed to a sink that merges repeats (0: never). */
  maxHeldStacks?: number;
};

export type NestingCounters = {
  unmatchedEnds: number;
  unclosedBegins: number;
  overlaps: number;
  tooDeep: number;
  bookkeeping: number;
  pySpyContext: number;
  negativeDurations: number;
};

export class SliceNester {
  readonly hints = { torch: false, pySpy: 0, other: 0 };
  readonly counters: NestingCounters = {
    unmatchedEnds: 0,
    unclosedBegins: 0,
    overlaps: 0,
    tooDeep: 0,
    bookkeeping: 0,
    pySpyContext: 0,
    negativeDurations: 0,
  };
  private frames = new FrameTable();
  private readonly aggregator: StackAggregator;
  private readonly threads = new Map<string, ThreadState>();
  private readonly labels = new ThreadLabels();
  private readonly plainFrames = new Map<string | null, Map<string, number>>();
  private readonly maxOpenSlices: number;
  private readonly maxHeldStacks: number;
  /** X and B slices seen. */
  slices = 0;
  private nextId = 1;
  private lastThread: ThreadState | null = null;
  constructor(
    private readonly emitter: RowEmitter,
    private readonly options: NestingOptions,
  ) {
    this.aggregator = new StackAggregator(options.maxStackFrames ?? 256);
    this.maxOpenSlices = options.maxOpenSlices ?? 10_000;
    this.maxHeldStacks = options.maxHeldStacks ?? 0;
  }

  process(record: TraceEventRecord): void {
    const phase = record.ph as string;
    const category = record.category;
    if (category === "py-spy") this.hints.pySpy++;
    else if (category !== null) this.hints.other++;
    if (!this.hints.torch && (isTorchCategory(category) || record.nameString?.startsWith("ProfilerStep#"))) {
      this.hints.torch = true;
    }
    switch (phase) {
      case "X":
      case "B":
        this.open(record, phase);
        return;
      case "E":
        this.end(record);
        return;
      case "M":
        this.labels.metadata(record);
        this.emitter.traceEvent(this.baseRow(record, phase));
        return;
      case "i":
      case "I":
      case "n":
      case "s":
      case "t":
      case "f": {
        const row = this.baseRow(record, phase);
        if (phase === "s" || phase === "t" || phase === "f") row.correlation ??= record.idText ?? record.bindIdText;
        if (record.scope === "t" && phase !== "n") {
          const thread = this.threadOf(record.pid, record.tid);
          this.closeEnded(thread, record.tsNs ?? 0);
          const parent = thread.stack[thread.stack.length - 1];
          row.parent_id = parent?.id ?? null;
          row.depth = thread.stack.length;
        }
        this.emitter.traceEvent(row);
        return;
      }
      default: {
        const row = this.baseRow(record, phase);
        if (record.idDefined) row.correlation ??= record.idText;
        this.emitter.traceEvent(row);
      }
    }
  }

  /** Frames interned and trie nodes held now (bounded by the stacks budget when the sink merges repeats). */
  get held(): { frames: number; nodes: number } {
    return { frames: this.frames.rows.length, nodes: this.aggregator.nodes };
  }

  /** The names the trace's metadata events gave its threads and processes. */
  get threadLabels(): ThreadLabels {
    return this.labels;
  }

  /** Closes what is still open and emits the slices' stacks (unless `stacks` is false: a sampled profile stands for them). */
  finish(stacks = true): void {
    for (const thread of this.threads.values()) {
      while (thread.stack.length > 0) {
        const slice = popSlice(thread);
        if (slice.begin) {
          this.counters.unclosedBegins++;
          this.closeBegin(thread, slice, Math.max(thread.lastNs, slice.tsNs), null);
        } else this.finishSlice(thread, slice);
      }
    }
    if (!stacks) return;
    const resolve = (frameId: number) => this.frames.rows[frameId] as (typeof this.frames.rows)[number];
    if (this.aggregator.flushed) {
      // Earlier rows went out under thread keys; the sink relabels and merges them all.
      this.aggregator.flush(this.emitter, resolve);
      this.emitter.stacksMayRepeat(this.labels.all([...this.threads.values()]));
    } else {
      this.labels.apply([...this.threads.values()]);
      this.aggregator.emit(this.emitter, resolve);
    }
  }

  limitations(): string[] {
    return [...nestingNotes(this.counters, this.maxOpenSlices), ...this.aggregator.limitations()];
  }

  private threadOf(pid: string | null, tid: string | null): ThreadState {
    // Most events hit the thread of the previous one.
    const last = this.lastThread;
    if (last !== null && last.pid === pid && last.tid === tid) return last;
    const key = `${pid ?? ""}\u0000${tid ?? ""}`;
    let state = this.threads.get(key);
    if (!state) {
      const group = this.aggregator.group(ownedString(key), { thread: ownedString(tid), process: ownedString(pid), unit: "ns", scale: 1 });
      // Owned copies: a thread lives for the whole trace, a slice of the text would pin its chunk.
      state = {
        key: ownedString(key),
        pid: ownedString(pid),
        tid: ownedString(tid),
        stack: [],
        begins: [],
        beginsByName: new Map(),
        lastNs: Number.NEGATIVE_INFINITY,
        group,
      };
      if (this.aggregator.flushed) this.labels.keyed(state);
      this.threads.set(key, state);
    }
    this.lastThread = state;
    return state;
  }

  /** Frames of slices without file/line, by category then name (interning builds a key per call). */
  private sliceFrame(name: string, category: string | null, record: TraceEventRecord): number {
    const language = this.options.language ?? (category === "py-spy" ? "python" : "trace");
    if (record.file === null && record.line === null) {
      let byName = this.plainFrames.get(category);
      if (!byName) {
        byName = new Map();
        this.plainFrames.set(ownedString(category), byName);
      }
      const known = byName.get(name);
      if (known !== undefined) return known;
      const frame = this.frames.intern({ function: name, file: null, line: null, module: category, language });
      // Keyed by the frame's own copy of the name, not a slice that pins the chunk it came from.
      byName.set((this.frames.rows[frame] as { function: string }).function, frame);
      return frame;
    }
    return this.frames.intern({
      function: name,
      file: projectRelativePath(record.file, this.options.projectRoot),
      line: record.line,
      module: category,
      language,
    });
  }

  private baseRow(record: TraceEventRecord, phase: string): TraceEventRow {
    return {
      event_id: this.nextId++,
      parent_id: null,
      depth: 0,
      name: record.name,
      category: record.category,
      ts_ns: record.tsNs === null ? 0 : this.options.clock.absoluteNs(record.tsNs),
      dur_ns: null,
      pid: record.pid,
      tid: record.tid,
      args: record.argsJson,
      correlation: record.correlation,
      device: record.device,
      stream: record.stream,
      phase,
    };
  }

  private open(record: TraceEventRecord, phase: "X" | "B"): void {
    this.slices++;
    const tsNs = record.tsNs ?? 0;
    const thread = this.threadOf(record.pid, record.tid);
    this.closeEnded(thread, tsNs);
    let durNs = 0;
    if (phase === "X") {
      durNs = record.durNs ?? 0;
      if (durNs < 0) {
        this.counters.negativeDurations++;
        durNs = 0;
      }
      this.endOverlapped(thread, tsNs, tsNs + durNs);
    }
    const parent = thread.stack[thread.stack.length - 1] ?? null;
    const row = this.baseRow(record, phase);
    row.parent_id = parent?.id ?? null;
    row.depth = thread.stack.length;
    const name = row.name === "" ? "<unnamed>" : row.name;
    const bookkeeping = isBookkeepingSpan(record);
    if (bookkeeping) this.counters.bookkeeping++;
    const context = !bookkeeping && isPySpyContextSlice(record);
    if (context) {
      this.counters.pySpyContext++;
      this.labels.contextName(record);
    }
    const frame = bookkeeping || context ? -1 : this.sliceFrame(name, row.category, record);
    const parentNode = parent?.node ?? 0;
    const node = frame < 0 ? parentNode : this.aggregator.child(parentNode, frame);
    const tooDeep = thread.stack.length >= this.maxOpenSlices;
    if (tooDeep) this.counters.tooDeep++;
    if (phase === "X") {
      row.dur_ns = durNs;
      this.emitter.traceEvent(row);
      const slice: OpenSlice = { id: row.event_id, name, tsNs, endNs: tsNs + durNs, durNs, childNs: 0, node, frame, begin: null };
      thread.lastNs = Math.max(thread.lastNs, tsNs + durNs);
      if (tooDeep) this.finishSlice(thread, slice);
      else thread.stack.push(slice);
      return;
    }
    thread.lastNs = Math.max(thread.lastNs, tsNs);
    const slice: OpenSlice = {
      id: row.event_id,
      name,
      tsNs,
      endNs: Number.POSITIVE_INFINITY,
      durNs: 0,
      childNs: 0,
      node,
      frame,
      begin: { row, record },
    };
    if (tooDeep) this.closeBegin(thread, slice, tsNs, null);
    else pushBegin(thread, slice, row.name);
  }

  private end(record: TraceEventRecord): void {
    const tsNs = record.tsNs ?? 0;
    const thread = this.threadOf(record.pid, record.tid);
    thread.lastNs = Math.max(thread.lastNs, tsNs);
    const name = record.nameString;
    const positions = name === null || name === "" ? thread.begins : thread.beginsByName.get(name);
    const at = positions?.[positions.length - 1] ?? -1;
    if (at < 0) {
      this.counters.unmatchedEnds++;
      return;
    }
    // Slices still open above the B end with it (badly nested input).
    while (thread.stack.length - 1 > at) {
      const inner = popSlice(thread);
      if (inner.begin) this.closeBegin(thread, inner, tsNs, null);
      else this.finishSlice(thread, inner);
    }
    this.closeBegin(thread, popSlice(thread), tsNs, record.argsObject());
  }

  private finishSlice(thread: ThreadState, slice: OpenSlice): void {
    const self = Math.max(0, slice.durNs - slice.childNs);
    if (self > 0 && slice.frame >= 0) this.aggregator.add(thread.group, slice.node, self, 1);
    if (this.maxHeldStacks > 0 && this.overBudget()) this.flushStacks();
    const parent = thread.stack[thread.stack.length - 1];
    if (parent) parent.childNs += Math.max(0, Math.min(slice.endNs, parent.endNs) - slice.tsNs);
  }

  /** Closes complete (X) slices that ended at or before `tsNs`. */
  private closeEnded(thread: ThreadState, tsNs: number): void {
    for (;;) {
      const top = thread.stack[thread.stack.length - 1];
      if (!top || top.begin || top.endNs > tsNs) return;
      thread.stack.pop();
      this.finishSlice(thread, top);
    }
  }

  /** Ends open X slices that a new slice [start, end) overlaps without fitting inside. */
  private endOverlapped(thread: ThreadState, start: number, end: number): void {
    for (;;) {
      const top = thread.stack[thread.stack.length - 1];
      if (!top || top.begin || top.endNs >= end || top.endNs <= start) return;
      this.counters.overlaps++;
      thread.stack.pop();
      this.finishSlice(thread, top);
    }
  }

  private closeBegin(thread: ThreadState, slice: OpenSlice, endNs: number, endArgs: Record<string, unknown> | null): void {
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
    this.emitter.traceEvent(row);
    this.finishSlice(thread, slice);
  }

  /** Held stacks pass the budget first where slices have self time; nodes and frames bound the rest (zero-length slices). */
  private overBudget(): boolean {
    return (
      this.aggregator.heldStacks > this.maxHeldStacks ||
      this.frames.rows.length > this.maxHeldStacks ||
      this.aggregator.nodes > 2 * this.maxHeldStacks
    );
  }

  /**
   * Emits the stacks held so far under thread keys; a fresh trie and frame table keep only the open
   * paths. A frame met again is interned anew, and the emitter drops its repeated row by key.
   */
  private flushStacks(): void {
    const held = this.frames.rows;
    const resolve = (frameId: number) => held[frameId] as (typeof held)[number];
    if (!this.aggregator.flushed && this.aggregator.heldStacks > 0) for (const thread of this.threads.values()) this.labels.keyed(thread);
    this.aggregator.flush(this.emitter, resolve);
    this.aggregator.reset();
    this.frames = new FrameTable();
    this.plainFrames.clear();
    for (const thread of this.threads.values()) {
      let node = 0;
      for (const slice of thread.stack) {
        if (slice.frame >= 0) {
          const row = held[slice.frame] as (typeof held)[number];
          slice.frame = this.frames.intern(row);
          node = this.aggregator.child(node, slice.frame);
        }
        slice.node = node;
      }
    }
  }
}
