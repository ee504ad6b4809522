import { describe, expect, test } from "bun:test";
import { TraceEventRecord } from "../../../../src/adapters/formats/chrome-event-record.ts";
import { setOrderKey } from "../../../../src/adapters/formats/chrome-event-order.ts";
import { RestartInRuns, WindowCheck, lessThan } from "../../../../src/adapters/formats/chrome-event-window.ts";
import { seededRandom } from "../../../support/random.ts";

/** The window as one list of everything held: the earliest is found by a scan (the definition the lanes must meet). */
class ReferenceWindow {
  private readonly held: TraceEventRecord[] = [];
  private readonly released = new Map<string, TraceEventRecord>();
  constructor(private readonly window: number) {}
  push(record: TraceEventRecord): TraceEventRecord | null {
    const key = threadKey(record);
    const mark = key === null ? undefined : this.released.get(key);
    if (mark !== undefined && lessThan(record, mark)) throw new RestartInRuns();
    this.held.push(record);
    return this.held.length > this.window ? this.release() : null;
  }
  release(): TraceEventRecord | null {
    if (this.held.length === 0) return null;
    let best = 0;
    for (let index = 1; index < this.held.length; index++) {
      if (lessThan(this.held[index] as TraceEventRecord, this.held[best] as TraceEventRecord)) best = index;
    }
    const [record] = this.held.splice(best, 1) as [TraceEventRecord];
    const key = threadKey(record);
    if (key !== null) this.released.set(key, record);
    return record;
  }
}

function threadKey(record: TraceEventRecord): string | null {
  const ph = record.ph;
  const scoped =
    ph === "X" ||
    ph === "B" ||
    ph === "E" ||
    ((ph === "i" || ph === "I" || ph === "s" || ph === "t" || ph === "f") && record.scope === "t");
  return scoped ? `${record.pid ?? ""}\u0000${record.tid ?? ""}` : null;
}

const phases = ["X", "X", "X", "B", "E", "i", "M", "C", "s"];
const pids = ["1", "2", null, ""];
const tids = ["1", "2", "3", null];

/** Threads mostly in order, some events late by a few places, some far back, some metadata. */
function records(
  seed: number,
  count: number,
  options: { farLate?: number; lateBy?: number; oneThread?: boolean } = {},
): TraceEventRecord[] {
  const { farLate = 0, lateBy = 4, oneThread = false } = options;
  const next = seededRandom(seed);
  const clocks = new Map<string, number>();
  const out: TraceEventRecord[] = [];
  for (let seq = 0; seq < count; seq++) {
    const record = new TraceEventRecord();
    record.ph = phases[Math.floor(next() * phases.length)] as string;
    record.pid = oneThread ? "1" : (pids[Math.floor(next() * pids.length)] as string | null);
    record.tid = oneThread ? "1" : (tids[Math.floor(next() * tids.length)] as string | null);
    record.scope = oneThread || next() < 0.8 ? "t" : "p";
    if (oneThread) record.ph = "X";
    const key = `${record.pid}/${record.tid}`;
    const clock = (clocks.get(key) ?? 0) + Math.floor(next() * 5);
    clocks.set(key, clock);
    const late = next();
    record.tsNs = late < 0.1 ? clock - Math.floor(next() * lateBy) : late < 0.1 + farLate ? clock - 5000 : clock;
    record.durNs = Math.floor(next() * 10);
    record.seq = seq;
    setOrderKey(record);
    out.push(record);
  }
  return out;
}

/** Every release and whether (and where) a restart was asked for. */
function run(
  window: { push(record: TraceEventRecord): TraceEventRecord | null; release(): TraceEventRecord | null },
  input: TraceEventRecord[],
) {
  const released: number[] = [];
  try {
    for (const record of input) {
      const out = window.push(record);
      if (out) released.push(out.seq);
    }
    for (let out = window.release(); out; out = window.release()) released.push(out.seq);
    return { released, restartAt: null };
  } catch (error) {
    if (!(error instanceof RestartInRuns)) throw error;
    return { released, restartAt: released.length };
  }
}

describe("the reorder window's lanes release what one list of everything held would", () => {
  for (const [seed, size, farLate] of [
    [1, 300, 0],
    [2, 400, 0],
    [3, 1000, 0],
    [4, 500, 0],
    [5, 2000, 0],
    [6, 2000, 0.0005],
  ] as const) {
    test(`seed ${seed}, window ${size}`, () => {
      const input = records(seed, 6000, { farLate });
      const expected = run(new ReferenceWindow(size), input);
      expect(expected.released.length).toBeGreaterThan(1000);
      expect(run(new WindowCheck(size), input)).toEqual(expected);
    });
  }

  test("a trace whose threads are each in order streams to the end, in the same order", () => {
    const input = records(9, 8000).filter((record) => record.ph !== "M");
    input.sort((left, right) => (lessThan(left, right) ? -1 : 1));
    input.forEach((record, index) => {
      record.seq = index;
    });
    const expected = run(new ReferenceWindow(100), input);
    expect(expected.restartAt).toBeNull();
    expect(run(new WindowCheck(100), input)).toEqual(expected);
  });
});

test("one long thread: its lane drops released records as it goes, and the order holds", () => {
  const input = records(11, 30_000, { oneThread: true, lateBy: 50 });
  const expected = run(new ReferenceWindow(5000), input);
  expect(expected.released.length).toBeGreaterThan(20_000);
  expect(run(new WindowCheck(5000), input)).toEqual(expected);
});
