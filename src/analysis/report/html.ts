/**
 * The self-contained HTML report: one string with inline CSS, inline script and the data as JSON,
 * a Content-Security-Policy that forbids every network fetch, and no external fonts or assets.
 * Flame graphs embed the aggregated, pruned tree (never samples) and draw on <canvas>.
 */
import type { StackUnit, TraceEventRow } from "../../domain/evidence.ts";
import { escapeXml, formatWeight, percent } from "../flamegraph/format.ts";
import {
  type AggregatedStacks,
  type CallTree,
  type StackSet,
  aggregateStacks,
  buildCallTree,
  buildDifferentialTree,
  rankFrames,
} from "../flamegraph/tree.ts";
import { bundleReportClient } from "./client-bundle.ts" with { type: "macro" };
import { type ComparisonSummary, renderComparisonPanel } from "./comparison-panel.ts";
import {
  type EmbeddedGraph,
  type EmbeddedTimeline,
  embedCallTree,
  embedDifferentialTree,
  embedTimeline,
  scriptSafeJson,
} from "./report-data.ts";
import { reportStyles } from "./styles.ts";

export type { ComparisonSummary } from "./comparison-panel.ts";

/** The browser code, bundled and inlined when this module is built (see client-bundle.ts). */
const clientScript: string = bundleReportClient();

export type SlowTest = { name: string; duration_ns: number; outcome?: string | null; file?: string | null };

export type TopAllocator = { function: string; file?: string | null; line?: number | null; bytes: number; allocations?: number | null };

export type ReportLimits = {
  /** Most flame graph nodes embedded per graph (default 20000). */
  max_nodes?: number;
  /** Nodes under this share of the root are not embedded (default 0.0001 = 0.01%). */
  min_share?: number;
  /** Most trace events drawn on the timeline (default 20000). */
  max_trace_events?: number;
  max_trace_lanes?: number;
  /** Rows per table (default 50). */
  max_table_rows?: number;
};

export type ReportInput = {
  title?: string;
  /** A line under the title, e.g. the run ids. */
  subtitle?: string;
  /** Shown as given; the renderer never reads the clock, so equal input gives an equal file. */
  generated_at?: string;
  /** The profile to draw (the candidate when a baseline is given). */
  profile?: StackSet | CallTree;
  baseline?: StackSet | CallTree;
  /** Picks one unit when the stacks mix several (CPU time and bytes, say). */
  unit?: StackUnit;
  trace_events?: Iterable<TraceEventRow>;
  comparison?: ComparisonSummary;
  slowest_tests?: SlowTest[];
  top_allocators?: TopAllocator[];
  limits?: ReportLimits;
};

const escapeHtml = escapeXml;

function flameGraphSection(graph: EmbeddedGraph, heading: string, legend: string): string {
  const testId = graph.id === "profile" ? "flamegraph" : `${graph.id}-flamegraph`;
  return [
    `<section class="panel" id="${graph.id}" data-graph="${graph.id}" tabindex="-1">`,
    `<h2>${escapeHtml(heading)}</h2>`,
    `<div class="toolbar">`,
    `<input type="search" placeholder="Search functions or files (/regex/)" aria-label="Search frames" data-testid="${testId}-search">`,
    `<button type="button" class="reset" data-testid="${testId}-reset">Reset zoom</button>`,
    `<span class="status" data-testid="${testId}-status" aria-live="polite"></span>`,
    `</div>`,
    `<div class="canvas-wrap"><canvas data-testid="${testId}-canvas" aria-label="${escapeHtml(heading)}: click a frame to zoom, Escape to reset"></canvas></div>`,
    `<div class="tooltip" role="tooltip" hidden></div>`,
    `<p class="legend">${legend}</p>`,
    `</section>`,
  ].join("\n");
}

function timelineSection(timeline: EmbeddedTimeline): string {
  const omitted = timeline.total_events - timeline.shown_events;
  return [
    `<section class="panel" id="timeline" data-timeline tabindex="-1">`,
    `<h2>Trace timeline</h2>`,
    `<div class="toolbar"><button type="button" class="reset" data-testid="timeline-reset">Reset view</button>`,
    `<span class="status">${timeline.shown_events} events in ${timeline.lanes.length} lanes${omitted > 0 ? `; ${omitted} shorter events not drawn` : ""}${timeline.omitted_lanes > 0 ? `; ${timeline.omitted_lanes} quieter lanes not drawn` : ""} · wheel to zoom, drag to pan, double-click to reset</span></div>`,
    `<div class="canvas-wrap"><canvas data-testid="timeline-canvas" aria-label="Trace events per process and thread"></canvas></div>`,
    `<div class="tooltip" role="tooltip" hidden></div>`,
    `</section>`,
  ].join("\n");
}

