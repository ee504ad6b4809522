import { capabilityUnavailable, type FlameoxError, planRefused, runNotFound, toFlameoxError } from "../domain/errors.ts";
import { runResourceUri } from "../domain/resource-uris.ts";
import { processLiveness } from "../exec/identity.ts";
import { readRun } from "../store/run-store.ts";
import type { CaptureService, ConsumedPlan } from "./capture-service.ts";
import type { DetachedCaptureStore } from "../store/detached-capture-store.ts";
import type { PlanTokenStore } from "../store/plan-tokens.ts";
import type { WorkspaceHandle } from "../store/workspace-handle.ts";
import type { ReceiptAnalysis, ReceiptAnalysisService } from "./receipt-analysis.ts";

export type DetachedCaptureStatus = {
  schema_version: 1;
  run_id: string;
  state: "starting" | "running" | "terminal" | "failed_to_start" | "unmanaged_after_restart";
  execution_status: string | null;
  capture_status: string | null;
  validation_status: string | null;
  artifact_count: number;
  progress: { completed: number; total: number; message: string; observed_at: string }[];
  failure_code: string | null;
  failure_message: string | null;
  resource_uri: string;
  /** When terminal: the adapter's default analysis of the run, as execute_capture_plan returns it; null before. */
  analysis: ReceiptAnalysis | null;
  next_tool: string;
  next_arguments: Record<string, unknown>;
};

type Operation = {
  runId: string;
  controller: AbortController;
  progress: DetachedCaptureStatus["progress"];
  done: Promise<void>;
  failure: FlameoxError | null;
};

/** Captures this server process owns; they outlive the request that started them, not the process. */
const operations = new Map<string, Operation>();

/**
 * Long captures without holding an MCP request open. The idempotency key is durable (SQLite): the
 * same key and plan reconnect to the same run, even after a restart; the same key with another
 * plan is refused, so a retried start never runs a workload twice.
 */
export class DetachedCaptureService {
  constructor(
    private readonly workspace: WorkspaceHandle,
    private readonly captures: CaptureService,
    private readonly plans: PlanTokenStore<"capture", ConsumedPlan>,
    private readonly detached: DetachedCaptureStore,
    private readonly receipts: ReceiptAnalysisService,
  ) {}

  async start(request: { plan_id: string; idempotency_key: string }): Promise<DetachedCaptureStatus> {
    const planDigest = this.plans.digest(request.plan_id);
    const existing = this.detached.find(request.idempotency_key);
    if (existing) {
      if (existing.plan_id !== planDigest) {
        throw planRefused("capture", "This idempotency key already started a capture of a different plan.", {
          details: { idempotency_key: request.idempotency_key, run_id: existing.run_id },
          remediation: ["Use a new idempotency key for a new plan, or call get_detached_capture for the existing run."],
          next: { tool: "get_detached_capture", arguments: { run_id: existing.run_id } },
        });
      }
      return this.status(existing.run_id);
    }
    const intent = await this.captures.consumeAndRecheck(request.plan_id);
    this.detached.insert(request.idempotency_key, { plan_id: planDigest, run_id: intent.run_id }, new Date().toISOString());
    const operation: Operation = {
      runId: intent.run_id,
      controller: new AbortController(),
      progress: [],
      done: Promise.resolve(),
      failure: null,
    };
    operation.done = this.captures
      .executeIntent(intent, {
        signal: operation.controller.signal,
        progress: (completed, total, message) => {
          operation.progress.push({ completed, total, message, observed_at: new Date().toISOString() });
          if (operation.progress.length > 16) operation.progress.shift();
        },
      })
      .then(
        () => undefined,
        (error: unknown) => {
          // The run records its own terminal state; the failure is kept for status calls.
          operation.failure = toFlameoxError(error);
        },
      );
    operations.set(intent.run_id, operation);
    return this.status(intent.run_id);
  }

  /** The status, and once terminal the run's default analysis with the step that follows from it. */
  async status(runId: string): Promise<DetachedCaptureStatus> {
    const status = this.currentStatus(runId);
    const run = status.state === "terminal" ? readRun(this.workspace.open().state.database, runId) : null;
    if (!run) return status;
    const { analysis, next } = await this.receipts.analyze(run);
    return { ...status, analysis, next_tool: next.tool, next_arguments: next.arguments };
  }

  private currentStatus(runId: string): DetachedCaptureStatus {
    const run = readRun(this.workspace.open().state.database, runId);
    const operation = operations.get(runId);
    if (!run && !operation) throw runNotFound(runId);
    const execution = run?.execution_status ?? null;
    const terminal = execution !== null && !["planned", "running"].includes(execution);
    let state: DetachedCaptureStatus["state"];
    if (terminal) state = "terminal";
    else if (!run) state = operation?.failure ? "failed_to_start" : "starting";
    else if (operation) state = "running";
    else
      state = run.lease && processLiveness(run.lease.pid, run.lease.process_start_time) === "alive" ? "running" : "unmanaged_after_restart";
    const failure: { code: string; message: string } | null = operation?.failure ?? run?.failure ?? null;
    return {
      schema_version: 1,
      run_id: runId,
      state,
      execution_status: execution,
      capture_status: run?.capture_status ?? null,
      validation_status: run?.validation_status ?? null,
      artifact_count: run?.artifacts.length ?? 0,
      progress: operation ? [...operation.progress] : [],
      failure_code: failure?.code ?? null,
      failure_message: failure?.message ?? null,
      resource_uri: runResourceUri(runId),
      analysis: null,
      next_tool: state === "terminal" ? "get_run" : state === "unmanaged_after_restart" ? "list_runs" : "get_detached_capture",
      next_arguments:
        state !== "unmanaged_after_restart"
          ? { run_id: runId }
          : run?.workload_name
            ? { filter: { workload_name: run.workload_name } }
            : {},
    };
  }

  /** Kills the tree and waits for the cancelled run to be recorded; a finished run is returned as is. */
  async cancel(runId: string): Promise<DetachedCaptureStatus> {
    const current = this.currentStatus(runId);
    if (current.state === "terminal") return this.status(runId);
    const operation = operations.get(runId);
    if (!operation) {
      throw capabilityUnavailable(`Detached capture ${runId} is not owned by this server process.`, {
        runId,
        details: { run_id: runId, state: current.state },
        remediation: ["Only the server that started a detached capture can cancel it; after a restart run `flameox recover` to close it."],
        next: { tool: "get_detached_capture", arguments: { run_id: runId } },
      });
    }
    operation.controller.abort();
    await operation.done;
    return this.status(runId);
  }
}

/** Server shutdown: cancel what this process owns and wait for the runs to be recorded. */
export async function cancelAllDetachedCaptures(): Promise<void> {
  const pending = [...operations.values()];
  for (const operation of pending) operation.controller.abort();
  await Promise.all(pending.map((operation) => operation.done));
}
