/**
 * What a speedscope file's readers (the fast text reader, or JSON.parse of the whole file) feed:
 * frames, profile fields, samples, weights and events, folded as they arrive. A sample becomes a
 * trie node at once (identical sample arrays are found by hash, so a repeated stack costs one
 * lookup, not one per frame); a weight is added to its sample's node as soon as both are known.
 * Until then one of them waits in a typed array (py-spy writes samples before weights): 4 bytes per
 * sample, nothing per frame. Weights that are negative, not finite or past 2^53 ns are left out
 * with a limitation.
 */
import { GrowableFloat64, GrowableInt32, stackUnitOf } from "./common.ts";
import { StackAggregator, type StackGroup } from "./stack-aggregator.ts";

export type SpeedscopeFrame = { name: string; file: string | null; line: number | null; col: number | null };

type OpenFrame = { frame: number; node: number };

export type ProfileState = {
  index: number;
  type: string | null;
  name: string | null;
  unit: string | null;
  /** Raw weight → stack unit, from `unit` (1 until it is known). */
  scale: number;
  startValue: number | null;
  endValue: number | null;
  /** Node per sample, while weights may still come. */
  sampleNodes: GrowableInt32;
  /** Weights that came before their samples. */
  pendingWeights: GrowableFloat64;
  weightCount: number;
  /** Raw-unit weight totals per node, in sample order. */
  totals: Map<number, { weight: number; count: number }>;
  events: number;
  open: OpenFrame[];
  lastAt: number | null;
  mismatchedCloses: number;
  invalidWeights: number;
};

/** Identical sample arrays, by a hash of their frame indexes. */
class SampleCache {
  private readonly byHash = new Map<number, { frames: Int32Array; node: number }[]>();

  find(frames: ArrayLike<number>, length: number, hash: number): number {
    const bucket = this.byHash.get(hash);
    if (!bucket) return -1;
    for (const entry of bucket) {
      if (entry.frames.length !== length) continue;
      let same = true;
      for (let index = 0; index < length && same; index++) same = entry.frames[index] === frames[index];
      if (same) return entry.node;
    }
    return -1;
  }

  add(frames: ArrayLike<number>, length: number, hash: number, node: number): void {
    const copy = Int32Array.from({ length }, (_, index) => frames[index] as number);
    const bucket = this.byHash.get(hash);
    if (bucket) bucket.push({ frames: copy, node });
    else this.byHash.set(hash, [{ frames: copy, node }]);
  }
}

/** The hash `SampleCache` uses; readers compute it while they parse a sample. */
export function sampleHash(hash: number, frame: number): number {
  return Math.imul(hash ^ frame, 0x01000193) >>> 0;
}
export const sampleHashSeed = 0x811c9dc5;

export class SpeedscopeFold {
  readonly frames: SpeedscopeFrame[] = [];
  readonly profiles = new Map<number, ProfileState>();
  readonly aggregator = new StackAggregator();
  readonly meta: { exporter: string | null; schema: string | null; sawProfiles: boolean } = {
    exporter: null,
    schema: null,
    sawProfiles: false,
  };
  private readonly cache = new SampleCache();

  profile(index: number): ProfileState {
    let state = this.profiles.get(index);
    if (!state) {
      state = {
        index,
        type: null,
        name: null,
        unit: null,
        scale: 1,
        startValue: null,
        endValue: null,
        sampleNodes: new GrowableInt32(),
        pendingWeights: new GrowableFloat64(),
        weightCount: 0,
        totals: new Map(),
        events: 0,
        open: [],
        lastAt: null,
        mismatchedCloses: 0,
        invalidWeights: 0,
      };
      this.profiles.set(index, state);
    }
    return state;
  }

  frame(index: number, frame: SpeedscopeFrame): void {
    this.frames[index] = frame;
  }

  /** One sample: its frame indexes root first; `hash` folds them with `sampleHash` from `sampleHashSeed`. */
  sample(state: ProfileState, frames: ArrayLike<number>, length: number, hash: number): void {
    let node = this.cache.find(frames, length, hash);
    if (node < 0) {
      node = 0;
      for (let index = 0; index < length; index++) node = this.aggregator.child(node, frames[index] as number);
      this.cache.add(frames, length, hash, node);
    }
    const at = state.sampleNodes.length;
    state.sampleNodes.push(node);
    if (at < state.pendingWeights.length) this.addWeighted(state, node, state.pendingWeights.get(at));
  }

