import { setDefaultTimeout, expect, test } from "bun:test";
import { renderFlameGraphSvg } from "../../../../src/analysis/flamegraph/svg.ts";
import { buildCallTree, buildDifferentialTree } from "../../../../src/analysis/flamegraph/tree.ts";
import { makeFrame, largeSampleSet, syntheticFrameRows, syntheticStacks } from "../../../fixtures/report/synthetic-profile.ts";

// Million-sample inputs take seconds on a loaded machine.
setDefaultTimeout(60_000);

function rectangles(svg: string): Array<{ title: string; x: number; width: number; y: number; fill: string }> {
  const found: Array<{ title: string; x: number; width: number; y: number; fill: string }> = [];
  const pattern = /<g><title>([^<]*)<\/title><rect x="([\d.]+)" y="(\d+)" width="([\d.]+)" height="\d+" rx="2" fill="([^"]+)"\/>/g;
  for (const match of svg.matchAll(pattern)) {
    found.push({ title: match[1] as string, x: Number(match[2]), y: Number(match[3]), width: Number(match[4]), fill: match[5] as string });
  }
  return found;
}

test("draws every frame with a tooltip naming self, total and share", () => {
  const tree = buildCallTree({ frames: syntheticFrameRows(), stacks: syntheticStacks("ns") });
  const { svg, drawn_frames } = renderFlameGraphSvg(tree);
  expect(svg.startsWith("<svg")).toBe(true);
  expect(svg).toContain('width="1200"');
  expect(drawn_frames).toBe(9);
  const rects = rectangles(svg);
  expect(rects.length).toBe(10);
  const hot = rects.find((rect) => rect.title.startsWith("hot_path"));
  expect(hot?.title).toBe("hot_path (app/hot.py:5) — self 10.00 ms, total 60.00 ms, share 50.00%");
  const root = rects.find((rect) => rect.title.startsWith("all"));
  expect(root?.width).toBeCloseTo(1180, 1);
  expect(hot?.width).toBeCloseTo(590, 1);
  // Root at the bottom: deeper frames sit higher.
  expect((hot?.y ?? 0) < (root?.y ?? 0)).toBe(true);
});

test("escapes names and stays bounded on large profiles", () => {
  const odd = makeFrame("operator<&>\"'", "a<b>.py", 1);
  const tree = buildCallTree({
    frames: [odd],
    stacks: [{ thread: null, process: null, frame_keys: [odd.frame_key], weight: 1, unit: "samples", sample_count: 1 }],
  });
  const { svg } = renderFlameGraphSvg(tree);
  expect(svg).toContain("operator&lt;&amp;&gt;&quot;&#39;");
  expect(svg).not.toContain("operator<&");

  const large = largeSampleSet(200_000, 50_000);
  const bigTree = buildCallTree(large);
  const bounded = renderFlameGraphSvg(bigTree, { maxNodes: 5000, minFrameWidth: 1 });
  expect(bounded.drawn_frames).toBeLessThanOrEqual(5000);
  expect(bounded.omitted_frames).toBe(bigTree.node_count - bounded.drawn_frames);
  expect(rectangles(bounded.svg).every((rect) => rect.width >= 0.99)).toBe(true);
  expect(bounded.svg).toContain("smaller frames omitted");
});

test("colours a differential graph red for gained share and blue for lost", () => {
  const baseline = syntheticStacks("samples");
  const candidate = syntheticStacks("samples").map((row) =>
    row.frame_keys.at(-1) === syntheticFrameRows()[3]?.frame_key ? { ...row, weight: row.weight * 4 } : row,
  );
  const diff = buildDifferentialTree(
    { frames: syntheticFrameRows(), stacks: baseline },
    { frames: syntheticFrameRows(), stacks: candidate },
  );
  const { svg } = renderFlameGraphSvg(diff);
  const rects = rectangles(svg);
  const gained = rects.find((rect) => rect.title.startsWith("compute_a"));
  const lost = rects.find((rect) => rect.title.startsWith("parse_input"));
  expect(gained?.fill).toBe("rgb(235,55,55)");
  expect(lost?.fill.endsWith(",235)")).toBe(true);
  expect(gained?.title).toContain("change +");
});