function table(
  testId: string,
  heading: string,
  columns: Array<{ label: string; numeric?: boolean }>,
  rows: string[][],
  note: string,
): string {
  return [
    `<section class="panel" id="${testId}" data-testid="${testId}">`,
    `<h2>${escapeHtml(heading)}</h2>`,
    `<table><thead><tr>${columns.map((column) => `<th${column.numeric ? ' class="number"' : ""}>${escapeHtml(column.label)}</th>`).join("")}</tr></thead>`,
    `<tbody>${rows
      .map(
        (cells) =>
          `<tr>${cells.map((cell, index) => `<td class="${columns[index]?.numeric ? "number" : index === 0 ? "code" : ""}">${cell}</td>`).join("")}</tr>`,
      )
      .join("")}</tbody></table>`,
    note ? `<p class="legend">${escapeHtml(note)}</p>` : "",
    `</section>`,
  ].join("\n");
}

function place(file: string | null | undefined, line: number | null | undefined): string {
  if (!file) return "";
  return line === null || line === undefined ? file : `${file}:${line}`;
}

type Limits = { maxNodes: number; minShare: number; maxEvents: number; maxLanes: number; maxRows: number };

/** The page as it is assembled: sections in order, their navigation entries, and the graphs the script draws. */
class Page {
  readonly graphs: EmbeddedGraph[] = [];
  readonly sections: string[] = [];
  readonly navigation: Array<[string, string]> = [];

  add(id: string, label: string, html: string): void {
    this.navigation.push([id, label]);
    this.sections.push(html);
  }
}

type Profile = { tree: CallTree; stacks: AggregatedStacks | undefined };

function profileSection(page: Page, input: ReportInput, limits: Limits): Profile | undefined {
  if (!input.profile) return undefined;
  // Aggregate once: the stacks may be a one-shot iterable, and both the tree and the table need them.
  let tree: CallTree;
  let stacks: AggregatedStacks | undefined;
  if ("root" in input.profile) tree = input.profile;
  else {
    stacks = aggregateStacks(input.profile.stacks, input.unit === undefined ? {} : { unit: input.unit });
    tree = buildCallTree({ frames: input.profile.frames, aggregated: stacks });
  }
  const graph = embedCallTree("profile", tree, limits);
  page.graphs.push(graph);
  page.add(
    "profile",
    "Flame graph",
    flameGraphSection(
      graph,
      input.baseline ? "Flame graph (candidate)" : "Flame graph",
      `Icicle layout: callers above callees, width = total ${escapeHtml(tree.unit === "ns" ? "time" : tree.unit)} (${escapeHtml(formatWeight(tree.root.total, tree.unit))} in all). Click to zoom, hover for self/total/share. ${tree.distinct_stacks} distinct stacks, ${tree.node_count} nodes; ${graph.frame.length - 1} embedded.`,
    ),
  );
  return { tree, stacks };
}

function differentialSection(page: Page, input: ReportInput, profileTree: CallTree, limits: Limits): void {
  if (!input.baseline) return;
  const baselineTree = "root" in input.baseline ? input.baseline : buildCallTree(input.baseline, { unit: input.unit ?? profileTree.unit });
  const differential = buildDifferentialTree(baselineTree, profileTree);
  const graph = embedDifferentialTree("differential", differential, limits);
  page.graphs.push(graph);
  page.add(
    "differential",
    "Differential",
    flameGraphSection(
      graph,
      "Differential flame graph (baseline → candidate)",
      `Width = candidate total; colour = change in share of each side's total<span class="swatch" style="background:rgb(235,55,55)"></span>gained time<span class="swatch" style="background:rgb(55,55,235)"></span>lost time<span class="swatch" style="background:rgb(225,225,225)"></span>unchanged. Baseline ${escapeHtml(formatWeight(differential.baseline_total, differential.unit))}, candidate ${escapeHtml(formatWeight(differential.candidate_total, differential.unit))}.`,
    ),
  );
}

function topFunctionsSection(page: Page, profile: Profile, limits: Limits): void {
  const aggregated = profile.stacks;
  if (!aggregated) return;
  const ranking = rankFrames(aggregated, { by: "self", limit: Math.min(limits.maxRows, 25) });
  if (ranking.length === 0) return;
  const columns = [
    { label: "Function" },
    { label: "Location" },
    { label: "Self", numeric: true },
    { label: "Self %", numeric: true },
    { label: "Total", numeric: true },
    { label: "Total %", numeric: true },
  ];
  const rows = ranking.map((row) => {
    const frame = profile.tree.frames.get(row.frame_key);
    return [
      escapeHtml(frame?.function ?? row.frame_key),
      escapeHtml(place(frame?.file, frame?.line)),
      escapeHtml(formatWeight(row.self, aggregated.unit)),
      percent(row.self_share),
      escapeHtml(formatWeight(row.total, aggregated.unit)),
      percent(row.total_share),
    ];
  });
  page.add(
    "top-functions",
    "Top functions",
    table("top-functions", "Top functions by self", columns, rows, "Total counts a function once per stack, even when it recurses."),
  );
}

