/**
 * The reorder window of a streamed Chrome trace (chrome-event-order.ts): holds up to `window`
 * records and releases the earliest (by `lessThan`, a strict order: `seq` breaks every tie) once it
 * holds more, while checking that no thread-scoped event comes before one its thread already released.
 *
 * A thread's events mostly arrive in order, so each thread keeps a lane: a queue that an event joins
 * at its tail when it is not earlier than the tail (O(1)). The few that are earlier go to one heap of
 * strays. The earliest held record is the earliest of the lanes' heads (a heap over the lanes) and
 * the strays' top: the same record a single heap of everything would release, for a fraction of
 * its comparisons.
 */
import type { TraceEventRecord } from "./chrome-event-record.ts";

/** Streaming found an event earlier than its thread's released ones: extract again, in runs. */
export class RestartInRuns extends Error {
  constructor() {
    super("a trace event arrived out of order beyond the reorder window");
  }
}

/** The trace's event order (timestamp, then phase group, longer slices first, then file order); lessThan is the same order. */
export function compare(left: TraceEventRecord, right: TraceEventRecord): number {
  return left.ts - right.ts || left.group - right.group || left.sub - right.sub || left.seq - right.seq || 0;
}

export function lessThan(left: TraceEventRecord, right: TraceEventRecord): boolean {
  if (left.ts !== right.ts) return left.ts < right.ts;
  if (left.group !== right.group) return left.group < right.group;
  if (left.sub !== right.sub) return left.sub < right.sub;
  return left.seq < right.seq;
}

/** Events whose nesting depends on their thread's order. */
function threadScoped(record: TraceEventRecord): boolean {
  const ph = record.ph;
  return (
    ph === "X" || ph === "B" || ph === "E" || ((ph === "i" || ph === "I" || ph === "s" || ph === "t" || ph === "f") && record.scope === "t")
  );
}

/** Binary min-heap of items by `lessThan` of `key(item)`. */
export class Heap<T> {
  private readonly items: T[] = [];
  constructor(private readonly key: (item: T) => TraceEventRecord) {}
  get size(): number {
    return this.items.length;
  }
  peek(): T | undefined {
    return this.items[0];
  }
  push(item: T): void {
    const items = this.items;
    let at = items.length;
    items.push(item);
    const record = this.key(item);
    while (at > 0) {
      const parent = (at - 1) >> 1;
      const above = items[parent] as T;
      if (!lessThan(record, this.key(above))) break;
      items[at] = above;
      at = parent;
    }
    items[at] = item;
  }
  pop(): T | undefined {
    const items = this.items;
    const top = items[0];
    const last = items.pop();
    if (items.length > 0 && last !== undefined) {
      items[0] = last;
      this.siftDown();
    }
    return top;
  }
  /** Restores the order after the top item's key grew. */
  siftDown(): void {
    const items = this.items;
    const length = items.length;
    const item = items[0] as T;
    const record = this.key(item);
    let at = 0;
    for (;;) {
      const left = at * 2 + 1;
      if (left >= length) break;
      const right = left + 1;
      let child = left;
      if (right < length && lessThan(this.key(items[right] as T), this.key(items[left] as T))) child = right;
      const candidate = items[child] as T;
      if (!lessThan(this.key(candidate), record)) break;
      items[at] = candidate;
      at = child;
    }
    items[at] = item;
  }
}

/** One thread's queue (or the queue of events no thread orders), with its thread's last released event. */
type Lane = { records: TraceEventRecord[]; head: number; mark: TraceEventRecord | undefined };

const identity = (record: TraceEventRecord) => record;
/** Released records a lane keeps before it drops them. */
const compactAbove = 4096;

/** Per-thread watermark check of a window-ordered stream (see the file comment). */
export class WindowCheck {
  private count = 0;
  private readonly lanes = new Map<string, Map<string, Lane>>();
  /** Events that no thread orders (metadata, process-scoped instants, counters …). */
  private readonly unthreaded: Lane = { records: [], head: 0, mark: undefined };
  private readonly heads = new Heap<Lane>((lane) => lane.records[lane.head] as TraceEventRecord);
  private readonly strays = new Heap<TraceEventRecord>(identity);
  private lastPid: string | null = null;
  private lastTid: string | null = null;
  private lastLane: Lane | null = null;

  constructor(private readonly window: number) {}

  /** Accepts a record; returns what the window releases (or null), or throws RestartInRuns. */
  push(record: TraceEventRecord): TraceEventRecord | null {
    let lane = this.unthreaded;
    if (threadScoped(record)) {
      lane = this.laneOf(record);
      if (lane.mark !== undefined && lessThan(record, lane.mark)) throw new RestartInRuns();
    }
    const records = lane.records;
    if (lane.head === records.length) {
      records.length = 0;
      lane.head = 0;
      records.push(record);
      this.heads.push(lane);
    } else if (lessThan(record, records[records.length - 1] as TraceEventRecord)) this.strays.push(record);
    else records.push(record);
    this.count++;
    return this.count > this.window ? this.release() : null;
  }

  release(): TraceEventRecord | null {
    if (this.count === 0) return null;
    this.count--;
    const lane = this.heads.peek();
    const stray = this.strays.peek();
    if (lane === undefined || (stray !== undefined && lessThan(stray, lane.records[lane.head] as TraceEventRecord))) {
      const record = this.strays.pop() as TraceEventRecord;
      if (threadScoped(record)) this.laneOf(record).mark = record;
      return record;
    }
    const record = lane.records[lane.head++] as TraceEventRecord;
    if (lane !== this.unthreaded) lane.mark = record;
    if (lane.head === lane.records.length) {
      this.heads.pop();
      lane.records.length = 0;
      lane.head = 0;
    } else {
      if (lane.head > compactAbove && lane.head * 2 > lane.records.length) {
        lane.records.splice(0, lane.head);
        lane.head = 0;
      }
      this.heads.siftDown();
    }
    return record;
  }

  get size(): number {
    return this.count;
  }

  /** The lane of a thread-scoped record (pid and tid as text, a missing one as ""). */
  private laneOf(record: TraceEventRecord): Lane {
    if (this.lastLane !== null && record.pid === this.lastPid && record.tid === this.lastTid) return this.lastLane;
    const pid = record.pid ?? "";
    const tid = record.tid ?? "";
    let byTid = this.lanes.get(pid);
    if (byTid === undefined) {
      byTid = new Map();
      this.lanes.set(pid, byTid);
    }
    let lane = byTid.get(tid);
    if (lane === undefined) {
      lane = { records: [], head: 0, mark: undefined };
      byTid.set(tid, lane);
    }
    this.lastPid = record.pid;
    this.lastTid = record.tid;
    this.lastLane = lane;
    return lane;
  }
}
