import { digestOf } from "../domain/canonical-json.ts";
import { capabilityUnavailable, comparisonInvalid, type FlameoxError, invalidArguments } from "../domain/errors.ts";
import type { FrameRow, StackUnit } from "../domain/evidence.ts";
import { chooseUnit, stackUnits, type UnitSummary } from "../analysis/hotspots.ts";
import {
  loadFrames,
  loadMergedStacks,
  loadSlowestTests,
  loadTopAllocators,
  loadTraceEvents,
  regroup,
} from "../analysis/report-evidence.ts";
import { buildCallTree } from "../analysis/flamegraph/tree.ts";
import { renderFlameGraphSvg } from "../analysis/flamegraph/svg.ts";
import { renderReport } from "../analysis/report/html.ts";
import { writeSpeedscope } from "../adapters/export/speedscope.ts";
import { writeCollapsed } from "../adapters/export/collapsed.ts";
import { writeChromeTrace } from "../adapters/export/chrome-trace.ts";
import { writePprof } from "../adapters/export/pprof.ts";
import type { EvidenceView } from "../store/evidence-query.ts";
import type { BundleRecord } from "../store/evidence-registry.ts";
import { writeFileAtomically } from "../store/atomic-file.ts";
import { pinEvidenceScope, withEvidence, type EvidenceScope } from "./evidence-scope.ts";
import { checkOutputPath } from "./output-path.ts";
import { type ExportFormat, type ViewerEntry, type ViewerPlan, viewerPlanFor } from "./viewer-plans.ts";
import type { RunSetStore } from "../store/run-set-store.ts";
import type { WorkspaceHandle } from "../store/workspace-handle.ts";

export const exportFormats = ["speedscope", "pprof", "collapsed", "chrome"] as const satisfies readonly ExportFormat[];
export type { ExportFormat };

/** One or several runs, artifacts or run sets whose evidence is pooled. */
export type EvidenceSelection = {
  /** What the caller typed, for titles and error messages. */
  label: string;
  ids: string[];
  runIds: string[];
  bundles: BundleRecord[];
  snapshot: string;
};

export type ReportRequest = {
  /** Run ids, artifact ids (sha256:…) or run set ids; several are pooled into one profile. */
  targets: string[];
  baseline: string[] | null;
  unit: StackUnit | null;
  title: string | null;
  /** Frames per function (default; lines of one function merge) or per source line. */
  group_by?: "function" | "line";
};

export type ReportSummary = {
  schema_version: 1;
  path: string;
  bytes: number;
  targets: string[];
  baseline: string[] | null;
  run_ids: string[];
  baseline_run_ids: string[] | null;
  unit: StackUnit | null;
  sections: string[];
  distinct_stacks: number;
  total_weight: number;
};

export type ExportRequest = { target: string; format: ExportFormat; unit: StackUnit | null };

export type ExportResult = {
  schema_version: 1;
  path: string;
  bytes: number;
  format: ExportFormat;
  target: string;
  run_ids: string[];
  unit: StackUnit | null;
  source: "stacks" | "trace_events";
};

export type { ViewerEntry, ViewerPlan };

const stackExtractors = new Set(["profile", "py-spy", "perf", "memray"]);

function hasStacks(bundles: BundleRecord[]): boolean {
  return bundles.some(
    (bundle) => (bundle.tables.stacks ?? 0) > 0 || (bundle.tables.stacks === undefined && stackExtractors.has(bundle.extractor)),
  );
}

function hasTraceEvents(bundles: BundleRecord[]): boolean {
  return bundles.some((bundle) => (bundle.tables.trace_events ?? 0) > 0);
}

/** "a,b" and repeated arguments both name several targets. */
export function splitTargets(values: Iterable<string>): string[] {
  const ids: string[] = [];
  for (const value of values) for (const part of value.split(",")) if (part.trim() && !ids.includes(part.trim())) ids.push(part.trim());
  return ids;
}

type ReportEvidence = Awaited<ReturnType<typeof loadReportEvidence>>;

