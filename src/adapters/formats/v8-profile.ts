/**
 * A V8 CPU profile as `.cpuprofile` files and Chrome DevTools recordings carry it: nodes (flat with
 * `children` ids or `parent`, or the pre-2016 tree under `head`), sample node ids, and the time of
 * each sample as `timeDeltas` (µs since the previous one) or, before 2016, absolute `timestamps`.
 * Each sample lasts until the next one (the last until `endTime`), as DevTools draws it. `(root)`
 * is dropped; `(program)`, `(idle)` and `(garbage collector)` stay frames. Nodes are added without
 * recursion, so a tree nested 100,000 deep costs no call stack.
 */
import { fileURLToPath } from "node:url";
import { projectRelativePath } from "../../domain/evidence.ts";
import { type FrameTable, GrowableFloat64, GrowableInt32 } from "./common.ts";
import type { StackAggregator, StackGroup } from "./stack-aggregator.ts";

type CallFrame = { functionName?: unknown; url?: unknown; lineNumber?: unknown; columnNumber?: unknown };
type ProfileNode = { id: number; callFrame: CallFrame; children: number[]; parent: number | null };

/** A profile node or field that is not what V8 writes. */
export class V8ProfileError extends Error {}

function scriptPath(url: string): string | null {
  if (url === "") return null;
  if (url.startsWith("file://")) {
    try {
      return fileURLToPath(url);
    } catch {
      return url;
    }
  }
  return url;
}

export class V8Profile {
  private readonly nodes = new Map<number, ProfileNode>();
  private readonly samples = new GrowableInt32();
  private readonly deltas = new GrowableFloat64();
  private readonly timestamps = new GrowableFloat64();
  /** µs */
  startTime: number | null = null;
  endTime: number | null = null;
  sawNodes = false;

  get sampleCount(): number {
    return this.samples.length;
  }

  /** A node object and, for the pre-2016 format, the nodes nested in its `children`. */
  addNode(value: unknown, parent: number | null = null): void {
    const pending: { value: unknown; parent: number | null }[] = [{ value, parent }];
    for (let item = pending.pop(); item; item = pending.pop()) {
      const record = item.value as Record<string, unknown> | null;
      if (!record || typeof record !== "object" || typeof record.id !== "number")
        throw new V8ProfileError("a profile node has no numeric id");
      if (record.callFrame !== undefined && (record.callFrame === null || typeof record.callFrame !== "object")) {
        throw new V8ProfileError(`profile node ${record.id} has a callFrame that is not an object`);
      }
      this.sawNodes = true;
      const children: number[] = [];
      for (const child of Array.isArray(record.children) ? (record.children as unknown[]) : []) {
        if (child && typeof child === "object") {
          pending.push({ value: child, parent: record.id });
          children.push((child as { id: number }).id);
        } else if (typeof child === "number") children.push(child);
      }
      this.nodes.set(record.id, {
        id: record.id,
        callFrame: (record.callFrame && typeof record.callFrame === "object" ? record.callFrame : record) as CallFrame,
        children,
        parent: typeof record.parent === "number" ? record.parent : item.parent,
      });
    }
  }

  addSamples(values: unknown, where = "samples"): void {
    if (!Array.isArray(values)) throw new V8ProfileError(`\`${where}\` is not an array`);
    for (const [index, id] of values.entries()) {
      if (typeof id !== "number") throw new V8ProfileError(`${where}[${index}] is not a node id`);
      this.samples.push(id);
    }
  }

  addTimeDeltas(values: unknown, where = "timeDeltas"): void {
    if (!Array.isArray(values)) throw new V8ProfileError(`\`${where}\` is not an array`);
    for (const delta of values) this.deltas.push(typeof delta === "number" ? delta : 0);
  }

  addTimestamps(values: unknown): void {
    if (!Array.isArray(values)) throw new V8ProfileError("`timestamps` is not an array");
    for (const value of values) this.timestamps.push(typeof value === "number" ? value : Number.NaN);
  }

