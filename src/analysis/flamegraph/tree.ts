/**
 * Call trees over `stacks` × `frames` rows: merged root→leaf paths with self and total weight per
 * node, differential trees between two sides, per-frame rankings, and the bounded node selection
 * that renderers (SVG, HTML report) draw. Pure functions over rows; no store access.
 */
import type { FrameRow, StackRow, StackUnit } from "../../domain/evidence.ts";
import { invalidArguments, comparisonInvalid } from "../../domain/errors.ts";

export { formatWeight } from "./format.ts";
export { type NodeSelection, type SelectedNode, selectNodes } from "./node-selection.ts";

/** Frames keyed by frame_key, or a plain list of frame rows. */
export type FrameTable = ReadonlyMap<string, FrameRow> | Iterable<FrameRow>;

/** One profile's evidence rows. */
export type StackSet = { frames: FrameTable; stacks: Iterable<StackRow> };

/** Identical root→leaf paths merged into one weight. */
export type AggregatedStack = { frame_keys: string[]; weight: number; sample_count: number };

export type AggregatedStacks = { unit: StackUnit; stacks: AggregatedStack[]; total: number; sample_count: number };

export type CallTreeNode = {
  /** null for the synthetic root. */
  frame_key: string | null;
  depth: number;
  /** Weight of stacks whose leaf is this node. */
  self: number;
  /** Weight of stacks passing through this node. */
  total: number;
  sample_count: number;
  /** Sorted by total, heaviest first (ties by frame name), so renderers need not sort. */
  children: CallTreeNode[];
};

export type CallTree = {
  unit: StackUnit;
  root: CallTreeNode;
  frames: ReadonlyMap<string, FrameRow>;
  /** Nodes below the root. */
  node_count: number;
  max_depth: number;
  distinct_stacks: number;
};

export type DifferentialNode = {
  frame_key: string | null;
  depth: number;
  baseline_self: number;
  baseline_total: number;
  candidate_self: number;
  candidate_total: number;
  /** total ÷ that side's root total, so sides with different sample counts compare. */
  baseline_share: number;
  candidate_share: number;
  /** candidate_share − baseline_share: positive means the path gained time. */
  delta_share: number;
  /** Same as delta_share over self weight. */
  self_delta_share: number;
  children: DifferentialNode[];
};

export type DifferentialTree = {
  unit: StackUnit;
  root: DifferentialNode;
  frames: ReadonlyMap<string, FrameRow>;
  baseline_total: number;
  candidate_total: number;
  node_count: number;
  max_depth: number;
};

export type FrameRanking = {
  frame_key: string;
  self: number;
  /** Weight of stacks containing the frame, counted once per stack under recursion. */
  total: number;
  self_share: number;
  total_share: number;
};

const pathSeparator = "\u0001";

/** Accepts a frames map or a list and returns a map; a map is returned as is. */
export function toFrameMap(frames: FrameTable): ReadonlyMap<string, FrameRow> {
  if (frames instanceof Map) return frames;
  const map = new Map<string, FrameRow>();
  for (const frame of frames as Iterable<FrameRow>) if (!map.has(frame.frame_key)) map.set(frame.frame_key, frame);
  return map;
}

/**
 * Merges identical paths before anything walks a tree: a million samples usually hold a few
 * thousand distinct stacks, so every later step scales with distinct stacks, not samples.
 * Units are never mixed: pass `unit` to pick one, otherwise mixed units are refused.
 */
export function aggregateStacks(stacks: Iterable<StackRow>, options: { unit?: StackUnit } = {}): AggregatedStacks {
  const byPath = new Map<string, AggregatedStack>();
  let unit: StackUnit | undefined = options.unit;
  let total = 0;
  let sampleCount = 0;
  for (const row of stacks) {
    if (unit === undefined) unit = row.unit;
    else if (row.unit !== unit) {
      if (options.unit !== undefined) continue;
      throw invalidArguments(
        "call tree",
        [{ field: "stacks.unit", message: `mixes '${unit}' and '${row.unit}'; units are never mixed in one tree`, type: "mixed_units" }],
        ["Pass the unit to build the tree for (ns, samples or bytes)."],
      );
    }
    if (!(row.weight > 0) || row.frame_keys.length === 0) continue;
    const key = row.frame_keys.join(pathSeparator);
    const existing = byPath.get(key);
    if (existing) {
      existing.weight += row.weight;
      existing.sample_count += row.sample_count;
    } else {
      byPath.set(key, { frame_keys: row.frame_keys, weight: row.weight, sample_count: row.sample_count });
    }
    total += row.weight;
    sampleCount += row.sample_count;
  }
  return { unit: unit ?? "samples", stacks: [...byPath.values()], total, sample_count: sampleCount };
}