/** Everything the report draws: stacks in one unit (regrouped), bounded trace events, slowest tests, top allocators. */
async function loadReportEvidence(view: EvidenceView, requestedUnit: StackUnit | null, groupBy: "function" | "line") {
  const units = await stackUnits(view);
  const unit = chooseUnit(units, requestedUnit);
  if (requestedUnit !== null && unit === null && units.length > 0) {
    throw invalidArguments("report", [
      {
        field: "unit",
        message: `no stacks in ${requestedUnit}; available: ${units.map((entry) => entry.unit).join(", ")}`,
        type: "value_error",
      },
    ]);
  }
  const lineStacks = unit ? await loadMergedStacks(view, { unit, byThread: false }) : [];
  const { frames, stacks } = regroup(lineStacks.length > 0 ? await loadFrames(view) : new Map<string, FrameRow>(), lineStacks, groupBy);
  const traceEvents = await loadTraceEvents(view);
  const slowest = await loadSlowestTests(view);
  const allocators = units.some((entry) => entry.unit === "bytes") ? await loadTopAllocators(view) : [];
  return { unit, units, stacks, frames, traceEvents, slowest, allocators };
}

/** The report's sections in page order, by what the evidence holds. */
function reportSections(loaded: ReportEvidence, hasProfile: boolean, hasBaseline: boolean): string[] {
  const sections: string[] = [];
  if (hasProfile) sections.push("flame_graph");
  if (hasProfile && hasBaseline) sections.push("differential_flame_graph");
  if (loaded.traceEvents.length > 0) sections.push("timeline");
  if (hasProfile) sections.push("top_functions");
  if (loaded.slowest.length > 0) sections.push("slowest_tests");
  if (loaded.allocators.length > 0) sections.push("top_allocators");
  return sections;
}

export class ReportService {
  constructor(
    private readonly workspace: WorkspaceHandle,
    private readonly runSets: RunSetStore,
  ) {}

  /**
   * Pins the evidence of every target at the current corpus head and pools their bundles. A frozen run set
   * contributes its included runs.
   */
  select(targets: string[]): EvidenceSelection {
    if (targets.length === 0)
      throw invalidArguments("report", [{ field: "target", message: "name at least one run, artifact or run set", type: "missing" }]);
    const scopes: EvidenceScope[] = [];
    for (const target of targets) {
      const runSetRuns = this.runSetMembers(target);
      if (runSetRuns) for (const runId of runSetRuns) scopes.push(pinEvidenceScope(this.workspace, runId));
      else scopes.push(pinEvidenceScope(this.workspace, target));
    }
    const bundles = new Map<string, BundleRecord>();
    for (const scope of scopes) for (const bundle of scope.bundles) bundles.set(bundle.bundle_id, bundle);
    const list = [...bundles.values()];
    return {
      label: targets.join(","),
      ids: targets,
      runIds: [...new Set(scopes.flatMap((scope) => scope.runIds))],
      bundles: list,
      snapshot: digestOf(list.map((bundle) => bundle.bundle_id).sort()),
    };
  }

  /** Included run ids of a frozen run set, or null when `id` is not one. */
  private runSetMembers(id: string): string[] | null {
    if (id.startsWith("sha256:")) return null;
    const record = this.runSets.find(id);
    if (!record) return null;
    const included = record.members.filter((member) => member.included).map((member) => member.run_id);
    if (included.length === 0) {
      throw comparisonInvalid(`Run set ${id} includes no runs.`, {
        remediation: ["Freeze a run set with at least one included run; list_runs shows the runs to choose from."],
        next: { tool: "list_runs", arguments: {} },
      });
    }
    return included;
  }

  private async withSelection<T>(selection: EvidenceSelection, body: (view: EvidenceView) => Promise<T>): Promise<T> {
    const scope: EvidenceScope = {
      kind: "run",
      id: selection.label,
      runIds: selection.runIds,
      bundles: selection.bundles,
      snapshot: selection.snapshot,
      corpusCommitId: "",
    };
    return withEvidence(this.workspace, scope, body);
  }

  private noStacks(selection: EvidenceSelection, what: string): FlameoxError {
    return capabilityUnavailable(`${selection.label} has no stack samples to draw ${what} from.`, {
      details: { next_tool: "plan_capture", run_or_artifact: selection.label },
      remediation: [
        "Capture the workload with a sampling adapter (py-spy or perf) via plan_capture, or import a profile (speedscope, collapsed, pprof, .cpuprofile, Chrome trace) with flameox import.",
      ],
      next: { tool: "list_declared_workflows", arguments: { kind: "workload" } },
    });
  }

