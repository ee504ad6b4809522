import { digestOf } from "../domain/canonical-json.ts";
import { decodeCursor, encodeCursor } from "../domain/cursor.ts";
import { capabilityUnavailable, invalidInput } from "../domain/errors.ts";
import type { StackUnit } from "../domain/evidence.ts";
import {
  chooseUnit,
  frameStackUnits,
  queryCallEdges,
  queryHotspots,
  queryStackExamples,
  resolveFrame,
  stackUnits,
  type CallEdge,
  type FrameIdentity,
  type Hotspot,
  type HotspotGrouping,
  type HotspotPage,
  type StackExample,
  type TimeDomain,
  type UnitSummary,
} from "../analysis/hotspots.ts";
import { type RecordedStacks, recordedHotspots, recordedStackUnits } from "../analysis/hotspots-in-memory.ts";
import type { EvidenceView } from "../store/evidence-query.ts";
import { readRun } from "../store/run-store.ts";
import { offsetPage, pageEvidence } from "./evidence-needs.ts";
import { limitWithin, pinEvidenceScope, scopeLimitations, withEvidence, type EvidenceScope } from "./evidence-scope.ts";
import { loadWorkspacePolicy } from "../config/workspace-policy.ts";
import { flameGraphResourceUri } from "../domain/resource-uris.ts";
import type { WorkspaceHandle } from "../store/workspace-handle.ts";

/** Extractors whose bundles are stack evidence even when the profile held no samples. */
const stackExtractors = new Set(["profile", "py-spy", "perf", "memray"]);

export type EvidenceStatus = {
  status: "available" | "empty" | "unavailable" | "partial" | "unknown";
  reason: string;
  next_tool: string | null;
  next_arguments: Record<string, unknown> | null;
};

export type HotspotResult = {
  schema_version: 1;
  run_or_artifact: string;
  corpus_commit_id: string;
  group_by: HotspotGrouping;
  order_by: "self" | "total";
  unit: StackUnit | null;
  units_available: UnitSummary[];
  thread: string | null;
  per_thread: boolean;
  total_weight: number;
  /** When the ranking holds accelerator time: each domain's total, the denominator of its rows' shares. */
  domain_totals: Record<TimeDomain, number> | null;
  hotspots: Hotspot[];
  total: number;
  returned: number;
  truncated: boolean;
  /** Share of all self weight that lies in hotspots this page and the earlier ones did not show. */
  hidden_self_share: number;
  next_cursor: string | null;
  flamegraph_uri: string | null;
  /** What the extractions of the ranked evidence recorded (values left out, clamped, missing). */
  limitations: string[];
  evidence: EvidenceStatus;
};

export type HotspotRequest = {
  run_or_artifact: string;
  limit: number;
  group_by: HotspotGrouping;
  order_by: "self" | "total";
  unit: StackUnit | null;
  thread: string | null;
  per_thread: boolean;
  cursor: string | null;
};

/** The first answer about a profile: functions by self weight over all threads, first page. */
export function defaultHotspotRequest(runOrArtifact: string, limit: number): HotspotRequest {
  return {
    run_or_artifact: runOrArtifact,
    limit,
    group_by: "function",
    order_by: "self",
    unit: null,
    thread: null,
    per_thread: false,
    cursor: null,
  };
}

export type CallEdgeResult = {
  schema_version: 1;
  run_or_artifact: string;
  corpus_commit_id: string;
  frame: FrameIdentity;
  direction: "callers" | "callees";
  unit: StackUnit;
  frame_weight: number;
  edges: CallEdge[];
  total: number;
  returned: number;
  truncated: boolean;
  next_cursor: string | null;
  evidence: EvidenceStatus;
};

export type StackExamplesResult = {
  schema_version: 1;
  run_or_artifact: string;
  corpus_commit_id: string;
  frame: FrameIdentity;
  unit: StackUnit;
  examples: StackExample[];
  total: number;
  returned: number;
  truncated: boolean;
  next_cursor: string | null;
  evidence: EvidenceStatus;
};

/** get_frame_callers, get_frame_callees and get_stack_examples: one page about one frame of a run or artifact. */
type FramePageRequest = {
  run_or_artifact: string;
  frame_id: string;
  limit: number;
  cursor: string | null;
  unit: StackUnit | null;
  thread: string | null;
};

export class AnalysisService {
  constructor(private readonly workspace: WorkspaceHandle) {}

  private maximumRows(): number {
    return loadWorkspacePolicy(this.workspace.open().root).limits.max_row_limit;
  }

  /** Pins the evidence, checks the limit and decodes the cursor, which binds the exact query and bundle set. */
  private pinPage(query: string, request: { run_or_artifact: string; limit: number; cursor: string | null }) {
    const limit = limitWithin(request.limit, this.maximumRows());
    const scope = pinEvidenceScope(this.workspace, request.run_or_artifact);
    this.requireStacks(scope);
    const scopeDigest = digestOf({ query, ...request, cursor: null, limit });
    const secret = this.workspace.open().cursorSecret();
    const offset = request.cursor ? (decodeCursor(secret, request.cursor, { scope: scopeDigest, snapshot: scope.snapshot }) as number) : 0;
    const nextCursor = (position: number) => encodeCursor(secret, { scope: scopeDigest, snapshot: scope.snapshot, position });
    return { limit, scope, offset, nextCursor };
  }

