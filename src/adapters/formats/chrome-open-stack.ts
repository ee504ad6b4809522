/**
 * A thread's open slices while a Chrome trace is nested (chrome-slice-nesting.ts), with the B
 * slices indexed so that an E finds the innermost open B of its name without a scan.
 */
import type { TraceEventRow } from "../../domain/evidence.ts";
import type { TraceEventRecord } from "./chrome-event-record.ts";
import type { StackGroup } from "./stack-aggregator.ts";

export type OpenSlice = {
  id: number;
  name: string;
  tsNs: number;
  endNs: number;
  durNs: number;
  childNs: number;
  /** Trie node of the stack down to this slice (the parent's node for bookkeeping spans). */
  node: number;
  /** Frame id, or -1 for a bookkeeping span. */
  frame: number;
  /** B slices wait for their E before their row can be written. */
  begin: { row: TraceEventRow; record: TraceEventRecord } | null;
};

export type ThreadState = {
  key: string;
  pid: string | null;
  tid: string | null;
  stack: OpenSlice[];
  /**
   * Stack positions of the open B slices, all and by name (innermost last), so an E finds its B in
   * O(1) instead of scanning the open stack (a stream of stray-named E events would be quadratic).
   */
  begins: number[];
  beginsByName: Map<string, number[]>;
  lastNs: number;
  group: StackGroup;
};

/** Pushes an open B slice and records its position under its name. */
export function pushBegin(thread: ThreadState, slice: OpenSlice, name: string): void {
  const position = thread.stack.length;
  thread.stack.push(slice);
  thread.begins.push(position);
  const positions = thread.beginsByName.get(name);
  if (positions) positions.push(position);
  else thread.beginsByName.set(name, [position]);
}

/** Pops the innermost open slice; a B leaves the indexes too (it is the last entry of both, being innermost). */
export function popSlice(thread: ThreadState): OpenSlice {
  const slice = thread.stack.pop() as OpenSlice;
  if (slice.begin) {
    thread.begins.pop();
    const name = slice.begin.row.name;
    const positions = thread.beginsByName.get(name) as number[];
    positions.pop();
    if (positions.length === 0) thread.beginsByName.delete(name);
  }
  return slice;
}
