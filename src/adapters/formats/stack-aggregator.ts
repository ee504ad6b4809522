/**
 * Folds stacks into one row per distinct (group, stack): a prefix trie of frame ids (node 0 is the
 * empty stack) with weight totals per group. Frame ids are whatever the caller uses (a FrameTable
 * index, or a format's own frame index resolved at emit time).
 *
 * Bounds: an emitted stack keeps at most `maxFrames` frames (the leaf-most ones, under one
 * `[deeper frames truncated]` frame), so a pathologically deep input writes rows in proportion to
 * its size rather than its square; and a caller may flush the totals held so far (`flush`) and
 * start a fresh trie (`reset`), so memory is bounded by a budget instead of the distinct stacks.
 * Flushed rows can repeat a stack; the sink is told to merge repeats (`mergeRepeatedStacks`).
 */
import type { FrameRow, StackUnit } from "../../domain/evidence.ts";
import { frameRow, GrowableInt32, type RowEmitter } from "./common.ts";

type StackTotals = { weight: number; count: number };

export type StackGroup = {
  thread: string | null;
  process: string | null;
  unit: StackUnit;
  /** Multiplies raw weights at emit time (e.g. milliseconds → ns). */
  scale: number;
  totals: Map<number, StackTotals>;
};

/** The frame that stands for the root-side frames a capped stack leaves out. */
export const truncatedFrame: FrameRow = frameRow({
  function: "[deeper frames truncated]",
  file: null,
  line: null,
  module: null,
  language: "unknown",
});

/** Default cap of an emitted stack's frames. */
export const defaultMaxStackFrames = 1024;

/**
 * The trie's child index: (parent node, frame id) → child node, as open addressing over one
 * Int32Array of node ids (0, the root, is never a child, so it marks a free slot); a slot's key is
 * read back from the trie's own parent and frame columns. A Map keyed by `node * 2^20 + frame`
 * held a boxed double per entry: on a trace with 1.8M distinct stacks its lookups and the
 * collector's marking of it were the aggregator's largest costs.
 */
class ChildIndex {
  private slots = new Int32Array(1 << 12);
  private mask = this.slots.length - 1;
  private used = 0;

  constructor(
    private readonly parents: GrowableInt32,
    private readonly frameIds: GrowableInt32,
  ) {}

  /** The child of `node` with `frameId`, or 0. */
  find(node: number, frameId: number): number {
    const slots = this.slots;
    for (let slot = slotOf(node, frameId) & this.mask; ; slot = (slot + 1) & this.mask) {
      const child = slots[slot] as number;
      if (child === 0 || (this.parents.get(child) === node && this.frameIds.get(child) === frameId)) return child;
    }
  }

  /** Indexes node `child` (its parent and frame already in the columns); it must not be there yet. */
  insert(child: number): void {
    if ((this.used + 1) * 2 > this.slots.length) this.grow();
    this.place(this.slots, this.mask, child);
    this.used++;
  }

  private place(slots: Int32Array, mask: number, child: number): void {
    let slot = slotOf(this.parents.get(child), this.frameIds.get(child)) & mask;
    while (slots[slot] !== 0) slot = (slot + 1) & mask;
    slots[slot] = child;
  }

  private grow(): void {
    const old = this.slots;
    const slots = new Int32Array(old.length * 2);
    const mask = slots.length - 1;
    for (const child of old) if (child !== 0) this.place(slots, mask, child);
    this.slots = slots;
    this.mask = mask;
  }
}

/** A slot number for (node, frame id): both mixed by odd multipliers, so neighbours spread. */
function slotOf(node: number, frameId: number): number {
  const mixed = Math.imul(node, 0x9e3779b1) ^ Math.imul(frameId + 0x632be5ab, 0x85ebca77);
  return (mixed ^ (mixed >>> 15)) >>> 0;
}

export class StackAggregator {
  private parents = new GrowableInt32();
  private frameIds = new GrowableInt32();
  private depths = new GrowableInt32();
  private children = new ChildIndex(this.parents, this.frameIds);
  private readonly groups = new Map<string, StackGroup>();
  private held = 0;
  /** Distinct stacks emitted with their root side cut off. */
  truncatedStacks = 0;
  /** Whether any rows were flushed before the end (they may repeat a stack). */
  flushed = false;

  constructor(readonly maxFrames = defaultMaxStackFrames) {
    this.clearTrie();
  }

  /** Trie nodes in use (node 0 included). */
  get nodes(): number {
    return this.parents.length;
  }

  /** Distinct (group, stack) totals held. */
  get heldStacks(): number {
    return this.held;
  }

