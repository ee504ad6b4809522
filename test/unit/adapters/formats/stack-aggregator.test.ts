import { describe, expect, test } from "bun:test";
import { StackAggregator } from "../../../../src/adapters/formats/stack-aggregator.ts";
import { seededRandom } from "../../../support/random.ts";

describe("the stack trie's child index", () => {
  test("a (node, frame) pair always gives the node first made for it, across index growth and large frame ids", () => {
    const aggregator = new StackAggregator();
    // The reference: a map by text key, the same creation order.
    const reference = new Map<string, number>();
    const next = seededRandom(16);
    const nodes = [0];
    // 60,000 pairs: the index starts at 4,096 slots, so it grows several times mid-way.
    for (let step = 0; step < 60_000; step++) {
      const node = nodes[Math.floor(next() * nodes.length)] as number;
      const frame = next() < 0.1 ? 2 ** 20 + Math.floor(next() * 2 ** 30) : Math.floor(next() * 50);
      const child = aggregator.child(node, frame);
      const key = `${node},${frame}`;
      const known = reference.get(key);
      if (known === undefined) {
        expect(child).toBe(aggregator.nodes - 1);
        reference.set(key, child);
        nodes.push(child);
      } else expect(child).toBe(known);
    }
    expect(aggregator.nodes).toBe(reference.size + 1);
    // Every pair still finds its node after all the growth.
    for (const [key, node] of reference) {
      const [parent, frame] = key.split(",").map(Number) as [number, number];
      expect(aggregator.child(parent, frame)).toBe(node);
      expect(aggregator.frameIdsOf(node).at(-1)).toBe(frame);
    }
    expect(aggregator.nodes).toBe(reference.size + 1);
  });

  test("reset drops every node: the same path is made again from node 1", () => {
    const aggregator = new StackAggregator();
    const first = aggregator.path([3, 4, 5]);
    expect(aggregator.path([3, 4, 5])).toBe(first);
    aggregator.reset();
    expect(aggregator.nodes).toBe(1);
    expect(aggregator.path([7])).toBe(1);
    expect(aggregator.path([3, 4, 5])).toBe(4);
    expect(aggregator.frameIdsOf(4)).toEqual([3, 4, 5]);
  });
});
