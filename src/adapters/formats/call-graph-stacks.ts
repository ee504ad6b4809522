/**
 * Stacks from a call graph that records no stacks (cProfile, stackprof without `raw`): per function
 * its self weight and cumulative weight, and per caller→callee edge the callee's cumulative weight
 * when called from that caller.
 *
 * The paths are expanded from the roots (functions nobody calls), splitting the weight that flows
 * into a function between its own self weight and its callees in the proportions the graph records
 * (self : edge cumulative …), the usual assumption that a function's profile does not depend on
 * who called it. Without recursion this gives every function its self weight at its leaves and its
 * cumulative weight over the stacks it is on, exactly. A callee already on the path (recursion) is
 * not entered again; its share is split among the other callees, so totals of recursive functions
 * are approximate. Self weight stays exact: each function's leaf weights are scaled to its recorded
 * self weight at the end, and a function never reached gets a stack of its own.
 *
 * Bounds: at most `maxNodes` path nodes (besides the roots) are expanded (the remainder stays with the node where the
 * budget ran out), and flows below `minimumFlow` of the total are not expanded.
 */
import type { StackAggregator, StackGroup } from "./stack-aggregator.ts";

export type CallGraphFunction = {
  /** The caller's frame id (a FrameTable index). */
  frame: number;
  self: number;
  cumulative: number;
  /** Callee function index → the callee's cumulative weight when called from this function. */
  callees: Map<number, number>;
  /** Whether any function calls it. */
  called: boolean;
};

export type CallGraphResult = { recursive: number; unreached: number; truncated: boolean };

const maxNodes = 200_000;
const minimumFlow = 1e-9;

export function expandCallGraph(functions: readonly CallGraphFunction[], aggregator: StackAggregator, group: StackGroup): CallGraphResult {
  const total = functions.reduce((sum, entry) => sum + Math.max(0, entry.self), 0);
  const leaves: { node: number; function: number; weight: number }[] = [];
  const realized = new Float64Array(functions.length);
  const recursiveFunctions = new Set<number>();
  let budget = maxNodes;
  let truncated = false;
  // Depth first, with an explicit stack: an exit marker (flow < 0) takes its function off the path.
  type Visit = { function: number; flow: number; parentNode: number };
  const onPath = new Uint8Array(functions.length);
  const pending: Visit[] = [];
  functions.forEach((entry, index) => {
    if (!entry.called && entry.cumulative > 0) pending.push({ function: index, flow: entry.cumulative, parentNode: 0 });
  });
  while (pending.length > 0) {
    const visit = pending.pop() as Visit;
    if (visit.flow < 0) {
      onPath[visit.function] = 0;
      continue;
    }
    const entry = functions[visit.function] as CallGraphFunction;
    const node = aggregator.child(visit.parentNode, entry.frame);
    onPath[visit.function] = 1;
    pending.push({ function: visit.function, flow: -1, parentNode: 0 });
    let share = Math.max(0, entry.self);
    const callees: [number, number][] = [];
    for (const [callee, cumulative] of entry.callees) {
      if (onPath[callee]) recursiveFunctions.add(callee);
      else if (cumulative > 0) {
        callees.push([callee, cumulative]);
        share += cumulative;
      }
    }
    let self = share > 0 ? (visit.flow * Math.max(0, entry.self)) / share : visit.flow;
    for (const [callee, cumulative] of callees) {
      const flow = (visit.flow * cumulative) / share;
      if (flow < minimumFlow * total || budget <= 0) {
        if (budget <= 0) truncated = true;
        self += flow;
      } else {
        budget--;
        pending.push({ function: callee, flow, parentNode: node });
      }
    }
    if (self > 0) {
      leaves.push({ node, function: visit.function, weight: self });
      realized[visit.function] = (realized[visit.function] as number) + self;
    }
  }
  let unreached = 0;
  functions.forEach((entry, index) => {
    if (entry.self > 0 && (realized[index] as number) <= 0) {
      unreached++;
      leaves.push({ node: aggregator.child(0, entry.frame), function: index, weight: entry.self });
      realized[index] = entry.self;
    }
  });
  for (const leaf of leaves) {
    const entry = functions[leaf.function] as CallGraphFunction;
    const scale = entry.self > 0 ? entry.self / (realized[leaf.function] as number) : 0;
    const weight = leaf.weight * scale;
    if (weight > 0) aggregator.add(group, leaf.node, weight, 1);
  }
  return { recursive: recursiveFunctions.size, unreached, truncated };
}