  /** No stack evidence is a typed answer naming how to get it, never an empty success. */
  private requireStacks(scope: EvidenceScope): void {
    if (scope.bundles.some((bundle) => bundle.tables.stacks !== undefined || stackExtractors.has(bundle.extractor))) return;
    const run = scope.kind === "run" ? readRun(this.workspace.open().state.database, scope.id) : null;
    const nextArguments = run?.workload_name ? { workload_name: run.workload_name, adapter: "py-spy", parameters: run.parameters } : null;
    throw capabilityUnavailable(`${scope.kind === "run" ? "Run" : "Artifact"} ${scope.id} has no stack samples to rank.`, {
      details: { next_tool: nextArguments ? "plan_capture" : "import_artifact", run_or_artifact: scope.id, adapter: run?.adapter ?? null },
      remediation: [
        nextArguments
          ? "Capture the workload with a sampling adapter (py-spy or perf): call plan_capture with the arguments in recovery."
          : "Import a profile (speedscope, collapsed, pprof, .cpuprofile, Chrome trace) with import_artifact.",
      ],
      next: nextArguments ? { tool: "plan_capture", arguments: nextArguments } : { tool: "import_artifact" },
    });
  }

  /**
   * `recorded`, when given, returns the rows an extraction of this process still holds for exactly these
   * bundles (a capture's first answer): the default question is then answered from them without a query.
   */
  async hotspots(request: HotspotRequest, recorded?: (bundleIds: string[]) => RecordedStacks | null): Promise<HotspotResult> {
    const { limit, scope, offset, nextCursor } = this.pinPage("analyze_hotspots", request);
    const rows = recorded && isDefaultQuestion(request) ? recorded(scope.bundles.map((bundle) => bundle.bundle_id)) : null;
    const fromRows = rows ? hotspotsFromRows(rows, request.unit, { offset, limit }) : null;
    if (fromRows) return this.hotspotResult(request, scope, fromRows, nextCursor, offset);
    return withEvidence(this.workspace, scope, async (view) => {
      const units = await stackUnits(view);
      const unit = chooseUnit(units, request.unit);
      const page = unit
        ? await queryHotspots(
            view,
            { groupBy: request.group_by, unit, thread: request.thread, perThread: request.per_thread, orderBy: request.order_by },
            { offset, limit },
          )
        : null;
      return this.hotspotResult(request, scope, { units, unit, page }, nextCursor, offset);
    });
  }

  private hotspotResult(
    request: HotspotRequest,
    scope: EvidenceScope,
    { units, unit, page }: { units: UnitSummary[]; unit: StackUnit | null; page: HotspotPage | null },
    nextCursor: (position: number) => string,
    offset: number,
  ): HotspotResult {
    const base = {
      schema_version: 1 as const,
      run_or_artifact: request.run_or_artifact,
      corpus_commit_id: scope.corpusCommitId,
      group_by: request.group_by,
      order_by: request.order_by,
      units_available: units,
      thread: request.thread,
      per_thread: request.per_thread,
      flamegraph_uri: scope.kind === "run" ? flameGraphResourceUri(scope.id) : null,
      limitations: scopeLimitations(scope),
    };
    if (!unit || !page) {
      const requestedMissing = request.unit !== null && units.length > 0;
      return {
        ...base,
        unit: null,
        total_weight: 0,
        domain_totals: null,
        hotspots: [],
        total: 0,
        returned: 0,
        truncated: false,
        hidden_self_share: 0,
        next_cursor: null,
        evidence: requestedMissing
          ? {
              status: "unavailable",
              reason: `No stacks in unit ${request.unit}; available: ${units.map((entry) => entry.unit).join(", ")}.`,
              next_tool: "analyze_hotspots",
              next_arguments: { run_or_artifact: request.run_or_artifact, unit: units[0]!.unit },
            }
          : { status: "empty", reason: "The extracted profile holds no samples.", next_tool: null, next_arguments: null },
      };
    }
    const truncated = offset + page.hotspots.length < page.total;
    return {
      ...base,
      unit,
      total_weight: page.total_weight,
      domain_totals: page.domain_totals,
      hotspots: page.hotspots,
      total: page.total,
      returned: page.hotspots.length,
      truncated,
      hidden_self_share: page.hidden_self_share,
      next_cursor: truncated ? nextCursor(offset + page.hotspots.length) : null,
      evidence:
        page.total === 0
          ? {
              status: "empty",
              reason: request.thread ? `No samples on thread ${request.thread}.` : "The extracted profile holds no samples.",
              next_tool: null,
              next_arguments: null,
            }
          : {
              status: "available",
              reason: page.domain_totals
                ? "Ranked from extracted stack samples; CPU and accelerator time each have their own denominator (time_domain, domain_totals)."
                : "Ranked from extracted stack samples.",
              next_tool: "get_frame_callers",
              next_arguments: { run_or_artifact: request.run_or_artifact, frame_id: page.hotspots[0]?.frame_id ?? null },
            },
    };
  }

