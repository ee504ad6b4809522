import { setDefaultTimeout, describe, expect, test } from "bun:test";
import {
  aggregateStacks,
  buildCallTree,
  buildDifferentialTree,
  type CallTreeNode,
  formatWeight,
  rankFrames,
  selectNodes,
} from "../../../../src/analysis/flamegraph/tree.ts";
import { FlameoxError } from "../../../../src/domain/errors.ts";
import type { StackRow } from "../../../../src/domain/evidence.ts";
import { largeSampleSet, syntheticFrameRows, syntheticFrames as f, syntheticStacks } from "../../../fixtures/report/synthetic-profile.ts";

// Million-sample inputs take seconds on a loaded machine.
setDefaultTimeout(60_000);

function child(node: CallTreeNode, key: string): CallTreeNode {
  const found = node.children.find((candidate) => candidate.frame_key === key);
  if (!found) throw new Error(`no child ${key}`);
  return found;
}

describe("buildCallTree", () => {
  test("merges identical paths and computes self and total per node", () => {
    const stacks = [...syntheticStacks("samples"), ...syntheticStacks("samples")];
    const tree = buildCallTree({ frames: syntheticFrameRows(), stacks });
    expect(tree.unit).toBe("samples");
    expect(tree.root.total).toBe(240);
    expect(tree.distinct_stacks).toBe(7);
    const main = child(tree.root, f.main.frame_key);
    const handle = child(main, f.handle.frame_key);
    const hot = child(handle, f.hot.frame_key);
    expect(main.total).toBe(200);
    expect(handle.self).toBe(10);
    expect(handle.total).toBe(200);
    expect(hot.total).toBe(120);
    expect(hot.self).toBe(20);
    expect(child(hot, f.computeA.frame_key).self).toBe(60);
    // Heaviest child first, so the hot path leads its siblings.
    expect(handle.children.map((node) => node.frame_key)).toEqual([f.hot.frame_key, f.parse.frame_key, f.render.frame_key]);
    expect(tree.root.children[0]?.frame_key).toBe(f.main.frame_key);
    expect(tree.max_depth).toBe(4);
    expect(tree.node_count).toBe(9);
  });

  test("refuses mixed units unless one is chosen", () => {
    const mixed: StackRow[] = [...syntheticStacks("samples"), ...syntheticStacks("bytes")];
    expect(() => buildCallTree({ frames: syntheticFrameRows(), stacks: mixed })).toThrow(FlameoxError);
    const bytes = buildCallTree({ frames: syntheticFrameRows(), stacks: mixed }, { unit: "bytes" });
    expect(bytes.unit).toBe("bytes");
    expect(bytes.root.total).toBe(120);
  });

  test("an empty profile gives an empty root", () => {
    const tree = buildCallTree({ frames: [], stacks: [] });
    expect(tree.root.total).toBe(0);
    expect(tree.node_count).toBe(0);
  });

  test("one million samples over 100k distinct stacks aggregate before the tree is built", () => {
    const { frames, stacks } = largeSampleSet(1_000_000, 100_000);
    const aggregated = aggregateStacks(stacks);
    expect(aggregated.stacks.length).toBe(100_000);
    expect(aggregated.total).toBe(1_000_000);
    const tree = buildCallTree({ frames, aggregated });
    expect(tree.root.total).toBe(1_000_000);
    const main = child(tree.root, f.main.frame_key);
    expect(main.total).toBe(1_000_000);
    expect(child(main, f.hot.frame_key).total).toBe(500_000);
    expect(main.children[0]?.frame_key).toBe(f.hot.frame_key);
    // Every node's total is its self plus its children's totals.
    const work = [tree.root];
    let checked = 0;
    while (work.length > 0 && checked < 20_000) {
      const node = work.pop() as CallTreeNode;
      const sum = node.self + node.children.reduce((acc, next) => acc + next.total, 0);
      expect(sum).toBe(node.total);
      checked += 1;
      work.push(...node.children);
    }
  });
});

describe("rankFrames", () => {
  test("ranks by self and counts recursion once per stack in total", () => {
    const recursive: StackRow[] = [
      {
        thread: null,
        process: null,
        frame_keys: [f.main.frame_key, f.hot.frame_key, f.hot.frame_key, f.hot.frame_key],
        weight: 10,
        unit: "samples",
        sample_count: 10,
      },
      { thread: null, process: null, frame_keys: [f.main.frame_key, f.parse.frame_key], weight: 5, unit: "samples", sample_count: 5 },
    ];
    const ranking = rankFrames({ frames: syntheticFrameRows(), stacks: recursive });
    expect(ranking[0]).toEqual({ frame_key: f.hot.frame_key, self: 10, total: 10, self_share: 10 / 15, total_share: 10 / 15 });
    expect(ranking.find((row) => row.frame_key === f.main.frame_key)?.total).toBe(15);
    expect(
      rankFrames({ frames: [], stacks: syntheticStacks() }, { by: "total", limit: 2 })
        .map((row) => row.frame_key)
        .sort(),
    ).toEqual([f.main.frame_key, f.handle.frame_key].sort());
  });
});

