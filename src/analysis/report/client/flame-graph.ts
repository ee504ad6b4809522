/**
 * One interactive icicle flame graph on a <canvas>: hover for self/total/share, click to zoom,
 * Escape or the button to reset, search to highlight. Drawing visits only frames wider than half
 * a pixel and skips whole subtrees below that, so a zoomed-out 1M-sample profile costs what its
 * visible frames cost.
 */
import { differentialColour, escapeXml, formatWeight, percent, signedPoints, warmColour } from "../../flamegraph/format.ts";
import type { EmbeddedGraph } from "../embedded-data.ts";
import { fitCanvas, fitLabel, frameScheduler, makeMatcher, panelParts, part, positionTooltip } from "./page.ts";

const rowHeight = 18;
const minimumWidth = 0.5;
const rootColour = "rgb(200,200,200)";
const highlightColour = "rgb(214,51,255)";

type Rect = { index: number; x: number; width: number; dimmed: boolean };

/** What `window.flameox.frames()` returns per drawn frame; tests and agents read it. */
export type LaidOutFrame = {
  index: number;
  parent: number;
  name: string;
  file: string | null;
  line: number | null;
  x: number;
  y: number;
  width: number;
  height: number;
  depth: number;
  self: number;
  total: number;
  share: number;
  highlighted: boolean;
  dimmed: boolean;
  delta_share: number | null;
};

export type SearchResult = { matched_frames: number; matched_share: number };

export type FlameGraphHandle = {
  frames(): LaidOutFrame[];
  zoom(target: number | string): boolean;
  reset(): void;
  search(text: string): SearchResult;
  zoomed(): number;
  width(): number;
};

/** For each node (pre-order), the index just past its subtree. */
function subtreeEnds(depth: readonly number[]): Int32Array {
  const ends = new Int32Array(depth.length);
  const open: number[] = [];
  for (let index = 0; index < depth.length; index += 1) {
    while (open.length > 0 && (depth[open[open.length - 1]!] ?? 0) >= (depth[index] ?? 0)) ends[open.pop()!] = index;
    open.push(index);
  }
  while (open.length > 0) ends[open.pop()!] = depth.length;
  return ends;
}

function nodeColours(graph: EmbeddedGraph, names: readonly string[]): string[] {
  const baseline = graph.baseline;
  if (!baseline) return names.map((name, node) => (node === 0 ? rootColour : warmColour(name)));
  let largest = 0;
  for (let node = 1; node < baseline.delta.length; node += 1) largest = Math.max(largest, Math.abs(baseline.delta[node] ?? 0));
  return baseline.delta.map((delta) => differentialColour(delta, largest));
}

class FlameGraph implements FlameGraphHandle {
  private readonly canvas: HTMLCanvasElement;
  private readonly context: CanvasRenderingContext2D;
  private readonly tooltip: HTMLElement;
  private readonly searchBox: HTMLInputElement | null;
  private readonly status: HTMLElement;
  private readonly count: number;
  private readonly ends: Int32Array;
  private readonly names: string[];
  private readonly colours: string[];
  private readonly highlighted: Uint8Array;
  private zoomedNode = 0;
  private hovered = -1;
  private rects: Rect[] = [];
  private layoutWidth = -1;
  private layoutZoom = -1;
  private matchedShare = 0;
  private matchedCount = 0;
  private characterWidth = 7;
  private readonly scheduleDraw: () => void;

  constructor(
    private readonly container: HTMLElement,
    private readonly graph: EmbeddedGraph,
  ) {
    ({ canvas: this.canvas, context: this.context, tooltip: this.tooltip } = panelParts(container));
    this.searchBox = container.querySelector<HTMLInputElement>("input[type=search]");
    this.status = part<HTMLElement>(container, ".status");
    this.count = graph.frame.length;
    this.ends = subtreeEnds(graph.depth);
    this.names = graph.frame.map((frameIndex) => graph.frames[frameIndex]?.[0] ?? "");
    this.colours = nodeColours(graph, this.names);
    this.highlighted = new Uint8Array(this.count);
    this.scheduleDraw = frameScheduler(() => this.draw());
    this.listen();
    this.scheduleDraw();
    this.updateStatus(false);
  }

  private cssWidth(): number {
    return Math.max(200, Math.floor(this.canvas.parentElement?.clientWidth ?? 0));
  }

