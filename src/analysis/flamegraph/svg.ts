/**
 * A bounded, static SVG flame graph (root at the bottom) for agents and MCP resources: at most
 * `maxNodes` frames, none narrower than `minFrameWidth` pixels, each with a <title> tooltip.
 * Differential trees are coloured by change in share: red gained time, blue lost it.
 */
import type { FrameRow } from "../../domain/evidence.ts";
import { differentialColour, escapeXml, formatWeight, percent, signedPoints, warmColour } from "./format.ts";
import { type CallTree, type CallTreeNode, type DifferentialNode, type DifferentialTree, selectNodes } from "./tree.ts";

export { differentialColour, escapeXml, warmColour } from "./format.ts";

export type FlameGraphSvgOptions = {
  /** Pixels; 1200 by default. */
  width?: number;
  frameHeight?: number;
  /** Frames narrower than this many pixels are left out (their weight stays in the parent). */
  minFrameWidth?: number;
  maxNodes?: number;
  title?: string;
};

export type FlameGraphSvg = { svg: string; drawn_frames: number; omitted_frames: number };

const defaults = { width: 1200, frameHeight: 16, minFrameWidth: 1, maxNodes: 5000 } as const;
const fontSize = 11;
const characterWidth = fontSize * 0.59;

function place(frame: FrameRow | undefined): string {
  if (!frame?.file) return "";
  return frame.line === null ? ` (${frame.file})` : ` (${frame.file}:${frame.line})`;
}

function isDifferential(tree: CallTree | DifferentialTree): tree is DifferentialTree {
  return "candidate_total" in tree;
}

/** Renders a call tree or a differential tree as one standalone SVG document. */
export function renderFlameGraphSvg(tree: CallTree | DifferentialTree, options: FlameGraphSvgOptions = {}): FlameGraphSvg {
  const width = options.width ?? defaults.width;
  const frameHeight = options.frameHeight ?? defaults.frameHeight;
  const minFrameWidth = options.minFrameWidth ?? defaults.minFrameWidth;
  const maxNodes = options.maxNodes ?? defaults.maxNodes;
  const differential = isDifferential(tree);
  const padding = 10;
  const plotWidth = width - padding * 2;
  const headerHeight = 34;
  const footerHeight = 22;

  type AnyNode = CallTreeNode | DifferentialNode;
  const weightOf = differential
    ? (node: AnyNode) => (node as DifferentialNode).candidate_total
    : (node: AnyNode) => (node as CallTreeNode).total;
  const rootWeight = weightOf(tree.root);
  const selection = selectNodes<AnyNode>(tree.root, weightOf, {
    maxNodes,
    minWeight: rootWeight > 0 ? (rootWeight * minFrameWidth) / plotWidth : Number.POSITIVE_INFINITY,
    totalNodes: tree.node_count,
  });
  let largestDelta = 0;
  if (differential) {
    for (const { node } of selection.nodes) largestDelta = Math.max(largestDelta, Math.abs((node as DifferentialNode).delta_share));
  }
  const depthCount = selection.max_depth + 1;
  const height = headerHeight + depthCount * frameHeight + footerHeight;
  const title = options.title ?? (differential ? "Differential flame graph" : "Flame graph");
  const parts: string[] = [];
  parts.push(
    `<svg xmlns="http://www.w3.org/2000/svg" version="1.1" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="Verdana, sans-serif" font-size="${fontSize}">`,
    `<rect x="0" y="0" width="${width}" height="${height}" fill="#f8f8f8"/>`,
    `<text x="${width / 2}" y="20" text-anchor="middle" font-size="15">${escapeXml(title)}</text>`,
  );
  const scale = rootWeight > 0 ? plotWidth / rootWeight : 0;
  for (const { node, depth, start } of selection.nodes) {
    const frame = node.frame_key === null ? undefined : tree.frames.get(node.frame_key);
    const name = node.frame_key === null ? "all" : (frame?.function ?? node.frame_key);
    const x = padding + start * scale;
    const frameWidth = weightOf(node) * scale;
    const y = headerHeight + (depthCount - 1 - depth) * frameHeight;
    let tooltip: string;
    let fill: string;
    if (differential) {
      const diff = node as DifferentialNode;
      tooltip = `${name}${place(frame)} — baseline ${percent(diff.baseline_share)}, candidate ${percent(diff.candidate_share)}, change ${signedPoints(diff.delta_share)}; candidate self ${formatWeight(diff.candidate_self, tree.unit)}, total ${formatWeight(diff.candidate_total, tree.unit)}`;
      fill = differentialColour(diff.delta_share, largestDelta);
    } else {
      const plain = node as CallTreeNode;
      tooltip = `${name}${place(frame)} — self ${formatWeight(plain.self, tree.unit)}, total ${formatWeight(plain.total, tree.unit)}, share ${percent(rootWeight > 0 ? plain.total / rootWeight : 0)}`;
      fill = node.frame_key === null ? "rgb(200,200,200)" : warmColour(name);
    }
    const fitting = Math.floor((frameWidth - 6) / characterWidth);
    const label = fitting < 3 ? "" : name.length <= fitting ? name : `${name.slice(0, fitting - 2)}..`;
    parts.push(
      `<g><title>${escapeXml(tooltip)}</title><rect x="${x.toFixed(2)}" y="${y}" width="${Math.max(frameWidth, 0.1).toFixed(2)}" height="${frameHeight - 1}" rx="2" fill="${fill}"/>` +
        (label ? `<text x="${(x + 3).toFixed(2)}" y="${y + frameHeight - 4}">${escapeXml(label)}</text>` : "") +
        "</g>",
    );
  }
  const drawn = selection.nodes.length - 1;
  const note = `${drawn} frames drawn${selection.omitted_nodes > 0 ? `, ${selection.omitted_nodes} smaller frames omitted` : ""}; total ${formatWeight(rootWeight, tree.unit)}${differential ? ` (candidate; baseline ${formatWeight(tree.baseline_total, tree.unit)}; red = gained share, blue = lost)` : ""}`;
  parts.push(`<text x="${padding}" y="${height - 7}" font-size="10" fill="#555">${escapeXml(note)}</text>`, "</svg>");
  return { svg: parts.join("\n"), drawn_frames: drawn, omitted_frames: selection.omitted_nodes };
}