  weight(state: ProfileState, weight: number): void {
    const at = state.weightCount++;
    if (at < state.sampleNodes.length) this.addWeighted(state, state.sampleNodes.get(at), weight);
    else state.pendingWeights.push(weight);
  }

  /** An evented profile's open (O) or close (C) event at `at`. */
  event(state: ProfileState, type: "O" | "C", frame: number, at: number): void {
    state.events++;
    const top = state.open[state.open.length - 1];
    if (top && state.lastAt !== null) this.addTotal(state, top.node, at - state.lastAt);
    state.lastAt = at;
    if (type === "O") {
      state.open.push({ frame, node: this.aggregator.child(top?.node ?? 0, frame) });
      return;
    }
    let found = -1;
    for (let index = state.open.length - 1; index >= 0; index--) {
      if (state.open[index]?.frame === frame) {
        found = index;
        break;
      }
    }
    if (found === -1 || found !== state.open.length - 1) state.mismatchedCloses++;
    if (found !== -1) state.open.length = found;
  }

  /**
   * Closes every profile (unweighted samples count 1 each, evented profiles end at endValue) and
   * gives each its stack group, raw weights scaled to its unit; limitations in profile order.
   */
  finish(limitations: string[]): { groups: { state: ProfileState; group: StackGroup }[]; emptySamples: number } {
    let emptySamples = 0;
    const ordered = [...this.profiles.values()].sort((left, right) => left.index - right.index);
    const groups = ordered.map((state) => {
      const unit = stackUnitOf(state.unit);
      if (!unit) limitations.push(`profile ${state.index}: unknown unit "${state.unit}"; weights kept as samples.`);
      const group = this.aggregator.group(String(state.index), {
        thread: null,
        process: null,
        unit: unit?.unit ?? "samples",
        scale: unit?.scale ?? 1,
      });
      if (state.type === "evented") {
        const top = state.open[state.open.length - 1];
        if (top && state.lastAt !== null && state.endValue !== null) this.addTotal(state, top.node, state.endValue - state.lastAt);
        if (state.open.length > 0) limitations.push(`profile ${state.index}: ${state.open.length} frames were still open at the end.`);
        if (state.mismatchedCloses > 0) {
          limitations.push(`profile ${state.index}: ${state.mismatchedCloses} close events did not match the innermost open frame.`);
        }
      } else {
        const samples = state.sampleNodes.length;
        const weights = state.weightCount;
        if (weights > 0 && weights !== samples) {
          limitations.push(`profile ${state.index}: ${samples} samples but ${weights} weights; unmatched entries ignored.`);
        }
        for (let index = 0; index < samples; index++) {
          const node = state.sampleNodes.get(index);
          if (node === 0) emptySamples++;
          else if (weights === 0) this.addTotal(state, node, 1);
        }
        if (state.invalidWeights > 0) {
          limitations.push(
            `profile ${state.index}: ${state.invalidWeights} samples had a negative, infinite or absurd weight (past 2^53 ns) and were left out.`,
          );
        }
      }
      for (const [node, totals] of state.totals) this.aggregator.add(group, node, totals.weight, totals.count);
      return { state, group };
    });
    return { groups, emptySamples };
  }

  private addWeighted(state: ProfileState, node: number, weight: number): void {
    const scaled = weight * state.scale;
    if (!(weight >= 0) || !(scaled <= Number.MAX_SAFE_INTEGER)) {
      state.invalidWeights++;
      return;
    }
    // A zero weight still counts as a sample of its stack.
    this.addTotal(state, node, weight, true);
  }

  private addTotal(state: ProfileState, node: number, weight: number, allowZero = false): void {
    if (node === 0 || !(weight > 0 || (allowZero && weight === 0))) return;
    const totals = state.totals.get(node);
    if (totals) {
      totals.weight += weight;
      totals.count += 1;
    } else state.totals.set(node, { weight, count: 1 });
  }
}