  async callEdges(request: FramePageRequest, direction: "callers" | "callees"): Promise<CallEdgeResult> {
    return this.framePage(`get_frame_${direction}`, request, async ({ view, frame, unit, scope, offset, limit, nextCursor }) => {
      const result = await queryCallEdges(
        view,
        { frameId: request.frame_id, groupBy: frame.groupBy, direction: direction === "callers" ? -1 : 1, unit, thread: request.thread },
        { offset, limit },
      );
      return {
        schema_version: 1,
        run_or_artifact: request.run_or_artifact,
        corpus_commit_id: scope.corpusCommitId,
        frame: frame.identity,
        direction,
        unit,
        frame_weight: result.frame_weight,
        edges: result.edges,
        ...offsetPage(offset, result.edges.length, result.total, nextCursor),
        evidence: pageEvidence(result.total, "The frame has no samples in this unit or thread.", "From extracted stack samples."),
      };
    });
  }

  async stackExamples(request: FramePageRequest): Promise<StackExamplesResult> {
    return this.framePage("get_stack_examples", request, async ({ view, frame, unit, scope, offset, limit, nextCursor }) => {
      const result = await queryStackExamples(
        view,
        { frameId: request.frame_id, groupBy: frame.groupBy, unit, thread: request.thread },
        { offset, limit },
      );
      return {
        schema_version: 1,
        run_or_artifact: request.run_or_artifact,
        corpus_commit_id: scope.corpusCommitId,
        frame: frame.identity,
        unit,
        examples: result.examples,
        ...offsetPage(offset, result.examples.length, result.total, nextCursor),
        evidence: pageEvidence(result.total, "No stacks contain the frame in this unit or thread.", "From extracted stack samples."),
      };
    });
  }

  /** A page about one frame: the pinned page, then the frame and the unit it is read in, handed to `read`. */
  private framePage<T>(
    query: string,
    request: FramePageRequest,
    read: (
      page: ReturnType<AnalysisService["pinPage"]> & { view: EvidenceView } & Awaited<ReturnType<AnalysisService["frameAndUnit"]>>,
    ) => Promise<T>,
  ): Promise<T> {
    const page = this.pinPage(query, request);
    return withEvidence(this.workspace, page.scope, async (view) => {
      const { frame, unit } = await this.frameAndUnit(view, request.frame_id, request.unit, request.run_or_artifact);
      return read({ ...page, view, frame, unit });
    });
  }

  private async frameAndUnit(view: EvidenceView, frameId: string, requestedUnit: StackUnit | null, runOrArtifact: string) {
    const frame = await resolveFrame(view, frameId);
    if (!frame) {
      throw invalidInput(
        `Frame ${frameId} does not occur in ${runOrArtifact}.`,
        [{ field: "frame_id", message: "does not occur in this run or artifact", type: "value_error" }],
        {
          details: { next_tool: "analyze_hotspots", frame_id: frameId },
          remediation: ["Take frame_id values from analyze_hotspots for the same run or artifact."],
          next: { tool: "analyze_hotspots", arguments: { run_or_artifact: runOrArtifact, limit: 20 } },
        },
      );
    }
    const unit =
      requestedUnit === null
        ? (chooseUnit(await frameStackUnits(view, frameId, frame.groupBy), null) ?? chooseUnit(await stackUnits(view), null))
        : chooseUnit(await stackUnits(view), requestedUnit);
    if (!unit) {
      throw invalidInput(
        `No stacks in unit ${requestedUnit ?? "(any)"} for ${runOrArtifact}.`,
        [{ field: "unit", message: "No stacks in this unit.", type: "value_error" }],
        { remediation: ["Omit unit, or pass one listed in analyze_hotspots' units_available."] },
      );
    }
    return { frame, unit };
  }
}

/** The question the recorded rows can answer: functions by self weight over every thread. */
function isDefaultQuestion(request: HotspotRequest): boolean {
  return request.group_by === "function" && request.order_by === "self" && request.thread === null && !request.per_thread;
}

/** Units, the chosen unit and its page from recorded rows; null where they cannot stand in for the query. */
function hotspotsFromRows(
  rows: RecordedStacks,
  requested: StackUnit | null,
  page: { offset: number; limit: number },
): { units: UnitSummary[]; unit: StackUnit | null; page: HotspotPage | null } | null {
  const units = recordedStackUnits(rows);
  if (!units) return null;
  const unit = chooseUnit(units, requested);
  if (!unit) return { units, unit, page: null };
  const ranked = recordedHotspots(rows, unit, page);
  return ranked ? { units, unit, page: ranked } : null;
}
