import { corpusHead } from "../store/corpus.ts";
import { currentBundles } from "../store/evidence-registry.ts";
import { readRun, type RunFilter, type RunManifest } from "../store/run-store.ts";
import { errorSignature, failedTests } from "../analysis/recipes/failures.ts";
import type { WorkspaceHandle } from "../store/workspace-handle.ts";
import { available, type EvidenceStatus, maximumRows } from "./evidence-needs.ts";
import { limitWithin } from "./evidence-scope.ts";
import type { RunService } from "./run-service.ts";

export type FailureCluster = {
  signature: string;
  source: "test" | "run";
  count: number;
  run_count: number;
  run_ids: string[];
  examples: { run_id: string; subject: string; message: string | null }[];
  first_seen_at: string | null;
  last_seen_at: string | null;
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
    const database = this.workspace.open().state.database;
    const head = corpusHead(database);
    const runIds: string[] = [];
    let cursor: string | null = null;
    do {
      const page = this.runs.listRuns({ limit: 1000, filter: request.filter, cursor });
      runIds.push(...page.runs.map((run) => run.run_id));
      cursor = page.next_cursor;
    } while (cursor && runIds.length < 10_000);
    await progress?.(1, `Examined ${runIds.length} runs`);
    const manifests = runIds.map((runId) => readRun(database, runId)).filter((run): run is RunManifest => run !== null);
    const clusters = new Map<string, FailureCluster>();
    const add = (
      key: string,
      source: "test" | "run",
      signature: string,
      runId: string,
      subject: string,
      message: string | null,
      at: string | null,
    ) => {
      const cluster = clusters.get(key) ?? {
        signature,
        source,
        count: 0,
        run_count: 0,
        run_ids: [],
        examples: [],
        first_seen_at: at,
        last_seen_at: at,
      };
      cluster.count += 1;
      if (!cluster.run_ids.includes(runId)) cluster.run_ids.push(runId);
      cluster.run_count = cluster.run_ids.length;
      if (cluster.examples.length < 5) cluster.examples.push({ run_id: runId, subject, message: message?.slice(0, 500) ?? null });
      if (at && (!cluster.first_seen_at || at < cluster.first_seen_at)) cluster.first_seen_at = at;
      if (at && (!cluster.last_seen_at || at > cluster.last_seen_at)) cluster.last_seen_at = at;
      clusters.set(key, cluster);
    };
    let failedRuns = 0;
    const createdAt = new Map(manifests.map((run) => [run.run_id, run.created_at]));
    for (const run of manifests) {
      if (!["failed", "timed_out", "cancelled"].includes(run.execution_status) && run.capture_status !== "failed") continue;
      failedRuns += 1;
      const process = (run.process ?? {}) as Record<string, unknown>;
      const signature =
        run.execution_status === "timed_out"
          ? "timed out"
          : run.execution_status === "cancelled"
            ? "cancelled"
            : run.failure
              ? `${run.failure.code}: ${errorSignature(run.failure.message)}`
              : process.terminating_signal
                ? `killed by ${String(process.terminating_signal)}`
                : process.exit_code !== undefined && process.exit_code !== null
                  ? `exit ${String(process.exit_code)}`
                  : `capture ${run.capture_status}`;
      add(
        `run\u0000${run.workload_name ?? ""}\u0000${run.adapter ?? ""}\u0000${signature}`,
        "run",
        `${run.workload_name ?? "import"}${run.adapter ? ` (${run.adapter})` : ""}: ${signature}`,
        run.run_id,
        run.workload_name ?? run.run_id,
        run.failure?.message ?? null,
        run.created_at,
      );
    }
    const bundles = currentBundles(database, { maxSequence: head.sequence }).filter(
      (bundle) => createdAt.has(bundle.run_id) && (bundle.tables.observations ?? 0) > 0,
    );
    if (bundles.length > 0) {
      const { EvidenceView } = await import("../store/evidence-query.ts");
      const view = await EvidenceView.open(
        this.workspace.open(),
        bundles.map((bundle) => bundle.bundle_id),
      );
      try {
        for (const failure of await failedTests(view)) {
          const signature = `${failure.outcome}: ${errorSignature(failure.message)}`;
          add(
            `test\u0000${signature}`,
            "test",
            signature,
            failure.run_id,
            failure.nodeid,
            failure.message,
            createdAt.get(failure.run_id) ?? null,
          );
        }
      } finally {
        view.close();
      }
    }
    const ordered = [...clusters.values()].sort(
      (left, right) => right.count - left.count || right.run_count - left.run_count || left.signature.localeCompare(right.signature),
    );
    return {
      schema_version: 1,
      corpus_commit_id: head.commit_id,
      runs_examined: manifests.length,
      failed_runs: failedRuns,
      clusters: ordered.slice(0, limit),
      total: ordered.length,
      returned: Math.min(limit, ordered.length),
      truncated: ordered.length > limit,
      evidence:
        manifests.length === 0
          ? { status: "empty", reason: "No runs match the filter.", next_tool: "list_runs", next_arguments: { limit: 20 } }
          : ordered.length === 0
            ? {
                status: "empty",
                reason: `None of ${manifests.length} run(s) failed and no extracted test outcome failed.`,
                next_tool: null,
                next_arguments: null,
              }
            : available(`Clustered by error signature across ${manifests.length} run(s) and their extracted test outcomes.`),
    };
  }
}
