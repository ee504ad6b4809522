import { corpusHead } from "../store/corpus.ts";
import { currentBundles } from "../store/evidence-registry.ts";
import { readRun, type RunFilter, type RunManifest } from "../store/run-store.ts";
import {
  errorLine,
  errorSignature,
  type FailureReport,
  failedTests,
  failureReports,
  type ReportFrame,
} from "../analysis/recipes/failures.ts";
import { type SlowTest, slowestTests, testOutcomeCounts } from "../analysis/recipes/test-outcomes.ts";
import type { WorkspaceHandle } from "../store/workspace-handle.ts";
import { available, type EvidenceStatus, maximumRows } from "./evidence-needs.ts";
import { limitWithin, pinEvidenceScope, withBundles, withEvidence } from "./evidence-scope.ts";
import type { RunService } from "./run-service.ts";

export type FailureCluster = {
  signature: string;
  /** report: a failure read from an imported log (sanitizer report, Python traceback). */
  source: "test" | "run" | "report";
  count: number;
  run_count: number;
  run_ids: string[];
  /**
   * `location`: where a crashed run's exception was raised (innermost frame), `file:line in function`;
   * error_kind and the innermost frames (at most 5) are set for failures read from logs (source report).
   */
  examples: {
    run_id: string;
    subject: string;
    message: string | null;
    location: string | null;
    error_kind?: string;
    frames?: ReportFrame[];
  }[];
  first_seen_at: string | null;
  last_seen_at: string | null;
};
export type TestOutcomesResult = {
  schema_version: 1;
  run_id: string;
  corpus_commit_id: string;
  counts: Record<string, number>;
  /** Failed, errored and crashed tests, with the line of their message that says what went wrong. */
  failures: { nodeid: string; outcome: string; message: string | null }[];
  failure_total: number;
  slowest: SlowTest[];
  evidence: EvidenceStatus;
};

export type FailureAnalysisResult = {
  schema_version: 1;
  corpus_commit_id: string;
  runs_examined: number;
  failed_runs: number;
  clusters: FailureCluster[];
  total: number;
  returned: number;
  truncated: boolean;
  evidence: EvidenceStatus;
};

/** Failures grouped by a key; each cluster counts occurrences and runs and keeps a few examples. */
class FailureClusters {
  private readonly clusters = new Map<string, FailureCluster>();

  add(
    key: string,
    cluster: { source: FailureCluster["source"]; signature: string },
    example: {
      runId: string;
      subject: string;
      message: string | null;
      at: string | null;
      location?: string | null;
      report?: Pick<FailureReport, "error_kind" | "frames">;
    },
  ): void {
    const { at } = example;
    const entry = this.clusters.get(key) ?? {
      signature: cluster.signature,
      source: cluster.source,
      count: 0,
      run_count: 0,
      run_ids: [],
      examples: [],
      first_seen_at: at,
      last_seen_at: at,
    };
    entry.count += 1;
    if (!entry.run_ids.includes(example.runId)) entry.run_ids.push(example.runId);
    entry.run_count = entry.run_ids.length;
    if (entry.examples.length < 5)
      entry.examples.push({
        run_id: example.runId,
        subject: example.subject,
        message: example.message?.slice(0, 500) ?? null,
        location: example.location ?? null,
        ...(example.report ? { error_kind: example.report.error_kind, frames: example.report.frames.slice(0, 5) } : {}),
      });
    if (at && (!entry.first_seen_at || at < entry.first_seen_at)) entry.first_seen_at = at;
    if (at && (!entry.last_seen_at || at > entry.last_seen_at)) entry.last_seen_at = at;
    this.clusters.set(key, entry);
  }

  /** Largest first; ties by run count, then signature, so the order is total. */
  ordered(): FailureCluster[] {
    return [...this.clusters.values()].sort(
      (left, right) => right.count - left.count || right.run_count - left.run_count || left.signature.localeCompare(right.signature),
    );
  }
}

