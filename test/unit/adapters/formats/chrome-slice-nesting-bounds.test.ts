/**
 * The nester holds frames and trie nodes in proportion to its stacks budget, not to the distinct
 * frames of the trace: a trace of ever new annotation names (every step distinct, or zero-length
 * markers that never make a stack) keeps both bounded when the sink merges repeated stacks, and the
 * rows it writes, once the sink has merged them, are the rows of an unbounded extraction.
 */
import { expect, test } from "bun:test";
import { RowEmitter, type StackLabel } from "../../../../src/adapters/formats/common.ts";
import { TraceClock, TraceEventRecord, recordFromObject } from "../../../../src/adapters/formats/chrome-event-record.ts";
import { SliceNester } from "../../../../src/adapters/formats/chrome-slice-nesting.ts";
import { MemoryEvidenceSink, type StackRow } from "../../../../src/domain/evidence.ts";

/** Collects rows as the bundle writer stages them, and merges repeated stacks the way its conversion does. */
class MergingSink extends MemoryEvidenceSink {
  labels: StackLabel[] | null = null;
  mergeRepeatedStacks(labels: StackLabel[]): void {
    this.labels = labels;
  }
  merged(): StackRow[] {
    const byKey = new Map((this.labels ?? []).map((label) => [label.key, label]));
    const sums = new Map<string, StackRow>();
    for (const row of this.stacks) {
      const label = row.thread === null ? undefined : byKey.get(row.thread);
      const thread = label ? label.thread : row.thread;
      const process = label ? label.process : row.process;
      const key = JSON.stringify([thread, process, row.frame_keys, row.unit]);
      const sum = sums.get(key);
      if (sum) {
        sum.weight += row.weight;
        sum.sample_count += row.sample_count;
      } else sums.set(key, { ...row, thread, process });
    }
    return [...sums.values()];
  }
}

type Event = Record<string, unknown>;

/** `steps` distinct step annotations on two threads, each over a few operators, plus a distinct zero-length marker per step. */
function events(steps: number): Event[] {
  const list: Event[] = [];
  for (let step = 0; step < steps; step += 1) {
    const start = step * 100;
    for (const tid of [1, 2]) {
      list.push({ ph: "X", cat: "user_annotation", name: `ProfilerStep#${step}`, pid: 7, tid, ts: start, dur: 90 });
      list.push({ ph: "X", cat: "cpu_op", name: "aten::linear", pid: 7, tid, ts: start + 5, dur: 40 });
      list.push({ ph: "X", cat: "cpu_op", name: "aten::mm", pid: 7, tid, ts: start + 10, dur: 20 + (step % 7) });
      list.push({ ph: "X", cat: "cpu_op", name: `marker#${step}`, pid: 7, tid, ts: start + 60, dur: 0 });
      list.push({ ph: "X", cat: "cpu_op", name: "aten::copy_", pid: 7, tid, ts: start + 92, dur: 3 + (step % 2) });
    }
  }
  return list;
}

function extract(sink: MemoryEvidenceSink, maxHeldStacks: number, steps: number) {
  const clock = new TraceClock();
  const nester = new SliceNester(new RowEmitter(sink, undefined), { projectRoot: null, clock, maxHeldStacks });
  const peak = { frames: 0, nodes: 0 };
  for (const event of events(steps)) {
    const record = new TraceEventRecord();
    recordFromObject(event, record, clock);
    nester.process(record);
    peak.frames = Math.max(peak.frames, nester.held.frames);
    peak.nodes = Math.max(peak.nodes, nester.held.nodes);
  }
  nester.finish();
  return peak;
}

function sorted<T>(rows: T[]): string[] {
  return rows.map((row) => JSON.stringify(row)).sort();
}

test("frames and trie nodes stay within the stacks budget over ten thousand distinct frames, and the merged rows are the unbounded ones", () => {
  const steps = 5_000;
  const budget = 64;
  const bounded = new MergingSink();
  const peak = extract(bounded, budget, steps);
  const unbounded = new MemoryEvidenceSink();
  const unboundedPeak = extract(unbounded, 0, steps);

  // Two distinct frames per step (its annotation and its marker), held all at once without a budget;
  // the marker has no self time, so only the annotation's frame is written.
  expect(unboundedPeak.frames).toBe(2 * steps + 3);
  expect(unbounded.frames.size).toBe(steps + 3);
  // With one, a flush drops what it held: at most the budget and the frames of the open slices.
  expect(peak.frames).toBeLessThanOrEqual(budget + 1);
  expect(peak.nodes).toBeLessThanOrEqual(2 * budget + 1);
  expect(bounded.labels).not.toBeNull();

  // Frames came out again after a flush forgot them; the emitter passed each key on once.
  expect(sorted([...bounded.frames.values()])).toEqual(sorted([...unbounded.frames.values()]));
  expect(bounded.frames.size).toBe(unbounded.frames.size);
  expect(bounded.stacks.length).toBeGreaterThan(unbounded.stacks.length);
  expect(sorted(bounded.merged())).toEqual(sorted(unbounded.stacks));
  expect(sorted(bounded.traceEvents)).toEqual(sorted(unbounded.traceEvents));
});
