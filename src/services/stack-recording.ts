import type { RecordedStacks } from "../analysis/hotspots-in-memory.ts";
import type { EvidenceSink, FrameRow, StackRow } from "../domain/evidence.ts";

/** Rows a capture keeps in memory for its first answer; a bigger extraction is answered by a query instead. */
const maximumRecordedRows = 50_000;

/**
 * The frames and stacks a capture's extractions wrote, per bundle, kept beside the bundle writer so the
 * receipt's first answer needs no query over the Parquet they become. Recording stops (and the answer
 * falls back to the query) when an extraction writes more rows than it keeps, asks the writer to merge
 * repeated stacks, or starts over: the Parquet would then hold other rows than were seen here.
 */
export class StackRecording {
  private readonly bundles = new Map<string, RecordedStacks>();
  private rows = 0;
  private complete = true;

  /** Wraps a bundle writer: everything reaches it as before; frames and stacks are also recorded. */
  record(sink: EvidenceSink): { sink: EvidenceSink; keep: (bundleId: string) => void } {
    const frames: FrameRow[] = [];
    const stacks: StackRow[] = [];
    const seenFrames = new Set<string>();
    const stop = (): void => {
      this.complete = false;
      frames.length = 0;
      stacks.length = 0;
      seenFrames.clear();
    };
    const count = (): boolean => {
      this.rows += 1;
      if (this.rows > maximumRecordedRows && this.complete) stop();
      return this.complete;
    };
    // Once recording has stopped, rows only pass through: nothing more is kept, so memory stays bounded.
    const recorded: Partial<EvidenceSink> & Record<string, unknown> = {
      frame: (row: FrameRow) => {
        // The writer keeps the first row of a key; so does the recording.
        if (this.complete && !seenFrames.has(row.frame_key)) {
          seenFrames.add(row.frame_key);
          if (count()) frames.push(row);
        }
        sink.frame(row);
      },
      stack: (row: StackRow) => {
        if (this.complete && count()) stacks.push(row);
        sink.stack(row);
      },
      mergeRepeatedStacks: (...labels: unknown[]) => {
        stop();
        return (sink as unknown as Record<string, (...values: unknown[]) => unknown>).mergeRepeatedStacks!(...labels);
      },
      restart: (...values: unknown[]) => {
        stop();
        return (sink as unknown as Record<string, (...values: unknown[]) => unknown>).restart!(...values);
      },
    };
    // Every other member (and whether an optional one exists, which extractors test) is the writer's own.
    const wrapped = new Proxy(sink, {
      get(target, property, receiver) {
        if (typeof property === "string" && property in recorded && property in target) return recorded[property];
        const value = Reflect.get(target, property, receiver);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    return {
      sink: wrapped,
      keep: (bundleId) => {
        if (this.complete) this.bundles.set(bundleId, { frames, stacks });
      },
    };
  }

  /** The rows of exactly these bundles, or null when any of them was not (or not wholly) recorded. */
  rowsOf(bundleIds: readonly string[]): RecordedStacks | null {
    if (!this.complete || bundleIds.length === 0) return null;
    const parts = bundleIds.map((bundleId) => this.bundles.get(bundleId));
    if (parts.some((part) => part === undefined)) return null;
    return { frames: parts.flatMap((part) => part!.frames), stacks: parts.flatMap((part) => part!.stacks) };
  }
}
