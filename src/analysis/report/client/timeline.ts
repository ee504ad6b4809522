/**
 * The trace timeline on a <canvas>: one lane per process/thread, events as bars by depth; wheel to
 * zoom around the pointer, drag to pan, double-click or the button to reset.
 */
import { escapeXml, formatWeight, warmColour } from "../../flamegraph/format.ts";
import type { EmbeddedTimeline } from "../embedded-data.ts";
import { fitCanvas, fitLabel, frameScheduler, panelParts, positionTooltip } from "./page.ts";

const rowHeight = 14;
const laneGap = 8;
const labelWidth = 170;
const axisHeight = 20;
/** Numbers per event in `EmbeddedTimeline.events`: lane, start, duration, depth, name, category. */
const stride = 6;

export type TimelineEvent = { lane: number; name: string; start_ns: number; duration_ns: number; depth: number; x: number };

export type TimelineHandle = {
  events(): TimelineEvent[];
  lanes(): Array<{ label: string; rows: number }>;
  reset(): void;
};

type Drag = { x: number; start: number; end: number };

const formatTime = (value: number): string => formatWeight(value, "ns");

class Timeline implements TimelineHandle {
  private readonly canvas: HTMLCanvasElement;
  private readonly context: CanvasRenderingContext2D;
  private readonly tooltip: HTMLElement;
  private readonly laneTop: number[] = [];
  private readonly cssHeight: number;
  private readonly span: number;
  private readonly eventCount: number;
  private viewStart = 0;
  private viewEnd: number;
  private hovered = -1;
  private dragging: Drag | null = null;
  private readonly scheduleDraw: () => void;

  constructor(
    private readonly container: HTMLElement,
    private readonly timeline: EmbeddedTimeline,
  ) {
    ({ canvas: this.canvas, context: this.context, tooltip: this.tooltip } = panelParts(container));
    let top = axisHeight;
    for (const lane of timeline.lanes) {
      this.laneTop.push(top);
      top += lane.rows * rowHeight + laneGap;
    }
    this.cssHeight = top;
    this.span = Math.max(timeline.end_ns - timeline.start_ns, 1);
    this.viewEnd = this.span;
    this.eventCount = timeline.events.length / stride;
    this.scheduleDraw = frameScheduler(() => this.draw());
    this.listen();
    this.scheduleDraw();
  }

  private field(index: number, offset: number): number {
    return this.timeline.events[index * stride + offset] ?? 0;
  }

  private plotWidth(): number {
    return Math.max(100, Math.floor(this.canvas.parentElement?.clientWidth ?? 0) - labelWidth);
  }

  private xOf(time: number, widthPx: number): number {
    return labelWidth + ((time - this.viewStart) / (this.viewEnd - this.viewStart)) * widthPx;
  }

  private rowTop(index: number): number {
    return (this.laneTop[this.field(index, 0)] ?? 0) + this.field(index, 3) * rowHeight;
  }

  private draw(): void {
    const widthPx = this.plotWidth();
    const cssWidth = widthPx + labelWidth;
    const context = this.context;
    fitCanvas(this.canvas, context, cssWidth, this.cssHeight);
    this.drawAxis(widthPx);
    this.timeline.lanes.forEach((lane, laneIndex) => {
      const top = this.laneTop[laneIndex] ?? 0;
      context.fillStyle = laneIndex % 2 ? "#f4f4f4" : "#fafafa";
      context.fillRect(0, top - laneGap / 2, cssWidth, lane.rows * rowHeight + laneGap);
      context.fillStyle = "#333";
      context.fillText(fitLabel(lane.label, 26), 4, top + rowHeight / 2);
    });
    context.save();
    context.beginPath();
    context.rect(labelWidth, 0, widthPx, this.cssHeight);
    context.clip();
    for (let index = 0; index < this.eventCount; index += 1) this.drawEvent(index, widthPx);
    context.restore();
  }

  private drawAxis(widthPx: number): void {
    const context = this.context;
    context.fillStyle = "#555";
    for (let tick = 0; tick <= 5; tick += 1) {
      const time = this.viewStart + ((this.viewEnd - this.viewStart) * tick) / 5;
      const tickX = labelWidth + (widthPx * tick) / 5;
      context.fillRect(tickX, axisHeight - 5, 1, 5);
      context.textAlign = tick === 5 ? "right" : tick === 0 ? "left" : "center";
      context.fillText(formatTime(time), tickX, 8);
    }
    context.textAlign = "left";
  }

  private drawEvent(index: number, widthPx: number): void {
    const start = this.field(index, 1);
    const duration = this.field(index, 2);
    if (start > this.viewEnd || start + duration < this.viewStart) return;
    const context = this.context;
    const x = this.xOf(start, widthPx);
    const eventWidth = Math.max((duration / (this.viewEnd - this.viewStart)) * widthPx, 1);
    const y = this.rowTop(index);
    const name = this.timeline.names[this.field(index, 4)] ?? "";
    context.fillStyle = index === this.hovered ? "#222" : warmColour(name);
    context.fillRect(x, y, eventWidth, rowHeight - 1);
    if (eventWidth > 40) {
      context.fillStyle = index === this.hovered ? "#fff" : "#1a1a1a";
      context.fillText(fitLabel(name, Math.floor((eventWidth - 6) / 6.5)), Math.max(x, labelWidth) + 3, y + rowHeight / 2);
    }
  }