  /** The frames to draw at the current width and zoom: the zoomed node's ancestors (dimmed), then its visible subtree. */
  private layout(): void {
    const cssWidth = this.cssWidth();
    if (cssWidth === this.layoutWidth && this.zoomedNode === this.layoutZoom) return;
    const graph = this.graph;
    this.layoutWidth = cssWidth;
    this.layoutZoom = this.zoomedNode;
    const rects: Rect[] = [];
    const ancestors: number[] = [];
    for (let ancestor = graph.parent[this.zoomedNode] ?? -1; ancestor >= 0; ancestor = graph.parent[ancestor] ?? -1)
      ancestors.push(ancestor);
    for (let position = ancestors.length - 1; position >= 0; position -= 1)
      rects.push({ index: ancestors[position]!, x: 0, width: cssWidth, dimmed: true });
    const zoomStart = graph.start[this.zoomedNode] ?? 0;
    const zoomWeight = graph.weight[this.zoomedNode] || 1;
    const end = this.ends[this.zoomedNode] ?? this.count;
    let node = this.zoomedNode;
    while (node < end) {
      const nodeWidth = ((graph.weight[node] ?? 0) / zoomWeight) * cssWidth;
      if (nodeWidth < minimumWidth) {
        node = this.ends[node] ?? end;
        continue;
      }
      rects.push({ index: node, x: (((graph.start[node] ?? 0) - zoomStart) / zoomWeight) * cssWidth, width: nodeWidth, dimmed: false });
      node += 1;
    }
    this.rects = rects;
  }

  private draw(): void {
    this.layout();
    const context = this.context;
    fitCanvas(this.canvas, context, this.layoutWidth, (this.graph.max_depth + 1) * rowHeight);
    this.characterWidth = context.measureText("abcdefghijklmnopqrstuvwxyz").width / 26 || 7;
    for (const rect of this.rects) this.drawFrame(rect);
    context.globalAlpha = 1;
  }

  private drawFrame(rect: Rect): void {
    const context = this.context;
    const node = rect.index;
    const y = (this.graph.depth[node] ?? 0) * rowHeight;
    const highlighted = this.highlighted[node] === 1;
    context.globalAlpha = rect.dimmed ? 0.5 : 1;
    context.fillStyle = highlighted ? highlightColour : (this.colours[node] ?? rootColour);
    context.fillRect(rect.x, y, Math.max(rect.width - 0.5, 0.5), rowHeight - 1);
    if (node === this.hovered) {
      context.strokeStyle = "#111";
      context.lineWidth = 1;
      context.strokeRect(rect.x + 0.5, y + 0.5, Math.max(rect.width - 1.5, 0.5), rowHeight - 2);
    }
    if (rect.width > 26) {
      context.fillStyle = highlighted ? "#fff" : "#1a1a1a";
      context.fillText(fitLabel(this.names[node] ?? "", Math.floor((rect.width - 6) / this.characterWidth)), rect.x + 3, y + rowHeight / 2);
    }
  }

  private hit(x: number, y: number): Rect | null {
    this.layout();
    const depth = Math.floor(y / rowHeight);
    return this.rects.find((rect) => this.graph.depth[rect.index] === depth && x >= rect.x && x < rect.x + rect.width) ?? null;
  }

  private shareOfTotal(node: number): number {
    return this.graph.total > 0 ? (this.graph.weight[node] ?? 0) / this.graph.total : 0;
  }

  /** Tooltip HTML; every name and place is escaped. */
  private describe(node: number): string {
    const graph = this.graph;
    const [name, file, line] = graph.frames[graph.frame[node] ?? 0] ?? ["", null, null];
    const place = file ? (line === null ? file : `${file}:${line}`) : "";
    const lines = [`<strong>${escapeXml(name)}</strong>`];
    if (place) lines.push(`<span class="muted">${escapeXml(place)}</span>`);
    lines.push(`self ${formatWeight(graph.self[node] ?? 0, graph.unit)} · total ${formatWeight(graph.weight[node] ?? 0, graph.unit)}`);
    const zoomWeight = graph.weight[this.zoomedNode] ?? 0;
    const ofZoom = this.zoomedNode !== 0 ? ` of all · ${percent(zoomWeight > 0 ? (graph.weight[node] ?? 0) / zoomWeight : 0)} of zoom` : "";
    lines.push(`share ${percent(this.shareOfTotal(node))}${ofZoom}`);
    const baseline = graph.baseline;
    if (baseline) {
      const baseShare = baseline.total > 0 ? (baseline.weight[node] ?? 0) / baseline.total : 0;
      lines.push(
        `baseline ${percent(baseShare)} → candidate ${percent(this.shareOfTotal(node))} (${signedPoints(baseline.delta[node] ?? 0)})`,
      );
    }
    return lines.join("<br>");
  }