function isFailedRun(run: RunManifest): boolean {
  return ["failed", "timed_out", "cancelled"].includes(run.execution_status) || run.capture_status === "failed";
}

/** What ended a failed run: timeout, cancellation, a typed failure (its message normalized), a signal or an exit status. */
function runSignature(run: RunManifest): string {
  const process = (run.process ?? {}) as Record<string, unknown>;
  if (run.execution_status === "timed_out") return "timed out";
  if (run.execution_status === "cancelled") return "cancelled";
  if (run.failure) return `${run.failure.code}: ${errorSignature(run.failure.message)}`;
  if (run.exception) return `${run.exception.exception_type}: ${errorSignature(run.exception.message || null)}`;
  if (process.terminating_signal) return `killed by ${String(process.terminating_signal)}`;
  if (process.exit_code !== undefined && process.exit_code !== null) return `exit ${String(process.exit_code)}`;
  return `capture ${run.capture_status}`;
}

/** A run's failure message: its typed failure, else the exception it died of and where. */
function crashOf(run: RunManifest): { message: string | null; location: string | null } {
  if (run.failure) return { message: run.failure.message, location: null };
  const exception = run.exception;
  if (!exception) return { message: null, location: null };
  const frame = exception.frames.at(-1);
  return {
    message: `${exception.exception_type}${exception.message ? `: ${exception.message}` : ""}`,
    location: frame ? `${frame.file}:${frame.line ?? "?"} in ${frame.function}` : null,
  };
}

function failureEvidence(examined: number, clusters: number): EvidenceStatus {
  if (examined === 0)
    return { status: "empty", reason: "No runs match the filter.", next_tool: "list_runs", next_arguments: { limit: 20 } };
  if (clusters === 0)
    return {
      status: "empty",
      reason: `None of ${examined} run(s) failed, no extracted test outcome failed and no imported log holds a failure.`,
      next_tool: null,
      next_arguments: null,
    };
  return available(`Clustered by error signature across ${examined} run(s), their extracted test outcomes and imported failure logs.`);
}

/** A log's failure joins the cluster of its tool, kind and innermost named function; the subject says where it happened. */
function addReport(clusters: FailureClusters, report: FailureReport, at: string | null): void {
  const place = report.frames.find((frame) => frame.file !== null && frame.line !== null) ?? report.frames[0];
  const where = place?.function ?? null;
  const signature = `${report.tool}: ${report.error_kind}${where ? ` in ${where}` : ""}`;
  const subject = place
    ? `${place.file ?? place.module ?? "?"}${place.line !== null ? `:${place.line}` : ""}${where ? ` in ${where}` : ""}`
    : report.tool;
  clusters.add(
    `report\u0000${signature}`,
    { source: "report", signature },
    { runId: report.run_id, subject, message: report.message, at, location: place ? subject : null, report },
  );
}

/** analyze_failures: failed, timed-out and cancelled runs and failed tests, clustered by signature. */
export class FailureAnalysisService {
  constructor(
    private readonly workspace: WorkspaceHandle,
    private readonly runs: RunService,
  ) {}

  async analyze(
    request: { limit: number; filter: RunFilter | null },
    progress?: (step: number, message: string) => Promise<void>,
  ): Promise<FailureAnalysisResult> {
    const limit = limitWithin(request.limit, maximumRows(this.workspace));
    const database = this.workspace.state().database;
    const head = corpusHead(database);
    const manifests = this.matchingRuns(request.filter);
    await progress?.(1, `Examined ${manifests.length} runs`);
    const clusters = new FailureClusters();
    const failed = manifests.filter(isFailedRun);
    for (const run of failed) {
      const signature = runSignature(run);
      clusters.add(
        `run\u0000${run.workload_name ?? ""}\u0000${run.adapter ?? ""}\u0000${signature}`,
        { source: "run", signature: `${run.workload_name ?? "import"}${run.adapter ? ` (${run.adapter})` : ""}: ${signature}` },
        { runId: run.run_id, subject: run.workload_name ?? run.run_id, at: run.created_at, ...crashOf(run) },
      );
    }
    await this.addEvidenceFailures(clusters, head.sequence, new Map(manifests.map((run) => [run.run_id, run.created_at])));
    const ordered = clusters.ordered();
    return {
      schema_version: 1,
      corpus_commit_id: head.commit_id,
      runs_examined: manifests.length,
      failed_runs: failed.length,
      clusters: ordered.slice(0, limit),
      total: ordered.length,
      returned: Math.min(limit, ordered.length),
      truncated: ordered.length > limit,
      evidence: failureEvidence(manifests.length, ordered.length),
    };
  }