function frameName(frames: ReadonlyMap<string, FrameRow>, key: string | null): string {
  if (key === null) return "";
  return frames.get(key)?.function ?? key;
}

function isAggregated(input: StackSet | AggregatedStacks | CallTree): input is AggregatedStacks {
  return "total" in input && "stacks" in input && !("frames" in input);
}

/**
 * Builds the merged call tree. Child lookup goes through one numeric map keyed by
 * (parent node, interned frame) instead of a map per node, which keeps 100k distinct stacks cheap.
 */
export function buildCallTree(
  input: StackSet | { frames: FrameTable; aggregated: AggregatedStacks },
  options: { unit?: StackUnit } = {},
): CallTree {
  const frames = toFrameMap(input.frames);
  const aggregated = "aggregated" in input ? input.aggregated : aggregateStacks(input.stacks, options);
  const frameIndex = new Map<string, number>();
  for (const stack of aggregated.stacks) {
    for (const key of stack.frame_keys) if (!frameIndex.has(key)) frameIndex.set(key, frameIndex.size);
  }
  const frameCount = Math.max(frameIndex.size, 1);
  const root: CallTreeNode = { frame_key: null, depth: 0, self: 0, total: 0, sample_count: 0, children: [] };
  const nodes: CallTreeNode[] = [root];
  const childByKey = new Map<number, number>();
  let maxDepth = 0;
  for (const stack of aggregated.stacks) {
    let parentId = 0;
    root.total += stack.weight;
    root.sample_count += stack.sample_count;
    const keys = stack.frame_keys;
    for (let position = 0; position < keys.length; position += 1) {
      const key = keys[position] as string;
      const lookup = parentId * frameCount + (frameIndex.get(key) as number);
      let childId = childByKey.get(lookup);
      let child: CallTreeNode;
      if (childId === undefined) {
        const parent = nodes[parentId] as CallTreeNode;
        child = { frame_key: key, depth: position + 1, self: 0, total: 0, sample_count: 0, children: [] };
        childId = nodes.length;
        nodes.push(child);
        parent.children.push(child);
        childByKey.set(lookup, childId);
      } else {
        child = nodes[childId] as CallTreeNode;
      }
      child.total += stack.weight;
      child.sample_count += stack.sample_count;
      parentId = childId;
    }
    (nodes[parentId] as CallTreeNode).self += stack.weight;
    if (keys.length > maxDepth) maxDepth = keys.length;
  }
  for (const node of nodes) if (node.children.length > 1) sortChildren(node.children, (child) => child.total, frames);
  return {
    unit: aggregated.unit,
    root,
    frames,
    node_count: nodes.length - 1,
    max_depth: maxDepth,
    distinct_stacks: aggregated.stacks.length,
  };
}

function sortChildren<T extends { frame_key: string | null }>(
  children: T[],
  weight: (child: T) => number,
  frames: ReadonlyMap<string, FrameRow>,
): void {
  children.sort((left, right) => {
    const difference = weight(right) - weight(left);
    if (difference !== 0) return difference;
    const leftName = frameName(frames, left.frame_key);
    const rightName = frameName(frames, right.frame_key);
    if (leftName !== rightName) return leftName < rightName ? -1 : 1;
    return (left.frame_key ?? "") < (right.frame_key ?? "") ? -1 : 1;
  });
}

function asTree(input: StackSet | CallTree, options: { unit?: StackUnit }): CallTree {
  return "root" in input ? input : buildCallTree(input, options);
}

/**
 * Merges a baseline and a candidate tree by path (frame keys are stable across runs). Each node
 * carries both sides' weights and their shares of their own side's total, so a candidate with twice
 * the samples does not look twice as slow.
 */
