/** What the nesting of a Chrome trace had to approximate or leave out, as limitation lines. */
import type { NestingCounters } from "./chrome-slice-nesting.ts";

export function nestingNotes(counters: NestingCounters, maxOpenSlices: number): string[] {
  const notes: string[] = [];
  if (counters.unmatchedEnds > 0) notes.push(`${counters.unmatchedEnds} E events matched no open B of their name on their thread.`);
  if (counters.unclosedBegins > 0) {
    notes.push(`${counters.unclosedBegins} B events were never closed; they end at their thread's last timestamp.`);
  }
  if (counters.overlaps > 0) {
    notes.push(
      `${counters.overlaps} X slices started inside the open slice but ended after it; that slice was ended first (they are siblings, and the overlap counts as self time of both), as trace viewers draw them.`,
    );
  }
  if (counters.tooDeep > 0) {
    notes.push(`${counters.tooDeep} slices were nested deeper than ${maxOpenSlices} open slices; they are leaves of the deepest one.`);
  }
  if (counters.negativeDurations > 0)
    notes.push(`${counters.negativeDurations} X slices had a negative dur and were taken as instants (dur 0).`);
  if (counters.bookkeeping > 0) {
    notes.push(
      `${counters.bookkeeping} kineto bookkeeping spans (category "Trace", e.g. "PyTorch Profiler (0)") are kept as trace events but are not work: they carry no self time.`,
    );
  }
  if (counters.pySpyContext > 0) {
    notes.push(
      `${counters.pySpyContext} py-spy process/thread pseudo-frames name the process and thread of their samples; they are not call frames.`,
    );
  }
  return notes;
}