  /** Renders the report for `request` and writes it to `output` (a new or regular file). */
  async writeReport(request: ReportRequest, output: string): Promise<ReportSummary> {
    const path = checkOutputPath(output, "report");
    const { html, summary } = await this.renderReport(request);
    writeFileAtomically(path, html);
    return { ...summary, path, bytes: Buffer.byteLength(html) };
  }

  async renderReport(request: ReportRequest): Promise<{ html: string; summary: Omit<ReportSummary, "path" | "bytes"> }> {
    const groupBy = request.group_by ?? "function";
    const candidate = this.select(request.targets);
    const baseline = request.baseline && request.baseline.length > 0 ? this.select(request.baseline) : null;
    const loaded = await this.withSelection(candidate, (view) => loadReportEvidence(view, request.unit, groupBy));
    const baselineStacks = baseline && loaded.unit ? await this.loadBaseline(baseline, loaded.unit, groupBy) : null;
    const nothing =
      loaded.stacks.length === 0 && loaded.traceEvents.length === 0 && loaded.slowest.length === 0 && loaded.allocators.length === 0;
    if (nothing) throw this.noStacks(candidate, "a report");
    const profile = loaded.stacks.length > 0 ? { frames: loaded.frames, stacks: loaded.stacks } : undefined;
    const sections = reportSections(loaded, profile !== undefined, baselineStacks !== null);
    const html = renderReport({
      title: request.title ?? `flameox report · ${candidate.label}`,
      subtitle: [
        `runs ${candidate.runIds.join(", ")}`,
        baseline ? `baseline ${baseline.label} (runs ${baseline.runIds.join(", ")})` : null,
        loaded.unit ? `unit ${loaded.unit}` : null,
      ]
        .filter(Boolean)
        .join(" · "),
      generated_at: new Date().toISOString(),
      ...(profile ? { profile } : {}),
      ...(profile && baselineStacks ? { baseline: baselineStacks } : {}),
      ...(loaded.unit ? { unit: loaded.unit } : {}),
      ...(loaded.traceEvents.length > 0 ? { trace_events: loaded.traceEvents } : {}),
      ...(loaded.slowest.length > 0 ? { slowest_tests: loaded.slowest } : {}),
      ...(loaded.allocators.length > 0 ? { top_allocators: loaded.allocators } : {}),
    });
    return {
      html,
      summary: {
        schema_version: 1,
        targets: request.targets,
        baseline: request.baseline,
        run_ids: candidate.runIds,
        baseline_run_ids: baseline?.runIds ?? null,
        unit: loaded.unit,
        sections,
        // Merged in DuckDB per path and unit, so every row is one distinct stack.
        distinct_stacks: loaded.stacks.length,
        total_weight: loaded.stacks.reduce((sum, stack) => sum + stack.weight, 0),
      },
    };
  }

  /** The baseline's stacks in the candidate's unit, for the differential flame graph; none in that unit is an error. */
  private loadBaseline(baseline: EvidenceSelection, unit: StackUnit, groupBy: "function" | "line") {
    return this.withSelection(baseline, async (view) => {
      const stacks = await loadMergedStacks(view, { unit, byThread: false });
      if (stacks.length === 0) {
        const units = await stackUnits(view);
        throw comparisonInvalid(
          `The baseline ${baseline.label} has no stacks in ${unit}${units.length > 0 ? ` (it has ${units.map((entry) => entry.unit).join(", ")})` : ""}; a differential flame graph needs both sides in one unit.`,
          { remediation: ["Pick a baseline profiled the same way, or pass --unit with a unit both sides have."] },
        );
      }
      return regroup(await loadFrames(view), stacks, groupBy);
    });
  }

