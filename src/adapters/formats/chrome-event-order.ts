/**
 * Puts a trace's events in timestamp order (ts, then B/E before X before others, longer X first,
 * then arrival), whatever their order in the file — kineto writes events grouped by category, so
 * a thread's `user_annotation` parents can come tens of thousands of events after their children.
 *
 * - A trace whose records fit in `memoryBytes` is sorted in memory.
 * - A bigger one is sorted in runs of `memoryBytes` spilled to `scratch` and merged (bounded memory).
 * - When the sink can start over (`restartable`) and the first `memoryBytes` are in order per
 *   thread within a window of `window` events (Chrome writes slices at their end, children first),
 *   the rest streams through that window instead (chrome-event-window.ts); should a later event come before its thread's
 *   released ones, the extraction starts over in runs (`RestartInRuns`). Either way every thread's
 *   events reach the nester in order.
 */
import { rmSync } from "node:fs";
import { join } from "node:path";
import type { TraceEventRecord } from "./chrome-event-record.ts";
import { maximumRunReadBytes, RunReader, writeRun } from "./chrome-event-spill.ts";
import { compare, Heap, RestartInRuns, WindowCheck } from "./chrome-event-window.ts";

export { RestartInRuns };

/** Sets a record's ordering key from its phase, timestamp and duration (metadata first). */
export function setOrderKey(record: TraceEventRecord): void {
  const ph = record.ph;
  record.ts = ph === "M" ? Number.NEGATIVE_INFINITY : (record.tsNs ?? 0);
  record.group = ph === "B" || ph === "E" ? 0 : ph === "X" ? 1 : 2;
  record.sub = ph === "X" ? -(record.durNs ?? 0) : 0;
}

/**
 * What the merge's readers may hold together: each holds its read buffer, the text decoded from it and
 * the records of that text (about five times the read), so a fixed share per run would grow the merge
 * with the number of runs, that is with the trace. A run is read at least this much at a time.
 */
const mergeReadBudgetBytes = 16 << 20;
const minimumRunReadBytes = 16 << 10;

/** Bytes each of `runs` readers reads at once: the budget shared out, within the bounds above. */
export function runReadBytes(runs: number): number {
  return Math.min(maximumRunReadBytes, Math.max(minimumRunReadBytes, Math.floor(mergeReadBudgetBytes / Math.max(1, runs))));
}

export type OrderOptions = {
  memoryBytes: number;
  window: number;
  restartable: boolean;
  /** Folder for the spilled runs (removed by the caller or with it). */
  scratch: string;
  /** Awaited after every `pauseBytes` of records the merge delivers (the reader pauses likewise per chunk). */
  pause?: () => Promise<void>;
};

/** Record bytes (their `size`) the merge delivers between pauses: the reader's chunk size. */
const pauseBytes = 8 << 20;

export type OrderStats = { mode: "memory" | "window" | "runs"; runs: number; spilledBytes: number };

export class EventOrderer {
  readonly stats: OrderStats = { mode: "memory", runs: 0, spilledBytes: 0 };
  private buffer: TraceEventRecord[] = [];
  private bufferBytes = 0;
  private stream: WindowCheck | null = null;
  private readonly runs: string[] = [];

  constructor(
    private readonly options: OrderOptions,
    private readonly deliver: (record: TraceEventRecord) => void,
  ) {}

  accept(record: TraceEventRecord): void {
    if (this.stream) {
      const released = this.stream.push(record);
      if (released) this.deliver(released);
      return;
    }
    this.buffer.push(record);
    this.bufferBytes += record.size;
    if (this.bufferBytes <= this.options.memoryBytes) return;
    if (this.stats.mode === "memory" && this.options.restartable && this.inWindowOrder(this.buffer)) {
      this.stats.mode = "window";
      this.stream = new WindowCheck(this.options.window);
      const held = this.buffer;
      this.buffer = [];
      this.bufferBytes = 0;
      for (const item of held) {
        const released = this.stream.push(item);
        if (released) this.deliver(released);
      }
      return;
    }
    this.stats.mode = "runs";
    this.spill();
  }

  async finish(): Promise<void> {
    if (this.stream) {
      for (let record = this.stream.release(); record; record = this.stream.release()) this.deliver(record);
      return;
    }
    this.buffer.sort(compare);
    if (this.runs.length === 0) {
      for (const record of this.buffer) this.deliver(record);
      this.buffer = [];
      return;
    }
    await this.merge();
  }

  /** Removes the spilled runs. */
  cleanup(): void {
    for (const path of this.runs) rmSync(path, { force: true });
  }

  private inWindowOrder(records: readonly TraceEventRecord[]): boolean {
    const check = new WindowCheck(this.options.window);
    try {
      for (const record of records) check.push(record);
      return true;
    } catch (error) {
      if (error instanceof RestartInRuns) return false;
      throw error;
    }
  }

  private spill(): void {
    this.buffer.sort(compare);
    const path = join(this.options.scratch, `trace-run-${this.runs.length}.txt`);
    this.runs.push(path);
    this.stats.runs = this.runs.length;
    this.stats.spilledBytes += writeRun(path, this.buffer);
    this.buffer = [];
    this.bufferBytes = 0;
  }

  /** k-way merge of the runs on disk and the sorted records still in memory. */
  private async merge(): Promise<void> {
    type Cursor = { records: TraceEventRecord[]; index: number; reader: RunReader | null };
    const heap = new Heap<Cursor>((cursor) => cursor.records[cursor.index] as TraceEventRecord);
    const readers: RunReader[] = [];
    try {
      const readBytes = runReadBytes(this.runs.length);
      for (const path of this.runs) {
        const reader = await RunReader.open(path, readBytes);
        readers.push(reader);
        const records = await reader.next();
        if (records.length > 0) heap.push({ records, index: 0, reader });
      }
      if (this.buffer.length > 0) heap.push({ records: this.buffer, index: 0, reader: null });
      this.buffer = [];
      let sincePause = 0;
      for (let cursor = heap.pop(); cursor; cursor = heap.pop()) {
        const record = cursor.records[cursor.index] as TraceEventRecord;
        this.deliver(record);
        sincePause += record.size;
        if (sincePause >= pauseBytes && this.options.pause) {
          sincePause = 0;
          await this.options.pause();
        }
        cursor.index++;
        if (cursor.index >= cursor.records.length) {
          if (!cursor.reader) continue;
          cursor.records = await cursor.reader.next();
          cursor.index = 0;
          if (cursor.records.length === 0) continue;
        }
        heap.push(cursor);
      }
    } finally {
      for (const reader of readers) await reader.close();
      this.cleanup();
    }
  }
}