export function buildDifferentialTree(
  baselineInput: StackSet | CallTree,
  candidateInput: StackSet | CallTree,
  options: { unit?: StackUnit } = {},
): DifferentialTree {
  const baseline = asTree(baselineInput, options);
  const candidate = asTree(candidateInput, options);
  if (baseline.root.total > 0 && candidate.root.total > 0 && baseline.unit !== candidate.unit) {
    throw comparisonInvalid(
      `The baseline is measured in '${baseline.unit}' and the candidate in '${candidate.unit}'; units are never mixed.`,
      { remediation: ["Compare profiles of the same kind (both CPU time, both samples or both bytes)."] },
    );
  }
  const frames = new Map<string, FrameRow>(baseline.frames);
  for (const [key, frame] of candidate.frames) frames.set(key, frame);
  const baselineTotal = baseline.root.total;
  const candidateTotal = candidate.root.total;
  const share = (value: number, total: number): number => (total > 0 ? value / total : 0);
  const makeNode = (
    key: string | null,
    depth: number,
    left: CallTreeNode | undefined,
    right: CallTreeNode | undefined,
  ): DifferentialNode => {
    const baselineShare = share(left?.total ?? 0, baselineTotal);
    const candidateShare = share(right?.total ?? 0, candidateTotal);
    return {
      frame_key: key,
      depth,
      baseline_self: left?.self ?? 0,
      baseline_total: left?.total ?? 0,
      candidate_self: right?.self ?? 0,
      candidate_total: right?.total ?? 0,
      baseline_share: baselineShare,
      candidate_share: candidateShare,
      delta_share: candidateShare - baselineShare,
      self_delta_share: share(right?.self ?? 0, candidateTotal) - share(left?.self ?? 0, baselineTotal),
      children: [],
    };
  };
  const root = makeNode(null, 0, baseline.root, candidate.root);
  let nodeCount = 0;
  let maxDepth = 0;
  // Explicit work list: deep recursive profiles would overflow the call stack.
  const work: Array<[DifferentialNode, CallTreeNode | undefined, CallTreeNode | undefined]> = [[root, baseline.root, candidate.root]];
  while (work.length > 0) {
    const [node, left, right] = work.pop() as [DifferentialNode, CallTreeNode | undefined, CallTreeNode | undefined];
    const leftChildren = new Map<string, CallTreeNode>();
    for (const child of left?.children ?? []) leftChildren.set(child.frame_key as string, child);
    for (const child of right?.children ?? []) {
      const key = child.frame_key as string;
      const match = leftChildren.get(key);
      leftChildren.delete(key);
      const merged = makeNode(key, node.depth + 1, match, child);
      node.children.push(merged);
      work.push([merged, match, child]);
    }
    for (const [key, child] of leftChildren) {
      const merged = makeNode(key, node.depth + 1, child, undefined);
      node.children.push(merged);
      work.push([merged, child, undefined]);
    }
    nodeCount += node.children.length;
    if (node.children.length > 0 && node.depth + 1 > maxDepth) maxDepth = node.depth + 1;
    sortChildren(node.children, (child) => Math.max(child.candidate_share, child.baseline_share), frames);
  }
  return {
    unit: candidateTotal > 0 ? candidate.unit : baseline.unit,
    root,
    frames,
    baseline_total: baselineTotal,
    candidate_total: candidateTotal,
    node_count: nodeCount,
    max_depth: maxDepth,
  };
}

/**
 * Per-frame self and total, heaviest first. Total counts a frame once per stack even when it
 * recurses, so it never exceeds the profile's total.
 */
export function rankFrames(
  input: StackSet | AggregatedStacks,
  options: { by?: "self" | "total"; limit?: number; unit?: StackUnit } = {},
): FrameRanking[] {
  const aggregated = isAggregated(input) ? input : aggregateStacks(input.stacks, options);
  const selfByKey = new Map<string, number>();
  const totalByKey = new Map<string, number>();
  const seen = new Set<string>();
  for (const stack of aggregated.stacks) {
    const leaf = stack.frame_keys[stack.frame_keys.length - 1] as string;
    selfByKey.set(leaf, (selfByKey.get(leaf) ?? 0) + stack.weight);
    seen.clear();
    for (const key of stack.frame_keys) {
      if (seen.has(key)) continue;
      seen.add(key);
      totalByKey.set(key, (totalByKey.get(key) ?? 0) + stack.weight);
    }
  }
  const total = aggregated.total;
  const rows: FrameRanking[] = [];
  for (const [key, frameTotal] of totalByKey) {
    const self = selfByKey.get(key) ?? 0;
    rows.push({
      frame_key: key,
      self,
      total: frameTotal,
      self_share: total > 0 ? self / total : 0,
      total_share: total > 0 ? frameTotal / total : 0,
    });
  }
  const by = options.by ?? "self";
  rows.sort((left, right) => right[by] - left[by] || right.total - left.total || (left.frame_key < right.frame_key ? -1 : 1));
  return options.limit === undefined ? rows : rows.slice(0, options.limit);
}

/** "function (file:line)", or just the function when the place is unknown. */
export function frameLabel(frame: FrameRow | undefined, fallback: string): string {
  if (!frame) return fallback;
  if (!frame.file) return frame.function;
  return frame.line === null ? `${frame.function} (${frame.file})` : `${frame.function} (${frame.file}:${frame.line})`;
}