  private applySearch(text: string): SearchResult {
    const matcher = makeMatcher(text);
    const graph = this.graph;
    this.highlighted.fill(0);
    this.matchedShare = 0;
    this.matchedCount = 0;
    if (matcher) {
      // A match inside an already matched subtree adds no weight: its time is counted once.
      let coveredUntil = -1;
      let matchedWeight = 0;
      for (let node = 1; node < this.count; node += 1) {
        const [name, file] = graph.frames[graph.frame[node] ?? 0] ?? ["", null];
        if (!matcher(name) && !(file && matcher(file))) continue;
        this.highlighted[node] = 1;
        this.matchedCount += 1;
        if (node >= coveredUntil) {
          matchedWeight += graph.weight[node] ?? 0;
          coveredUntil = this.ends[node] ?? this.count;
        }
      }
      this.matchedShare = graph.total > 0 ? matchedWeight / graph.total : 0;
    }
    this.updateStatus(matcher !== null);
    this.scheduleDraw();
    return { matched_frames: this.matchedCount, matched_share: this.matchedShare };
  }

  private updateStatus(searching: boolean): void {
    const parts: string[] = [];
    if (this.zoomedNode !== 0) parts.push(`zoomed to ${this.names[this.zoomedNode]}`);
    if (searching) parts.push(`matched ${this.matchedCount} frames, ${percent(this.matchedShare)} of total`);
    if (this.graph.omitted_nodes > 0) parts.push(`${this.graph.omitted_nodes} small frames not drawn`);
    this.status.textContent = parts.join(" · ");
  }

  private zoomTo(node: number): void {
    this.zoomedNode = node >= 0 && node < this.count ? node : 0;
    this.updateStatus(Boolean(this.searchBox?.value.trim()));
    this.scheduleDraw();
  }

  private pointed(event: MouseEvent): Rect | null {
    const bounds = this.canvas.getBoundingClientRect();
    return this.hit(event.clientX - bounds.left, event.clientY - bounds.top);
  }

  private listen(): void {
    const { canvas, tooltip } = this;
    canvas.addEventListener("mousemove", (event) => {
      const rect = this.pointed(event);
      const next = rect ? rect.index : -1;
      if (next !== this.hovered) {
        this.hovered = next;
        this.scheduleDraw();
      }
      tooltip.hidden = rect === null;
      canvas.style.cursor = rect ? "pointer" : "default";
      if (rect) {
        tooltip.innerHTML = this.describe(rect.index);
        positionTooltip(tooltip, event);
      }
    });
    canvas.addEventListener("mouseleave", () => {
      tooltip.hidden = true;
      if (this.hovered !== -1) {
        this.hovered = -1;
        this.scheduleDraw();
      }
    });
    canvas.addEventListener("click", (event) => {
      const rect = this.pointed(event);
      if (rect) this.zoomTo(rect.index);
    });
    this.container.querySelector<HTMLButtonElement>("button.reset")?.addEventListener("click", () => this.zoomTo(0));
    const searchBox = this.searchBox;
    searchBox?.addEventListener("input", () => this.applySearch(searchBox.value));
    this.container.addEventListener("keydown", (event) => {
      if (event.key === "Escape") this.zoomTo(0);
    });
    window.addEventListener("resize", this.scheduleDraw);
  }

  frames(): LaidOutFrame[] {
    this.layout();
    const graph = this.graph;
    return this.rects.map((rect) => {
      const node = rect.index;
      const [name, file, line] = graph.frames[graph.frame[node] ?? 0] ?? ["", null, null];
      return {
        index: node,
        parent: graph.parent[node] ?? -1,
        name,
        file,
        line,
        x: rect.x,
        y: (graph.depth[node] ?? 0) * rowHeight,
        width: rect.width,
        height: rowHeight - 1,
        depth: graph.depth[node] ?? 0,
        self: graph.self[node] ?? 0,
        total: graph.weight[node] ?? 0,
        share: this.shareOfTotal(node),
        highlighted: this.highlighted[node] === 1,
        dimmed: rect.dimmed,
        delta_share: graph.baseline ? (graph.baseline.delta[node] ?? 0) : null,
      };
    });
  }

  zoom(target: number | string): boolean {
    const node = typeof target === "number" ? target : this.names.indexOf(String(target));
    if (node < 0) return false;
    this.zoomTo(node);
    return true;
  }

  reset(): void {
    this.zoomTo(0);
  }

  search(text: string): SearchResult {
    if (this.searchBox) this.searchBox.value = text;
    return this.applySearch(text);
  }

  zoomed(): number {
    return this.zoomedNode;
  }

  width(): number {
    this.layout();
    return this.layoutWidth;
  }
}

export function createFlameGraph(container: HTMLElement, graph: EmbeddedGraph): FlameGraphHandle {
  return new FlameGraph(container, graph);
}
