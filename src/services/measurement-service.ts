import { digestOf } from "../domain/canonical-json.ts";
import { artifactNotFound, needsExtraction } from "../domain/errors.ts";
import { pageLimits } from "../domain/requests/limits.ts";
import { queryMeasurementRows, type MeasurementKey, type MeasurementRecord } from "../analysis/recipes/measurements.ts";
import { type MeasurementGroup, type MeasurementSummaryQuery, summarizeMeasurements } from "../analysis/recipes/measurement-summary.ts";
import { corpusHead } from "../store/corpus.ts";
import { currentBundles } from "../store/evidence-registry.ts";
import type { WorkspaceHandle } from "../store/workspace-handle.ts";
import { available, type EvidenceStatus, maximumRows, queryCursors, registrationsOf } from "./evidence-needs.ts";
import { type EvidenceScope, limitWithin, pinEvidenceScope, scopeLimitations, withEvidence } from "./evidence-scope.ts";

export type MeasurementQueryResult = {
  schema_version: 1;
  corpus_commit_id: string;
  filters: { run_id: string | null; artifact_id: string | null; name_prefix: string | null; include_warmups: boolean };
  measurements: MeasurementRecord[];
  total: number;
  returned: number;
  truncated: boolean;
  next_cursor: string | null;
  /** What the extractions of these measurements recorded (values left out, sessions cut short). */
  limitations: string[];
  evidence: EvidenceStatus;
};

type MeasurementRequest = {
  run_id: string | null;
  artifact_id: string | null;
  name_prefix: string | null;
  include_warmups: boolean;
  /** Rows per page; pageLimits.measurements when not given. */
  limit?: number | null;
  cursor: string | null;
};

/** Which extractor turns a run's artifacts into measurements, by the kinds it registered. */
function measurementExtractor(kinds: string[]): string | null {
  if (kinds.includes("benchmark_samples")) return "extract_pyperf";
  if (kinds.includes("test_execution")) return "extract_pytest";
  if (kinds.includes("python_startup")) return "extract_python_startup";
  return null;
}

export type MeasurementSummaryResult = {
  schema_version: 1;
  run_id: string;
  corpus_commit_id: string;
  name_prefix: string;
  group_by: string | null;
  groups: MeasurementGroup[];
  total: number;
  returned: number;
  truncated: boolean;
  evidence: EvidenceStatus;
};

/** query_measurements: measurement rows by run, artifact and name prefix, keyset-paged; and per-name summaries of one run. */
export class MeasurementService {
  constructor(private readonly workspace: WorkspaceHandle) {}

  /** One run's measurements with a name prefix, summarized per name (and dimension): count, sum, mean, median, spread. */
  async summarize(
    request: { run_id: string } & Pick<MeasurementSummaryQuery, "groupBy" | "orderBy" | "limit"> & { name_prefix: string },
  ): Promise<MeasurementSummaryResult> {
    const limit = limitWithin(request.limit, maximumRows(this.workspace));
    const scope = pinEvidenceScope(this.workspace, request.run_id);
    const summary = await withEvidence(this.workspace, scope, (view) =>
      summarizeMeasurements(view, { namePrefix: request.name_prefix, groupBy: request.groupBy, orderBy: request.orderBy, limit }),
    );
    return {
      schema_version: 1,
      run_id: request.run_id,
      corpus_commit_id: scope.corpusCommitId,
      name_prefix: request.name_prefix,
      group_by: request.groupBy,
      groups: summary.groups,
      total: summary.total,
      returned: summary.groups.length,
      truncated: summary.total > summary.groups.length,
      evidence:
        summary.total > 0
          ? available("Summarized from extracted measurements (warm-ups excluded).", "query_measurements", {
              run_id: request.run_id,
              name_prefix: request.name_prefix,
            })
          : { status: "empty", reason: `No measurement name starts with '${request.name_prefix}'.`, next_tool: null, next_arguments: null },
    };
  }