describe("buildDifferentialTree", () => {
  test("normalizes each side by its own total", () => {
    const baseline = syntheticStacks("samples");
    // The candidate has 3× the samples and hot_path's own work (compute_a) doubles.
    const candidate = syntheticStacks("samples", 3).map((row) =>
      row.frame_keys.at(-1) === f.computeA.frame_key ? { ...row, weight: row.weight * 2, sample_count: row.sample_count * 2 } : row,
    );
    const diff = buildDifferentialTree(
      { frames: syntheticFrameRows(), stacks: baseline },
      { frames: syntheticFrameRows(), stacks: candidate },
    );
    expect(diff.baseline_total).toBe(120);
    expect(diff.candidate_total).toBe(450);
    expect(diff.root.delta_share).toBe(0);
    const main = diff.root.children.find((node) => node.frame_key === f.main.frame_key);
    const handle = main?.children.find((node) => node.frame_key === f.handle.frame_key);
    const hot = handle?.children.find((node) => node.frame_key === f.hot.frame_key);
    const parse = handle?.children.find((node) => node.frame_key === f.parse.frame_key);
    expect(hot?.baseline_share).toBeCloseTo(60 / 120, 12);
    expect(hot?.candidate_share).toBeCloseTo(270 / 450, 12);
    expect(hot?.delta_share).toBeGreaterThan(0);
    expect(parse?.delta_share).toBeLessThan(0);
    const computeA = hot?.children.find((node) => node.frame_key === f.computeA.frame_key);
    expect(computeA?.self_delta_share).toBeCloseTo(180 / 450 - 30 / 120, 12);
  });

  test("keeps paths present on one side only", () => {
    const baseline = syntheticStacks("samples").filter((row) => row.frame_keys.at(-1) !== f.render.frame_key);
    const candidate = syntheticStacks("samples").filter((row) => row.frame_keys.at(-1) !== f.parse.frame_key);
    const diff = buildDifferentialTree(
      { frames: syntheticFrameRows(), stacks: baseline },
      { frames: syntheticFrameRows(), stacks: candidate },
    );
    const handle = diff.root.children[0]?.children.find((node) => node.frame_key === f.handle.frame_key);
    const parse = handle?.children.find((node) => node.frame_key === f.parse.frame_key);
    const render = handle?.children.find((node) => node.frame_key === f.render.frame_key);
    expect(parse?.candidate_total).toBe(0);
    expect(parse?.baseline_total).toBe(25);
    expect(render?.baseline_total).toBe(0);
    expect(render?.candidate_total).toBe(10);
  });

  test("refuses to compare different units", () => {
    expect(() =>
      buildDifferentialTree({ frames: [], stacks: syntheticStacks("samples") }, { frames: [], stacks: syntheticStacks("bytes") }),
    ).toThrow(/units are never mixed/);
  });
});

describe("selectNodes", () => {
  test("keeps the heaviest connected nodes and lays out offsets over all siblings", () => {
    const tree = buildCallTree({ frames: syntheticFrameRows(), stacks: syntheticStacks() });
    const selection = selectNodes(tree.root, (node) => node.total, { maxNodes: 4, minWeight: 0, totalNodes: tree.node_count });
    expect(selection.nodes.map((item) => item.node.frame_key)).toEqual([
      null,
      f.main.frame_key,
      f.handle.frame_key,
      f.hot.frame_key,
      f.computeA.frame_key,
    ]);
    expect(selection.omitted_nodes).toBe(5);
    expect(selection.nodes[4]?.parent).toBe(3);
    const bounded = selectNodes(tree.root, (node) => node.total, { maxNodes: 100, minWeight: 15, totalNodes: tree.node_count });
    expect(bounded.nodes.every((item) => item.node.total >= 15)).toBe(true);
    expect(bounded.nodes.find((item) => item.node.frame_key === f.parse.frame_key)?.start).toBe(60);
    const bootstrap = bounded.nodes.find((item) => item.node.frame_key === f.bootstrap.frame_key);
    expect(bootstrap?.start).toBe(100);
    expect(bootstrap?.parent).toBe(0);
  });
});

test("formatWeight speaks the unit", () => {
  expect(formatWeight(1_500_000, "ns")).toBe("1.50 ms");
  expect(formatWeight(3, "samples")).toBe("3 samples");
  expect(formatWeight(2048, "bytes")).toBe("2.00 KiB");
});
