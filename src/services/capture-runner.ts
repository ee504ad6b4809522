import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { inheritedEnvironment, loadWorkspacePolicy, type WorkspacePolicy } from "../config/workspace-policy.ts";
import { type FlameoxError, processCancelled, toFlameoxError } from "../domain/errors.ts";
import { type ProcessResult, runProcess } from "../exec/broker.ts";
import { bootId, environmentIdentity, processStartTime, sourceIdentity } from "../exec/identity.ts";
import { advanceCorpus } from "../store/corpus.ts";
import { crashPoint } from "../store/crash-points.ts";
import { warmBundleEngines } from "../store/evidence-bundle.ts";
import { evidenceEngine } from "../store/evidence-query.ts";
import { blankManifest, insertRun, reviseRun, type RunManifest } from "../store/run-store.ts";
import type { Workspace } from "../store/workspace.ts";
import type { WorkspaceHandle } from "../store/workspace-handle.ts";
import {
  type CaptureReceipt,
  type ConsumedPlan,
  commandView,
  runMarkerVariable,
  trustedLocalLimitation,
  trustedLocalWarning,
} from "./capture-plan.ts";
import { publishCapture } from "./capture-publication.ts";
import { defaultAnalysisOf } from "./receipt-next-step.ts";
import { bestEffortProgress, type ProgressPhase, type ProgressReporter } from "./progress.ts";
import type { StackRecording } from "./stack-recording.ts";

/** Publication's steps 6..8 by the phase each ends: extraction, registration, the whole capture. */
function publicationPhase(step: number): ProgressPhase {
  return step <= 6 ? "extracting" : step === 7 ? "publishing" : "completed";
}

/**
 * How long after the collector's process exists a capture's own background work (identity probes,
 * DuckDB's start) waits, unless the collector ends sooner: the workload's start (an interpreter, its
 * imports) has the machine to itself meanwhile.
 */
const backgroundDelayMs = 200;

/** Runs `work` once: `delayMs` after arm(), or at now() if that comes first; cancel() drops it. */
class DelayedStart {
  private timer: ReturnType<typeof setTimeout> | undefined;
  private done = false;

  constructor(private readonly work: () => void) {}

  arm(delayMs: number): void {
    if (!this.done && this.timer === undefined) this.timer = setTimeout(() => this.now(), delayMs);
  }

  /** Starts the work now if it was armed and has not started. */
  now(): void {
    if (this.done || this.timer === undefined) return;
    this.cancel();
    this.work();
  }

  cancel(): void {
    this.done = true;
    clearTimeout(this.timer);
  }
}

/** Captures running in this process; limits.max_parallel_captures bounds it. */
let activeCaptures = 0;

async function acquireSlot(maximum: number, signal?: AbortSignal): Promise<void> {
  while (activeCaptures >= maximum) {
    if (signal?.aborted)
      throw processCancelled("Cancelled while waiting for a capture slot.", { remediation: ["Plan the capture again."] });
    await Bun.sleep(50);
  }
  activeCaptures += 1;
}

function releaseSlot(): void {
  activeCaptures = Math.max(0, activeCaptures - 1);
}

/**
 * Runs a consumed capture plan: records the run as running (with a lease naming this process), adds
 * source and environment identity, waits for a capture slot, runs the collector through the broker,
 * then hands the result to publishCapture. A collector that cannot start closes the run as failed.
 */
export class CaptureRunner {
  constructor(private readonly workspace: WorkspaceHandle) {}

  async run(
    intent: ConsumedPlan,
    options: { signal?: AbortSignal; progress?: ProgressReporter; recording?: StackRecording } = {},
  ): Promise<CaptureReceipt> {
    const workspace = this.workspace.open();
    const report = bestEffortProgress(options.progress, 8);
    await report(1, "planning: capture plan validated");
    const policy = loadWorkspacePolicy(workspace.root);
    let revision = this.start(workspace, intent);
    await report(2, "warming_up: run lifecycle initialized");
    await report(3, "warming_up: source and environment identity will be read while the workload runs");
    await acquireSlot(policy.limits.max_parallel_captures, options.signal);
    let result: ProcessResult;
    // Identity (git, the interpreter's probe) and DuckDB (the query engine's instance, and the library
    // publication writes Parquet with) start a little after the collector's process exists, or when it
    // ends if that is sooner, never before it: the probes' processes and the dlopen of DuckDB's native
    // library would otherwise compete with the workload's own start. Identity is recorded after the collector ends.
    let identity: ReturnType<CaptureRunner["readIdentity"]> = Promise.resolve({ source: null, environment: null });
    const background = new DelayedStart(() => {
      identity = this.readIdentity(workspace, intent);
      // Publication writes one bundle per extracted output and one of runtime measurements, each with its
      // own instance. The receipt's first answer is asked of the query engine as soon as the run is
      // published, unless it is a ranking the recorded rows answer: that engine's start would then only
      // take CPU from the workload.
      setImmediate(() => {
        if (!(options.recording && defaultAnalysisOf(intent.adapter).kind === "hotspots")) evidenceEngine(workspace).warm();
        warmBundleEngines(intent.outputs.filter((output) => output.extract).length + 1);
        // The control plane's log is merged now, off the collector's critical path (CLI commands leave it unmerged at exit).
        workspace.state.checkpoint();
      });
    });
    try {
      await report(4, "capturing: workload running");
      mkdirSync(intent.artifact_directory, { recursive: true });
      result = await this.collect(workspace, intent, policy, options.signal, (started) => {
        background.arm(backgroundDelayMs);
        revision = started(revision);
      });
      background.now();
    } catch (error) {
      background.cancel();
      releaseSlot();
      const typed = toFlameoxError(error);
      await identity;
      this.closeFailedStart(workspace, intent, revision, typed);
      throw typed;
    }
    releaseSlot();
    revision = this.identify(workspace, intent.run_id, revision, await identity);
    crashPoint("capture_collected");
    await report(
      5,
      result.timed_out
        ? "validating_artifact: collector timed out; preserving partial evidence"
        : "validating_artifact: collector complete",
    );
    return publishCapture(
      workspace,
      { intent, revision, result },
      (step, message) => report(step, `${publicationPhase(step)}: ${message.charAt(0).toLowerCase()}${message.slice(1)}`),
      options.recording,
    );
  }