  /** One run's pytest outcomes: counts, the failures (first `limit`) and the `limit` slowest tests. */
  async testOutcomes(request: { run_id: string; limit: number }): Promise<TestOutcomesResult> {
    const limit = limitWithin(request.limit, maximumRows(this.workspace));
    const scope = pinEvidenceScope(this.workspace, request.run_id);
    const outcome = await withEvidence(this.workspace, scope, async (view) => ({
      counts: await testOutcomeCounts(view),
      failures: await failedTests(view),
      slowest: await slowestTests(view, limit),
    }));
    const tests = Object.values(outcome.counts).reduce((sum, count) => sum + count, 0);
    return {
      schema_version: 1,
      run_id: request.run_id,
      corpus_commit_id: scope.corpusCommitId,
      counts: outcome.counts,
      failures: outcome.failures.slice(0, limit).map((failure) => ({
        nodeid: failure.nodeid,
        outcome: failure.outcome,
        message: failure.message ? errorLine(failure.message).slice(0, 300) : null,
      })),
      failure_total: outcome.failures.length,
      slowest: outcome.slowest,
      evidence:
        tests === 0
          ? { status: "empty", reason: "The run has no extracted test outcomes.", next_tool: null, next_arguments: null }
          : available(`${tests} test outcome(s) from the pytest event stream.`),
    };
  }

  /** The runs list_runs would return for the filter, at most 10,000 (newest first). */
  private matchingRuns(filter: RunFilter | null): RunManifest[] {
    const database = this.workspace.state().database;
    const runIds: string[] = [];
    let cursor: string | null = null;
    do {
      const page = this.runs.listRuns({ limit: 1000, filter, cursor });
      runIds.push(...page.runs.map((run) => run.run_id));
      cursor = page.next_cursor;
    } while (cursor && runIds.length < 10_000);
    return runIds.map((runId) => readRun(database, runId)).filter((run): run is RunManifest => run !== null);
  }

  /**
   * Failed, errored and crashed tests from the runs' extracted pytest outcomes, clustered by
   * normalized message; failures read from imported logs, clustered by tool, kind of error and the
   * function they happened in.
   */
  private async addEvidenceFailures(clusters: FailureClusters, sequence: number, createdAt: Map<string, string>): Promise<void> {
    const bundles = currentBundles(this.workspace.state().database, { maxSequence: sequence }).filter(
      (bundle) => createdAt.has(bundle.run_id) && (bundle.tables.observations ?? 0) > 0,
    );
    if (bundles.length === 0) return;
    await withBundles(
      this.workspace,
      bundles.map((bundle) => bundle.bundle_id),
      async (view) => {
        for (const failure of await failedTests(view)) {
          const signature = `${failure.outcome}: ${errorSignature(failure.message)}`;
          clusters.add(
            `test\u0000${signature}`,
            { source: "test", signature },
            { runId: failure.run_id, subject: failure.nodeid, message: failure.message, at: createdAt.get(failure.run_id) ?? null },
          );
        }
        for (const report of await failureReports(view)) addReport(clusters, report, createdAt.get(report.run_id) ?? null);
      },
    );
  }
}