  child(node: number, frameId: number): number {
    const known = this.children.find(node, frameId);
    if (known !== 0) return known;
    const created = this.parents.length;
    this.parents.push(node);
    this.frameIds.push(frameId);
    this.depths.push(this.depths.get(node) + 1);
    this.children.insert(created);
    return created;
  }

  /** Node of a root→leaf list of frame ids. */
  path(frameIds: readonly number[]): number {
    let node = 0;
    for (const frameId of frameIds) node = this.child(node, frameId);
    return node;
  }

  depthOf(node: number): number {
    return this.depths.get(node);
  }

  group(key: string, init: Omit<StackGroup, "totals">): StackGroup {
    let group = this.groups.get(key);
    if (!group) {
      group = { ...init, totals: new Map() };
      this.groups.set(key, group);
    }
    return group;
  }

  allGroups(): IterableIterator<StackGroup> {
    return this.groups.values();
  }

  add(group: StackGroup, node: number, weight: number, count: number): void {
    if (node === 0) return;
    const totals = group.totals.get(node);
    if (totals) {
      totals.weight += weight;
      totals.count += count;
    } else {
      group.totals.set(node, { weight, count });
      this.held++;
    }
  }

  /** Frame ids root→leaf of a node, all of them. */
  frameIdsOf(node: number): number[] {
    const ids: number[] = [];
    for (let at = node; at > 0; at = this.parents.get(at)) ids.push(this.frameIds.get(at));
    return ids.reverse();
  }

  /** The leaf-most `limit` frame ids of a node (root→leaf); walks no further than that. */
  private leafFrames(node: number, limit: number): number[] {
    const ids: number[] = [];
    for (let at = node; at > 0 && ids.length < limit; at = this.parents.get(at)) ids.push(this.frameIds.get(at));
    return ids.reverse();
  }

  /** Emits one stacks row per (group, distinct stack) with positive weight, then clears the totals. */
  emit(emitter: RowEmitter, resolveFrame: (frameId: number) => FrameRow): void {
    for (const group of this.groups.values()) {
      for (const [node, totals] of group.totals) this.emitOne(emitter, resolveFrame, group, node, totals);
      group.totals.clear();
    }
    this.held = 0;
  }

  /** Emits what is held so far (rows may later repeat a stack) and clears the totals. */
  flush(emitter: RowEmitter, resolveFrame: (frameId: number) => FrameRow): void {
    if (this.held === 0) return;
    this.flushed = true;
    this.emit(emitter, resolveFrame);
  }

  /**
   * Drops every trie node (after a flush); `reintern` gives the caller the fresh trie to rebuild
   * the paths it still holds (open slices).
   */
  reset(): void {
    if (this.held > 0) throw new Error("StackAggregator.reset with totals held: flush first");
    this.clearTrie();
  }

  private clearTrie(): void {
    this.parents = new GrowableInt32();
    this.frameIds = new GrowableInt32();
    this.depths = new GrowableInt32();
    this.children = new ChildIndex(this.parents, this.frameIds);
    this.parents.push(-1);
    this.frameIds.push(-1);
    this.depths.push(0);
  }

  private emitOne(
    emitter: RowEmitter,
    resolveFrame: (frameId: number) => FrameRow,
    group: StackGroup,
    node: number,
    totals: StackTotals,
  ): void {
    let weight = totals.weight * group.scale;
    if (group.unit === "ns") weight = Math.round(weight);
    if (!(weight > 0)) return;
    if (emitter.full("stacks")) {
      emitter.stack({ thread: null, process: null, frame_keys: [], weight, unit: group.unit, sample_count: 0 });
      return;
    }
    const depth = this.depths.get(node);
    let frames: FrameRow[];
    if (depth > this.maxFrames) {
      this.truncatedStacks++;
      frames = [truncatedFrame, ...this.leafFrames(node, this.maxFrames - 1).map(resolveFrame)];
    } else frames = this.leafFrames(node, depth).map(resolveFrame);
    emitter.stack(
      {
        thread: group.thread,
        process: group.process,
        frame_keys: frames.map((frame) => frame.frame_key),
        weight,
        unit: group.unit,
        sample_count: totals.count,
      },
      frames,
    );
  }

  /** The limitation to report when stacks were capped, if any. */
  limitations(): string[] {
    return this.truncatedStacks > 0
      ? [
          `${this.truncatedStacks} stacks were deeper than ${this.maxFrames} frames; their root-side frames are folded into one "[deeper frames truncated]" frame.`,
        ]
      : [];
  }
}