  /** The run's first revision: running, leased to this process, with the plan's trusted-local limitation. */
  private start(workspace: Workspace, intent: ConsumedPlan): number {
    const manifest = blankManifest(intent.run_id, "execution", new Date().toISOString());
    Object.assign(manifest, {
      execution_status: "running",
      capture_status: "running",
      workload_name: intent.workload_name,
      workload_definition_id: intent.workload_definition_id,
      adapter: intent.adapter,
      adapter_options: intent.adapter_options,
      parameters: intent.parameters,
      command: commandView(intent, workspace.projectRoot),
      lease: { pid: process.pid, process_start_time: processStartTime(process.pid), boot_id: bootId() },
      limitations: [trustedLocalWarning],
      limitation_details: [trustedLocalLimitation],
    } satisfies Partial<RunManifest>);
    workspace.state.write(() => insertRun(workspace.state.database, manifest, "execution started"));
    return manifest.revision;
  }

  /** The run's next revision, written on its own; returns the new revision number. */
  private revise(
    workspace: Workspace,
    runId: string,
    revision: number,
    change: (current: RunManifest) => RunManifest,
    reason: string,
  ): number {
    return workspace.state.write(() => reviseRun(workspace.state.database, runId, revision, change, reason).revision);
  }

  private async readIdentity(workspace: Workspace, intent: ConsumedPlan) {
    const [source, environment] = await Promise.all([
      sourceIdentity(workspace.projectRoot).catch(() => null),
      environmentIdentity({ interpreter: intent.workload_executable }).catch(() => null),
    ]);
    return { source, environment };
  }

  private identify(
    workspace: Workspace,
    runId: string,
    revision: number,
    { source, environment }: Awaited<ReturnType<CaptureRunner["readIdentity"]>>,
  ): number {
    return this.revise(
      workspace,
      runId,
      revision,
      (current) => ({
        ...current,
        source_state_id: source?.source_state_id ?? null,
        environment_id: environment?.environment_id ?? null,
        source: source as unknown as Record<string, unknown> | null,
        environment: environment as unknown as Record<string, unknown> | null,
      }),
      "identity collected",
    );
  }

  /** The collector through the broker; `onRevision` records the started process as soon as it exists. */
  private collect(
    workspace: Workspace,
    intent: ConsumedPlan,
    policy: WorkspacePolicy,
    signal: AbortSignal | undefined,
    onRevision: (started: (revision: number) => number) => void,
  ): Promise<ProcessResult> {
    return runProcess(
      {
        argv: intent.collector_argv,
        cwd: intent.cwd,
        deadline: Date.now() + intent.timeout_seconds * 1000,
        stdoutPath: join(intent.artifact_directory, "stdout.txt"),
        stderrPath: join(intent.artifact_directory, "stderr.txt"),
        outputBudgetBytes: policy.limits.max_output_bytes,
        environment: intent.environment,
        trustedEnvironment: { ...intent.trusted_environment, [runMarkerVariable]: intent.run_id },
      },
      {
        signal,
        gracePeriodMs: policy.limits.cleanup_grace_seconds * 1000,
        sampling: { intervalMs: policy.sampling.resource_sample_interval_ms, diskPath: workspace.root },
        inheritEnvironment: inheritedEnvironment(policy),
        onStarted: (info) =>
          onRevision((revision) =>
            this.revise(
              workspace,
              intent.run_id,
              revision,
              (current) => ({
                ...current,
                started_at: info.started_at,
                process: { pid: info.pid, process_start_time: info.process_start_time, boot_id: info.boot_id },
              }),
              "process started",
            ),
          ),
      },
    );
  }

  private closeFailedStart(workspace: Workspace, intent: ConsumedPlan, revision: number, error: FlameoxError): void {
    workspace.state.write(() => {
      reviseRun(
        workspace.state.database,
        intent.run_id,
        revision,
        (current) => ({
          ...current,
          finished_at: new Date().toISOString(),
          execution_status: error.code === "PROCESS_CANCELLED" ? "cancelled" : "failed",
          capture_status: error.code === "PROCESS_CANCELLED" ? "cancelled" : "failed",
          lease: null,
          process: { ...(current.process ?? {}), cleanup_complete: true },
          failure: { code: error.code, message: error.message },
        }),
        "execution could not start",
      );
      advanceCorpus(workspace.state.database, workspace.id, `capture ${intent.run_id} failed to start`);
    });
    rmSync(intent.artifact_directory, { recursive: true, force: true });
  }
}
