/**
 * The shape of the data a report embeds, shared by the server code that builds it and the browser
 * code that draws it. Types only.
 */
import type { WeightUnit } from "../flamegraph/format.ts";

/** One flame graph as parallel arrays in pre-order; index 0 is the root. */
export type EmbeddedGraph = {
  id: string;
  unit: WeightUnit;
  /** Weight of the root: the width everything is laid out against. */
  total: number;
  /** [function, file, line] per distinct frame. */
  frames: Array<[string, string | null, number | null]>;
  frame: number[];
  parent: number[];
  depth: number[];
  start: number[];
  weight: number[];
  self: number[];
  /** Present on differential graphs: the baseline's weights and each node's change in share. */
  baseline?: { total: number; weight: number[]; self: number[]; delta: number[] };
  max_depth: number;
  omitted_nodes: number;
};

export type EmbeddedTimeline = {
  lanes: Array<{ label: string; rows: number }>;
  names: string[];
  categories: string[];
  start_ns: number;
  end_ns: number;
  /** Six numbers per event: lane, start (ns after start_ns), duration ns, depth, name index, category index (−1 none). */
  events: number[];
  shown_events: number;
  total_events: number;
  omitted_lanes: number;
};
