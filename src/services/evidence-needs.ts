/**
 * What the analyses share: the row limit, cursors bound to a query, the evidence status of a result,
 * and — when the evidence an analysis needs is absent — the exact next step to get it.
 */
import { loadWorkspacePolicy } from "../config/workspace-policy.ts";
import { digestOf } from "../domain/canonical-json.ts";
import { decodeCursor, encodeCursor } from "../domain/cursor.ts";
import { capabilityUnavailable, type FlameoxError, needsExtraction } from "../domain/errors.ts";
import { firstRunOfArtifact, registrationsOfRuns } from "../store/artifact-registry.ts";
import { readRun, type RunManifest } from "../store/run-store.ts";
import type { WorkspaceHandle } from "../store/workspace-handle.ts";
import type { EvidenceScope } from "./evidence-scope.ts";

/** Whether a result rests on evidence, and if not, why and what to call next. An empty array alone is never a negative result. */
export type EvidenceStatus = {
  status: "available" | "empty" | "unavailable" | "partial" | "unknown";
  reason: string;
  next_tool: string | null;
  next_arguments: Record<string, unknown> | null;
};

export const available = (
  reason: string,
  nextTool: string | null = null,
  nextArguments: Record<string, unknown> | null = null,
): EvidenceStatus => ({ status: "available", reason, next_tool: nextTool, next_arguments: nextArguments });

/** Whether a page rests on samples: `empty` with the reason when there are none, else `available`. */
export const pageEvidence = (total: number, emptyReason: string, availableReason: string): EvidenceStatus =>
  total === 0 ? { status: "empty", reason: emptyReason, next_tool: null, next_arguments: null } : available(availableReason);

/** The paging fields of one offset page: how many came back, whether more remain, and the cursor to the rest. */
export function offsetPage(offset: number, returned: number, total: number, nextCursor: (position: number) => string) {
  const truncated = offset + returned < total;
  return { total, returned, truncated, next_cursor: truncated ? nextCursor(offset + returned) : null };
}

/** The evidence an analysis reads, and where it comes from: which artifact kinds, extractor, adapter and import kind. */
export type EvidenceNeed = { what: string; kinds: string[]; extractTool: string; adapter: string; importKind: string };

/** The workspace policy's max_row_limit: the largest limit any analysis accepts. */
export function maximumRows(workspace: WorkspaceHandle): number {
  return loadWorkspacePolicy(workspace.open().root).limits.max_row_limit;
}

/** The registered artifacts of the runs, for deciding which extractor or capture would provide missing evidence. */
export function registrationsOf(workspace: WorkspaceHandle, runIds: string[]) {
  return registrationsOfRuns(workspace.state().database, runIds);
}

/** The run (or the artifact's first run) behind a scope, for recovery arguments. */
export function scopeRun(workspace: WorkspaceHandle, scope: EvidenceScope): RunManifest | null {
  const database = workspace.state().database;
  if (scope.kind === "run") return readRun(database, scope.id);
  const runId = firstRunOfArtifact(database, scope.id);
  return runId ? readRun(database, runId) : null;
}

/** What to do when the evidence an analysis needs is absent: extract what is there, else capture or import. */
export function missingEvidence(workspace: WorkspaceHandle, scope: EvidenceScope, need: EvidenceNeed): FlameoxError {
  const run = scopeRun(workspace, scope);
  const runIds = scope.kind === "run" ? [scope.id] : run ? [run.run_id] : [];
  const subject = `${scope.kind === "run" ? "Run" : "Artifact"} ${scope.id}`;
  const unextracted = registrationsOf(workspace, runIds).find(
    (registration) => need.kinds.includes(registration.kind) && (scope.kind === "run" || registration.artifact_id === scope.id),
  );
  if (unextracted && run) {
    return needsExtraction(
      need.extractTool,
      run.run_id,
      `${subject} holds a ${unextracted.kind} artifact that has not been normalized into ${need.what}.`,
      {
        artifactId: unextracted.artifact_id,
        remediation: [`Call ${need.extractTool} with run_id='${run.run_id}', then repeat this analysis.`],
      },
    );
  }
  if (run?.workload_name) {
    return capabilityUnavailable(`${subject} has no ${need.what}.`, {
      details: { next_tool: "plan_capture", run_or_artifact: scope.id, adapter: need.adapter },
      remediation: [`Capture the workload with the ${need.adapter} adapter: call plan_capture with the arguments in recovery.`],
      next: { tool: "plan_capture", arguments: { workload_name: run.workload_name, adapter: need.adapter, parameters: run.parameters } },
    });
  }
  return capabilityUnavailable(`${subject} has no ${need.what}.`, {
    details: { next_tool: "import_artifact", run_or_artifact: scope.id, required_kind: need.importKind },
    remediation: [
      `Import an artifact of kind ${need.importKind} with import_artifact (then ${need.extractTool}), or capture with the ${need.adapter} adapter.`,
    ],
    next: { tool: "import_artifact", arguments: { kind: need.importKind }, callerSupplies: ["path"] },
  });
}

/** Cursors bound to one query (its name and arguments, not the cursor) and to the pinned evidence snapshot. */
export function queryCursors(workspace: WorkspaceHandle, query: string, request: Record<string, unknown>) {
  const secret = workspace.open().cursorSecret();
  const scope = digestOf({ query, ...request, cursor: null });
  return {
    decode: (cursor: string | null, snapshot: string): unknown => (cursor ? decodeCursor(secret, cursor, { scope, snapshot }) : null),
    encode: (position: unknown, snapshot: string): string =>
      encodeCursor(secret, { scope, snapshot, position } as Parameters<typeof encodeCursor>[1]),
  };
}