  /** The event under the pointer (the last drawn wins), with two pixels of slack; −1 for none. */
  private hit(x: number, y: number): number {
    const widthPx = this.plotWidth();
    if (x < labelWidth) return -1;
    const time = this.viewStart + ((x - labelWidth) / widthPx) * (this.viewEnd - this.viewStart);
    const slack = (2 / widthPx) * (this.viewEnd - this.viewStart);
    let found = -1;
    for (let index = 0; index < this.eventCount; index += 1) {
      const rowY = this.rowTop(index);
      if (y < rowY || y >= rowY + rowHeight) continue;
      const start = this.field(index, 1);
      if (time >= start - slack && time <= start + this.field(index, 2) + slack) found = index;
    }
    return found;
  }

  private describe(index: number): string {
    const timeline = this.timeline;
    const category = this.field(index, 5);
    return [
      `<strong>${escapeXml(timeline.names[this.field(index, 4)] ?? "")}</strong>`,
      ...(category >= 0 ? [escapeXml(timeline.categories[category] ?? "")] : []),
      escapeXml(timeline.lanes[this.field(index, 0)]?.label ?? ""),
      `start +${formatTime(this.field(index, 1))} · duration ${formatTime(this.field(index, 2))}`,
    ].join("<br>");
  }

  private onMove(event: MouseEvent): void {
    const bounds = this.canvas.getBoundingClientRect();
    const x = event.clientX - bounds.left;
    const dragging = this.dragging;
    if (dragging) {
      const shift = ((dragging.x - x) / this.plotWidth()) * (dragging.end - dragging.start);
      this.viewStart = dragging.start + shift;
      this.viewEnd = dragging.end + shift;
      this.scheduleDraw();
      return;
    }
    const index = this.hit(x, event.clientY - bounds.top);
    if (index !== this.hovered) {
      this.hovered = index;
      this.scheduleDraw();
    }
    this.tooltip.hidden = index < 0;
    if (index >= 0) {
      this.tooltip.innerHTML = this.describe(index);
      positionTooltip(this.tooltip, event);
    }
  }

  private onWheel(event: WheelEvent): void {
    event.preventDefault();
    const bounds = this.canvas.getBoundingClientRect();
    const fraction = Math.min(Math.max((event.clientX - bounds.left - labelWidth) / this.plotWidth(), 0), 1);
    const pivot = this.viewStart + fraction * (this.viewEnd - this.viewStart);
    const factor = event.deltaY > 0 ? 1.25 : 0.8;
    const nextSpan = Math.min(Math.max((this.viewEnd - this.viewStart) * factor, 1000), this.span * 4);
    this.viewStart = pivot - fraction * nextSpan;
    this.viewEnd = this.viewStart + nextSpan;
    this.scheduleDraw();
  }

  private listen(): void {
    const canvas = this.canvas;
    canvas.addEventListener("mousemove", (event) => this.onMove(event));
    canvas.addEventListener("mouseleave", () => {
      this.tooltip.hidden = true;
      this.dragging = null;
    });
    canvas.addEventListener("mousedown", (event) => {
      const bounds = canvas.getBoundingClientRect();
      this.dragging = { x: event.clientX - bounds.left, start: this.viewStart, end: this.viewEnd };
    });
    window.addEventListener("mouseup", () => {
      this.dragging = null;
    });
    canvas.addEventListener("wheel", (event) => this.onWheel(event), { passive: false });
    canvas.addEventListener("dblclick", () => this.reset());
    this.container.querySelector<HTMLButtonElement>("button.reset")?.addEventListener("click", () => this.reset());
    window.addEventListener("resize", this.scheduleDraw);
  }

  events(): TimelineEvent[] {
    const widthPx = this.plotWidth();
    const list: TimelineEvent[] = [];
    for (let index = 0; index < this.eventCount; index += 1) {
      list.push({
        lane: this.field(index, 0),
        name: this.timeline.names[this.field(index, 4)] ?? "",
        start_ns: this.field(index, 1),
        duration_ns: this.field(index, 2),
        depth: this.field(index, 3),
        x: this.xOf(this.field(index, 1), widthPx),
      });
    }
    return list;
  }

  lanes(): Array<{ label: string; rows: number }> {
    return this.timeline.lanes.slice();
  }

  reset(): void {
    this.viewStart = 0;
    this.viewEnd = this.span;
    this.scheduleDraw();
  }
}

export function createTimeline(container: HTMLElement, timeline: EmbeddedTimeline): TimelineHandle {
  return new Timeline(container, timeline);
}