  async query(request: MeasurementRequest): Promise<MeasurementQueryResult> {
    const limit = limitWithin(request.limit ?? pageLimits.measurements.default, maximumRows(this.workspace));
    const pinned = this.scope(request);
    const scope = { ...pinned, bundles: pinned.bundles.filter((bundle) => (bundle.tables.measurements ?? 0) > 0) };
    const filters = {
      run_id: request.run_id,
      artifact_id: request.artifact_id,
      name_prefix: request.name_prefix,
      include_warmups: request.include_warmups,
    };
    const cursors = queryCursors(this.workspace, "query_measurements", { ...filters });
    const after = cursors.decode(request.cursor, scope.snapshot) as { key: MeasurementKey; seen: number } | null;
    const page = await withEvidence(this.workspace, scope, (view) =>
      queryMeasurementRows(view, {
        namePrefix: request.name_prefix,
        includeWarmups: request.include_warmups,
        after: after?.key ?? null,
        limit,
      }),
    );
    const seen = (after?.seen ?? 0) + page.rows.length;
    const truncated = seen < page.total;
    return {
      schema_version: 1,
      corpus_commit_id: scope.corpusCommitId,
      filters,
      measurements: page.rows,
      total: page.total,
      returned: page.rows.length,
      truncated,
      next_cursor: truncated && page.lastKey ? cursors.encode({ key: page.lastKey, seen }, scope.snapshot) : null,
      limitations: scopeLimitations(scope),
      evidence: this.evidence(request, page.total, scope.bundles.length),
    };
  }

  /** An artifact (optionally within one run), one run, or every current bundle when neither is named. */
  private scope(request: MeasurementRequest): EvidenceScope {
    if (request.artifact_id) {
      if (!request.artifact_id.startsWith("sha256:")) throw artifactNotFound(request.artifact_id);
      const scope = pinEvidenceScope(this.workspace, request.artifact_id);
      return request.run_id
        ? { ...scope, bundles: scope.bundles.filter((bundle) => bundle.run_id === request.run_id), runIds: [request.run_id] }
        : scope;
    }
    if (request.run_id) return pinEvidenceScope(this.workspace, request.run_id);
    const database = this.workspace.state().database;
    const head = corpusHead(database);
    const bundles = currentBundles(database, { maxSequence: head.sequence });
    return {
      kind: "run",
      id: "*",
      runIds: [...new Set(bundles.map((bundle) => bundle.run_id))],
      bundles,
      snapshot: digestOf(bundles.map((bundle) => bundle.bundle_id)),
      corpusCommitId: head.commit_id,
    };
  }

  /**
   * Rows found; or a run whose artifacts are not extracted yet (an error naming the extractor); or a
   * run with no measurement evidence at all; or simply no matching name.
   */
  private evidence(request: MeasurementRequest, total: number, bundles: number): EvidenceStatus {
    if (total > 0) return available("Measurements from extracted evidence.");
    if (bundles === 0 && request.run_id) {
      const extractTool = measurementExtractor(registrationsOf(this.workspace, [request.run_id]).map((registration) => registration.kind));
      if (extractTool) {
        throw needsExtraction(
          extractTool,
          request.run_id,
          `Run ${request.run_id} has artifacts that are not extracted into measurements yet.`,
          {
            remediation: [`Call ${extractTool} with run_id='${request.run_id}', then query again.`],
          },
        );
      }
      return {
        status: "unavailable",
        reason: "The run has no measurement evidence.",
        next_tool: "get_run",
        next_arguments: { run_id: request.run_id },
      };
    }
    return {
      status: "empty",
      reason: request.name_prefix
        ? `No measurement name starts with '${request.name_prefix}'${request.include_warmups ? "" : " (warm-ups excluded)"}.`
        : "No measurements match.",
      next_tool: null,
      next_arguments: null,
    };
  }
}
