/**
 * The data a report embeds: aggregated, pruned flame graph trees as flat arrays (never samples) and a
 * bounded trace timeline, so the page stays small and smooth whatever the profile's size.
 */
import type { FrameRow, TraceEventRow } from "../../domain/evidence.ts";
import {
  type CallTree,
  type CallTreeNode,
  type DifferentialNode,
  type DifferentialTree,
  type NodeSelection,
  selectNodes,
} from "../flamegraph/tree.ts";
import type { EmbeddedGraph, EmbeddedTimeline } from "./embedded-data.ts";

export type { EmbeddedGraph, EmbeddedTimeline } from "./embedded-data.ts";

export type GraphLimits = { maxNodes: number; minShare: number };

function internFrame(
  frames: ReadonlyMap<string, FrameRow>,
  key: string | null,
  table: Array<[string, string | null, number | null]>,
  indexByKey: Map<string | null, number>,
): number {
  const known = indexByKey.get(key);
  if (known !== undefined) return known;
  const frame = key === null ? undefined : frames.get(key);
  const entry: [string, string | null, number | null] =
    key === null ? ["all", null, null] : [frame?.function ?? key, frame?.file ?? null, frame?.line ?? null];
  table.push(entry);
  indexByKey.set(key, table.length - 1);
  return table.length - 1;
}

/**
 * The flat arrays of a selected tree: frame, parent, depth, start, weight and self per node, plus the
 * baseline columns of a differential tree (the key order is the embedded JSON's).
 */
function flatten<Node extends { frame_key: string | null }>(
  head: { id: string; unit: EmbeddedGraph["unit"]; total: number; frames: ReadonlyMap<string, FrameRow> },
  selection: NodeSelection<Node>,
  weightOf: (node: Node) => { total: number; self: number },
  baseline?: { total: number; of: (node: Node) => { total: number; self: number; delta: number } },
): EmbeddedGraph {
  const columns = baseline && { total: baseline.total, weight: [] as number[], self: [] as number[], delta: [] as number[] };
  const graph: EmbeddedGraph = {
    id: head.id,
    unit: head.unit,
    total: head.total,
    frames: [],
    frame: [],
    parent: [],
    depth: [],
    start: [],
    weight: [],
    self: [],
    ...(columns ? { baseline: columns } : {}),
    max_depth: selection.max_depth,
    omitted_nodes: selection.omitted_nodes,
  };
  const indexByKey = new Map<string | null, number>();
  for (const item of selection.nodes) {
    graph.frame.push(internFrame(head.frames, item.node.frame_key, graph.frames, indexByKey));
    graph.parent.push(item.parent);
    graph.depth.push(item.depth);
    graph.start.push(item.start);
    const weight = weightOf(item.node);
    graph.weight.push(weight.total);
    graph.self.push(weight.self);
    if (baseline && columns) {
      const before = baseline.of(item.node);
      columns.weight.push(before.total);
      columns.self.push(before.self);
      columns.delta.push(before.delta);
    }
  }
  return graph;
}

/** Flattens a call tree, keeping at most `maxNodes` nodes and none under `minShare` of the root. */
export function embedCallTree(id: string, tree: CallTree, limits: GraphLimits): EmbeddedGraph {
  const selection = selectNodes<CallTreeNode>(tree.root, (node) => node.total, {
    maxNodes: limits.maxNodes,
    minWeight: tree.root.total * limits.minShare,
    totalNodes: tree.node_count,
  });
  return flatten({ id, unit: tree.unit, total: tree.root.total, frames: tree.frames }, selection, (node) => node);
}

/** Flattens a differential tree; widths follow the candidate, colours the change in share. */
export function embedDifferentialTree(id: string, tree: DifferentialTree, limits: GraphLimits): EmbeddedGraph {
  const selection = selectNodes<DifferentialNode>(tree.root, (node) => node.candidate_total, {
    maxNodes: limits.maxNodes,
    minWeight: tree.candidate_total * limits.minShare,
    totalNodes: tree.node_count,
  });
  return flatten(
    { id, unit: tree.unit, total: tree.candidate_total, frames: tree.frames },
    selection,
    (node) => ({ total: node.candidate_total, self: node.candidate_self }),
    {
      total: tree.baseline_total,
      of: (node) => ({ total: node.baseline_total, self: node.baseline_self, delta: node.delta_share }),
    },
  );
}

export type TimelineLimits = { maxEvents: number; maxLanes: number; maxDepth: number };

type KeptEvents = { kept: TraceEventRow[]; keptLanes: Map<string, number>; total: number; laneCount: number };