  /** The bounded static SVG flame graph of a run's (or artifact's) stacks. */
  async flameGraphSvg(
    runOrArtifact: string,
    options: { unit?: StackUnit | null; maxNodes?: number; width?: number; groupBy?: "function" | "line" } = {},
  ): Promise<string> {
    const selection = this.select([runOrArtifact]);
    if (!hasStacks(selection.bundles)) throw this.noStacks(selection, "a flame graph");
    return this.withSelection(selection, async (view) => {
      const units = await stackUnits(view);
      const unit = chooseUnit(units, options.unit ?? null);
      if (!unit) throw this.noStacks(selection, "a flame graph");
      const { frames, stacks } = regroup(
        await loadFrames(view),
        await loadMergedStacks(view, { unit, byThread: false }),
        options.groupBy ?? "function",
      );
      const tree = buildCallTree({ frames, stacks }, { unit });
      return renderFlameGraphSvg(tree, {
        title: `Flame graph · ${runOrArtifact} · ${unit}`,
        maxNodes: options.maxNodes ?? 1500,
        minFrameWidth: 1,
        width: options.width ?? 1200,
      }).svg;
    });
  }

  /** Writes one standard file of a run's or artifact's evidence. */
  async export(request: ExportRequest, output: string): Promise<ExportResult> {
    if (!exportFormats.includes(request.format)) {
      throw invalidArguments("export", [{ field: "format", message: `must be one of ${exportFormats.join(", ")}`, type: "value_error" }]);
    }
    const path = checkOutputPath(output, "export");
    const selection = this.select([request.target]);
    return this.withSelection(selection, async (view) => {
      const units = await stackUnits(view);
      const base = { schema_version: 1 as const, format: request.format, target: request.target, run_ids: selection.runIds };
      // Recorded trace events are the real timeline; a flame chart synthesized from stacks is the fallback.
      if (request.format === "chrome" && hasTraceEvents(selection.bundles) && (request.unit === null || units.length === 0)) {
        const events = await loadTraceEvents(view, false);
        const summary = await writeChromeTrace(path, { trace_events: events });
        return { ...base, path: summary.path, bytes: summary.bytes, unit: null, source: "trace_events" as const };
      }
      if (units.length === 0) throw this.noStacks(selection, `a ${request.format} export`);
      const singleUnitFormat = request.format !== "speedscope";
      // Formats with one unit per file take the preferred one unless told; speedscope keeps every unit as its own profile.
      const unit = request.unit ?? (singleUnitFormat || units.length === 1 ? chooseUnit(units, null) : null);
      if (request.unit !== null && !units.some((entry) => entry.unit === request.unit)) {
        throw invalidArguments("export", [
          {
            field: "unit",
            message: `no stacks in ${request.unit}; available: ${units.map((entry) => entry.unit).join(", ")}`,
            type: "value_error",
          },
        ]);
      }
      if (request.format === "chrome" && (unit === "bytes" || unit === "retained_bytes")) {
        throw invalidArguments(
          "export",
          [{ field: "format", message: "byte-weighted stacks have no duration to lay out on a timeline", type: "unsupported_unit" }],
          ["Export memory profiles as speedscope or pprof."],
        );
      }
      const stacks = await loadMergedStacks(view, { unit, byThread: true });
      const frames = await loadFrames(view);
      const name = `flameox ${request.target}`;
      let summary: { path: string; bytes: number };
      switch (request.format) {
        case "speedscope":
          summary = await writeSpeedscope(path, frames, stacks, { name });
          break;
        case "collapsed":
          summary = await writeCollapsed(path, frames, stacks, unit ? { unit } : {});
          break;
        case "pprof":
          summary = await writePprof(path, frames, stacks, unit ? { unit } : {});
          break;
        case "chrome":
          summary = await writeChromeTrace(path, { frames, stacks });
          break;
      }
      return { ...base, path: summary.path, bytes: summary.bytes, unit, source: "stacks" as const };
    });
  }

  /**
   * Which viewers open this evidence and the exact commands that prepare their files. Read-only:
   * it looks at what is stored and at PATH, and never starts anything.
   */
  async viewerPlan(runOrArtifact: string): Promise<ViewerPlan> {
    const selection = this.select([runOrArtifact]);
    const stacks = hasStacks(selection.bundles);
    const traces = hasTraceEvents(selection.bundles);
    const units: UnitSummary[] = stacks ? await this.withSelection(selection, (view) => stackUnits(view)) : [];
    return viewerPlanFor(runOrArtifact, selection.runIds, { stacks, traces, units: units.map((unit) => unit.unit) });
  }
}