  /**
   * Folds the samples into `group` (unit ns, scale 1000 from µs); returns the limitations.
   * Each sample's duration is the next one's delta (or timestamp difference); the last lasts until endTime.
   */
  fold(
    aggregator: StackAggregator,
    frames: FrameTable,
    group: StackGroup,
    options: { language: string; projectRoot: string | null },
  ): string[] {
    this.linkChildren();
    const resolve = this.resolver(aggregator, frames, options);
    const count = this.samples.length;
    const fromTimestamps = this.deltas.length === 0 && this.timestamps.length > 0;
    const times = fromTimestamps ? this.timestamps : this.deltas;
    let negative = 0;
    let unknownNodes = 0;
    let timestamp = fromTimestamps ? 0 : (this.startTime ?? 0);
    const startOf = (index: number): number => (fromTimestamps ? this.timestamps.get(index) : timestamp);
    for (let index = 0; index < count; index++) {
      if (!fromTimestamps) timestamp += index < this.deltas.length ? this.deltas.get(index) : 0;
      let duration: number;
      // The pre-2016 format may carry one more timestamp than samples: where the last one ends.
      if (fromTimestamps && index + 1 < times.length) duration = this.timestamps.get(index + 1) - startOf(index);
      else if (!fromTimestamps && index + 1 < count) duration = index + 1 < times.length ? this.deltas.get(index + 1) : 0;
      else if (index + 1 < count) duration = 0;
      else duration = this.endTime !== null ? this.endTime - startOf(index) : 0;
      if (!(duration >= 0)) {
        if (index + 1 < count) negative++;
        duration = 0;
      }
      const id = this.samples.get(index);
      if (!this.nodes.has(id)) {
        unknownNodes++;
        continue;
      }
      aggregator.add(group, resolve(id), duration, 1);
    }
    const limitations: string[] = [];
    const timeCount = fromTimestamps ? this.timestamps.length : this.deltas.length;
    if (timeCount !== count && !(fromTimestamps && timeCount === count + 1))
      limitations.push(`${count} samples but ${timeCount} ${fromTimestamps ? "timestamps" : "timeDeltas"}.`);
    if (negative > 0) limitations.push(`${negative} negative ${fromTimestamps ? "timestamp steps" : "timeDeltas"} were counted as zero.`);
    if (unknownNodes > 0) limitations.push(`${unknownNodes} samples named unknown node ids and were skipped.`);
    return limitations;
  }

  private linkChildren(): void {
    for (const node of this.nodes.values()) {
      for (const child of node.children) {
        const childNode = this.nodes.get(child);
        if (childNode && childNode.parent === null) childNode.parent = node.id;
      }
    }
  }

  /** Trie node of a profile node: walks up to the first resolved ancestor, then builds down (no recursion). */
  private resolver(aggregator: StackAggregator, frames: FrameTable, options: { language: string; projectRoot: string | null }) {
    const trieNodeOf = new Map<number, number>();
    return (id: number): number => {
      const known = trieNodeOf.get(id);
      if (known !== undefined) return known;
      const chain: ProfileNode[] = [];
      let base = 0;
      const seen = new Set<number>();
      for (let at: number | null = id; at !== null; ) {
        const cached = trieNodeOf.get(at);
        if (cached !== undefined) {
          base = cached;
          break;
        }
        const node = this.nodes.get(at);
        if (!node || seen.has(at)) break;
        seen.add(at);
        chain.push(node);
        at = node.parent;
      }
      for (let index = chain.length - 1; index >= 0; index--) {
        const node = chain[index] as ProfileNode;
        const frame = node.callFrame;
        const functionName = typeof frame.functionName === "string" ? frame.functionName : "";
        if (node.parent === null && functionName === "(root)") {
          trieNodeOf.set(node.id, base);
          continue;
        }
        const url = typeof frame.url === "string" ? frame.url : "";
        const line = typeof frame.lineNumber === "number" && frame.lineNumber >= 0 ? frame.lineNumber + 1 : null;
        const frameId = frames.intern({
          function: functionName === "" ? "(anonymous)" : functionName,
          file: projectRelativePath(scriptPath(url), options.projectRoot),
          line,
          module: null,
          language: options.language,
        });
        base = aggregator.child(base, frameId);
        trieNodeOf.set(node.id, base);
      }
      return base;
    };
  }
}