const laneKey = (event: TraceEventRow): string => `${event.pid ?? "?"}\u0000${event.tid ?? "?"}`;

/** The longest `maxEvents` events of the busiest `maxLanes` lanes, in time order. */
function keepEvents(events: Iterable<TraceEventRow>, limits: TimelineLimits): KeptEvents {
  const laneBusy = new Map<string, number>();
  // Per-lane buffers: which lanes survive is known only at the end, so each keeps its own longest events.
  const buffers = new Map<string, TraceEventRow[]>();
  let total = 0;
  const byDuration = (left: TraceEventRow, right: TraceEventRow): number =>
    (right.dur_ns ?? 0) - (left.dur_ns ?? 0) || left.ts_ns - right.ts_ns;
  for (const event of events) {
    if (event.phase === "M") continue;
    total += 1;
    const key = laneKey(event);
    laneBusy.set(key, (laneBusy.get(key) ?? 0) + Math.max(event.dur_ns ?? 0, 1));
    let buffer = buffers.get(key);
    if (!buffer) {
      buffer = [];
      buffers.set(key, buffer);
    }
    buffer.push(event);
    if (buffer.length >= limits.maxEvents * 2) buffers.set(key, buffer.sort(byDuration).slice(0, limits.maxEvents));
  }
  const lanesByBusy = [...laneBusy.entries()].sort((left, right) => right[1] - left[1]);
  const keptLanes = new Map<string, number>();
  for (const [key] of lanesByBusy.slice(0, limits.maxLanes)) keptLanes.set(key, keptLanes.size);
  const kept = [...keptLanes.keys()]
    .flatMap((key) => buffers.get(key) ?? [])
    .sort(byDuration)
    .slice(0, limits.maxEvents);
  kept.sort((left, right) => left.ts_ns - right.ts_ns || (left.depth ?? 0) - (right.depth ?? 0));
  return { kept, keptLanes, total, laneCount: laneBusy.size };
}

/**
 * Keeps the longest `maxEvents` events (instants count as zero length) in the busiest `maxLanes`
 * pid/tid lanes. Events stream through per-lane buffers that are cut back whenever they double.
 */
export function embedTimeline(events: Iterable<TraceEventRow>, limits: TimelineLimits): EmbeddedTimeline | null {
  const { kept, keptLanes, total, laneCount } = keepEvents(events, limits);
  if (total === 0) return null;
  let startNs = Number.POSITIVE_INFINITY;
  let endNs = Number.NEGATIVE_INFINITY;
  for (const event of kept) {
    startNs = Math.min(startNs, event.ts_ns);
    endNs = Math.max(endNs, event.ts_ns + (event.dur_ns ?? 0));
  }
  if (!Number.isFinite(startNs)) {
    startNs = 0;
    endNs = 1;
  }
  const lanes = [...keptLanes.keys()].map((key) => {
    const [pid, tid] = key.split("\u0000");
    return { label: `pid ${pid} · tid ${tid}`, rows: 1 };
  });
  const names: string[] = [];
  const nameIndex = new Map<string, number>();
  const categories: string[] = [];
  const categoryIndex = new Map<string, number>();
  const intern = (value: string, table: string[], index: Map<string, number>): number => {
    const known = index.get(value);
    if (known !== undefined) return known;
    table.push(value);
    index.set(value, table.length - 1);
    return table.length - 1;
  };
  const flat: number[] = [];
  for (const event of kept) {
    const lane = keptLanes.get(laneKey(event)) as number;
    const depth = Math.min(Math.max(event.depth ?? 0, 0), limits.maxDepth - 1);
    const laneInfo = lanes[lane] as { rows: number };
    laneInfo.rows = Math.max(laneInfo.rows, depth + 1);
    flat.push(
      lane,
      event.ts_ns - startNs,
      Math.max(event.dur_ns ?? 0, 0),
      depth,
      intern(event.name, names, nameIndex),
      event.category === null ? -1 : intern(event.category, categories, categoryIndex),
    );
  }
  return {
    lanes,
    names,
    categories,
    start_ns: startNs,
    end_ns: Math.max(endNs, startNs + 1),
    events: flat,
    shown_events: kept.length,
    total_events: total,
    omitted_lanes: Math.max(0, laneCount - keptLanes.size),
  };
}

/** JSON safe to place inside a <script> element: no `</script>`, `<!--` or line separators survive. */
export function scriptSafeJson(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, "\\u003c")
    .replace(/>/g, "\\u003e")
    .replace(/&/g, "\\u0026")
    .replace(/\u2028/g, "\\u2028")
    .replace(/\u2029/g, "\\u2029");
}
