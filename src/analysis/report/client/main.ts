/**
 * The report's only script, bundled at build time and inlined into the page. It reads the embedded
 * data and draws each flame graph and the timeline. `window.flameox` is the stable hook for tests
 * and agents: frames(), zoom(), reset(), search(), and the timeline's handle.
 */
import type { EmbeddedGraph, EmbeddedTimeline } from "../embedded-data.ts";
import { createFlameGraph, type FlameGraphHandle, type LaidOutFrame, type SearchResult } from "./flame-graph.ts";
import { createTimeline, type TimelineHandle } from "./timeline.ts";

type ReportPayload = { graphs?: EmbeddedGraph[]; timeline?: EmbeddedTimeline | null };

export type FlameoxPageApi = {
  ready: boolean;
  graphs: Record<string, FlameGraphHandle>;
  timeline: TimelineHandle | null;
  frames(id?: string): LaidOutFrame[];
  zoom(target: number | string, id?: string): boolean;
  reset(id?: string): void;
  search(text: string, id?: string): SearchResult | null;
};

declare global {
  interface Window {
    flameox: FlameoxPageApi;
  }
}

function readPayload(): ReportPayload {
  const element = document.getElementById("flameox-data");
  return JSON.parse(element?.textContent || "{}") as ReportPayload;
}

function start(): void {
  const data = readPayload();
  const graphs: Record<string, FlameGraphHandle> = {};
  const graph = (id?: string): FlameGraphHandle | undefined => graphs[id || "profile"];
  const api: FlameoxPageApi = {
    ready: false,
    graphs,
    timeline: null,
    frames: (id) => graph(id)?.frames() ?? [],
    zoom: (target, id) => graph(id)?.zoom(target) ?? false,
    reset: (id) => graph(id)?.reset(),
    search: (text, id) => graph(id)?.search(text) ?? null,
  };
  window.flameox = api;
  for (const embedded of data.graphs ?? []) {
    const container = document.querySelector<HTMLElement>(`[data-graph="${embedded.id}"]`);
    if (container) graphs[embedded.id] = createFlameGraph(container, embedded);
  }
  if (data.timeline) {
    const container = document.querySelector<HTMLElement>("[data-timeline]");
    if (container) api.timeline = createTimeline(container, data.timeline);
  }
  api.ready = true;
}

start();