function moreNote(all: number, shown: number): string {
  return all > shown ? `${all - shown} more not shown.` : "";
}

function testAndAllocatorSections(page: Page, input: ReportInput, limits: Limits): void {
  if (input.slowest_tests && input.slowest_tests.length > 0) {
    const rows = [...input.slowest_tests].sort((left, right) => right.duration_ns - left.duration_ns).slice(0, limits.maxRows);
    page.add(
      "slowest-tests",
      "Slowest tests",
      table(
        "slowest-tests",
        "Slowest tests",
        [{ label: "Test" }, { label: "Outcome" }, { label: "Duration", numeric: true }],
        rows.map((row) => [escapeHtml(row.name), escapeHtml(row.outcome ?? ""), escapeHtml(formatWeight(row.duration_ns, "ns"))]),
        moreNote(input.slowest_tests.length, rows.length),
      ),
    );
  }
  if (input.top_allocators && input.top_allocators.length > 0) {
    const rows = [...input.top_allocators].sort((left, right) => right.bytes - left.bytes).slice(0, limits.maxRows);
    page.add(
      "top-allocators",
      "Top allocators",
      table(
        "top-allocators",
        "Top allocators",
        [{ label: "Function" }, { label: "Location" }, { label: "Bytes", numeric: true }, { label: "Allocations", numeric: true }],
        rows.map((row) => [
          escapeHtml(row.function),
          escapeHtml(place(row.file, row.line)),
          escapeHtml(formatWeight(row.bytes, "bytes")),
          row.allocations === null || row.allocations === undefined ? "" : String(row.allocations),
        ]),
        moreNote(input.top_allocators.length, rows.length),
      ),
    );
  }
}

function documentHtml(input: ReportInput, page: Page, timeline: EmbeddedTimeline | null): string {
  const sections =
    page.sections.length > 0
      ? page.sections
      : [
          `<section class="panel"><p class="empty">No profile, trace, comparison, test or allocation evidence was given for this report.</p></section>`,
        ];
  const title = input.title ?? "flameox report";
  const subtitle = [input.subtitle, input.generated_at ? `generated ${input.generated_at}` : undefined].filter(Boolean).join(" · ");
  const navigation = page.navigation;
  return [
    "<!doctype html>",
    '<html lang="en">',
    "<head>",
    '<meta charset="utf-8">',
    `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:; connect-src 'none'; font-src 'none'; base-uri 'none'; form-action 'none'">`,
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    '<meta name="generator" content="flameox">',
    `<title>${escapeHtml(title)}</title>`,
    `<style>${reportStyles}</style>`,
    "</head>",
    "<body>",
    `<header><h1>${escapeHtml(title)}</h1>${subtitle ? `<p>${escapeHtml(subtitle)}</p>` : ""}</header>`,
    navigation.length > 1 ? `<nav>${navigation.map(([id, label]) => `<a href="#${id}">${escapeHtml(label)}</a>`).join("")}</nav>` : "",
    `<main>`,
    ...sections,
    `</main>`,
    `<script type="application/json" id="flameox-data">${scriptSafeJson({ graphs: page.graphs, timeline })}</script>`,
    `<script>${clientScript}</script>`,
    "</body>",
    "</html>",
  ].join("\n");
}

/** Renders the whole report. Sections without input are left out. */
export function renderReport(input: ReportInput): string {
  const limits: Limits = {
    maxNodes: input.limits?.max_nodes ?? 20_000,
    minShare: input.limits?.min_share ?? 0.0001,
    maxEvents: input.limits?.max_trace_events ?? 20_000,
    maxLanes: input.limits?.max_trace_lanes ?? 64,
    maxRows: input.limits?.max_table_rows ?? 50,
  };
  const page = new Page();
  const profile = profileSection(page, input, limits);
  if (profile) differentialSection(page, input, profile.tree, limits);
  if (input.comparison) page.add("comparison", "Comparison", renderComparisonPanel(input.comparison));
  const timeline = input.trace_events
    ? embedTimeline(input.trace_events, { maxEvents: limits.maxEvents, maxLanes: limits.maxLanes, maxDepth: 24 })
    : null;
  if (timeline) page.add("timeline", "Timeline", timelineSection(timeline));
  if (profile) topFunctionsSection(page, profile, limits);
  testAndAllocatorSections(page, input, limits);
  return documentHtml(input, page, timeline);
}
