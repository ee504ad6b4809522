import { randomHex } from "../domain/random.ts";
import { existsSync, statSync } from "node:fs";
import { resolve } from "node:path";
import { captureAdapters } from "../adapters/capture-adapters.ts";
import { type AdapterDescriptor, adapterDescriptor } from "../adapters/registry.ts";
import { resolveWorkloadInvocation } from "../config/workload-template.ts";
import { loadWorkspacePolicy } from "../config/workspace-policy.ts";
import { digestOf } from "../domain/canonical-json.ts";
import { capabilityUnavailable, executionRefused, FlameoxError, planRefused, toFlameoxError } from "../domain/errors.ts";
import { executableDigest, resolveExecutable } from "../exec/executable.ts";
import type { PlanTokenStore } from "../store/plan-tokens.ts";
import { longestRecentRunSeconds } from "../store/run-store.ts";
import type { WorkspaceHandle } from "../store/workspace-handle.ts";
import { flameoxVersion } from "../version.ts";
import { type CapabilityService, unknownAdapter } from "./capability-service.ts";
import {
  type CapturePlan,
  type CaptureReceipt,
  type ConsumedPlan,
  type PlanCaptureRequest,
  capturePlanView,
  executionGuidance,
  type PreflightCheck,
  parseAdapterOptions,
  refuseEscape,
  safeDigest,
  withTorchProfilerOptions,
} from "./capture-plan.ts";
import type { CaptureRunner } from "./capture-runner.ts";
import { bestEffortProgress, defaultHeartbeatIntervalMs, heartbeatProgress, type ProgressReporter } from "./progress.ts";
import type { ReceiptAnalysisService } from "./receipt-analysis.ts";
import { StackRecording } from "./stack-recording.ts";
import type { WorkloadService } from "./workload-service.ts";

export type { CapturePlan, CaptureReceipt, ConsumedPlan, PlanCaptureRequest };

/** Every adapter plan_capture can run, in registry order (for help texts and descriptions). */
export const captureAdapterNames: readonly string[] = [...captureAdapters.keys()];

/**
 * plan_capture and execute_capture_plan. Planning resolves and probes everything and issues a
 * single-use token bound to the exact intent; executing spends the token before any process starts,
 * rechecks every bound input, then runs the plan (CaptureRunner) and publishes what it produced.
 */
export class CaptureService {
  constructor(
    private readonly workspace: WorkspaceHandle,
    private readonly workloads: WorkloadService,
    private readonly capabilities: CapabilityService,
    private readonly plans: PlanTokenStore<"capture", ConsumedPlan>,
    private readonly runner: CaptureRunner,
    private readonly receipts: ReceiptAnalysisService,
    private readonly heartbeatIntervalMs = defaultHeartbeatIntervalMs,
  ) {}

  /** Read-only: resolves and probes, then issues a single-use token. No workload process starts. */
  async plan(planRequest: PlanCaptureRequest): Promise<CapturePlan> {
    const request = withTorchProfilerOptions(planRequest);
    const workspace = this.workspace.open();
    const policy = loadWorkspacePolicy(workspace.root);
    const { descriptor, adapter } = this.captureAdapter(request);
    const { workload, definitionId, invocation, cwd } = await this.resolveWorkload(request);
    const adapterOptions = parseAdapterOptions(adapter, request.adapter_options);
    const workloadExecutable = this.workloadExecutable(request.workload_name, invocation, cwd);
    const { adapterExecutable, checks } = await this.preflight(descriptor, request);
    const runId = crypto.randomUUID();
    const artifactDirectory = workspace.path("staging", `run-${runId}`);
    const collectorDirectory = workspace.path("tools", "collectors", flameoxVersion);
    const collector = await adapter.planCollector({
      workloadArgv: [workloadExecutable, ...invocation.argv.slice(1)],
      cwd: cwd,
      environment: invocation.environment,
      artifactDirectory,
      adapterExecutable,
      managedPython: this.capabilities.managedInterpreter(descriptor.name),
      options: adapterOptions,
      collectorDirectory,
      projectRoot: this.workspace.projectRoot,
    });
    // Both executables are hashed at once (megabytes each); the plan binds to both digests.
    const [adapterExecutableDigest, workloadExecutableDigest] = await Promise.all([
      adapterExecutable ? executableDigest(adapterExecutable) : null,
      executableDigest(workloadExecutable),
    ]);
    const intent: ConsumedPlan = {
      workspace_id: workspace.id,
      run_id: runId,
      workload_name: request.workload_name,
      workload_definition_id: definitionId,
      parameters: invocation.parameters,
      adapter: descriptor.name,
      adapter_options: adapterOptions,
      adapter_executable: adapterExecutable,
      adapter_executable_digest: adapterExecutableDigest,
      workload_executable: workloadExecutable,
      workload_executable_digest: workloadExecutableDigest,
      argv: invocation.argv,
      collector_argv: collector.argv,
      trusted_environment: collector.trustedEnvironment,
      outputs: collector.outputs,
      expected_overhead: collector.expectedOverhead,
      collector_directory: collectorDirectory,
      cwd: cwd,
      environment: invocation.environment,
      timeout_seconds: workload.timeout_seconds,
      policy_digest: digestOf(policy),
      artifact_directory: artifactDirectory,
    };
    const planId = randomHex(32);
    const createdAt = new Date();
    const expiresAtMs = createdAt.getTime() + policy.limits.plan_ttl_seconds * 1000;
    const requestDigest = digestOf({ tool: "plan_capture", ...request });
    this.plans.issue({ token: planId, intent, labels: { run_id: runId, request_digest: requestDigest }, createdAt, expiresAtMs });
    return capturePlanView({
      planId,
      requestDigest,
      intent,
      preflightMode: request.preflight_mode,
      checks: [{ name: "workload_executable", status: "ok", detail: workloadExecutable }, ...checks],
      artifactKinds: descriptor.artifactKinds,
      limits: policy.limits,
      workspaceRoot: workspace.root,
      projectRoot: this.workspace.projectRoot,
      createdAt,
      expiresAtMs,
      guidance: executionGuidance(
        intent.timeout_seconds,
        longestRecentRunSeconds(workspace.state.database, request.workload_name),
        this.heartbeatIntervalMs / 1000,
      ),
    });
  }

  /** The capture mode must be runnable here and the adapter must be able to capture (not import-only). */
  private captureAdapter(request: PlanCaptureRequest) {
    if (request.capture_mode === "managed") {
      throw capabilityUnavailable("Managed (contained) capture is not available on this host.", {
        details: { next_tool: "plan_capture", capture_mode: "auto" },
        remediation: ["Re-plan with capture_mode='auto' to run the workload directly and record that limitation."],
        next: {
          tool: "plan_capture",
          arguments: {
            workload_name: request.workload_name,
            adapter: request.adapter,
            parameters: request.parameters,
            capture_mode: "auto",
          },
        },
      });
    }
    const descriptor = adapterDescriptor(request.adapter);
    if (!descriptor) throw unknownAdapter(request.adapter);
    const adapter = captureAdapters.get(descriptor.name);
    if (!adapter) {
      throw capabilityUnavailable(`The ${descriptor.name} adapter is import-only; it cannot be planned as a capture.`, {
        details: { adapter: descriptor.name, allowed_adapters: [...captureAdapters.keys()], next_tool: "get_declared_workflow" },
        remediation: [`Choose one of: ${[...captureAdapters.keys()].join(", ")}.`],
        next: { tool: "get_declared_workflow", arguments: { name: request.workload_name } },
      });
    }
    return { descriptor, adapter };
  }

  /** The workload's rendered command, with a cwd inside the project that exists. */
  private async resolveWorkload(request: PlanCaptureRequest) {
    const { workload, definitionId } = await this.workloads.requireWorkload(request.workload_name);
    const invocation = withoutBadParameters(request, () => resolveWorkloadInvocation(workload, request.parameters));
    const cwd = resolve(this.workspace.projectRoot, invocation.cwd);
    refuseEscape(this.workspace.projectRoot, cwd, request.workload_name);
    if (!existsSync(cwd) || !statSync(cwd).isDirectory()) {
      throw executionRefused(`The workload's cwd '${invocation.cwd}' is not an existing folder.`, {
        remediation: ["Fix the workload's cwd with configure_workload (get_declared_workflow shows its definition)."],
        details: { next_tool: "configure_workload" },
        next: { tool: "get_declared_workflow", arguments: { kind: "workload", name: request.workload_name } },
      });
    }
    return { workload, definitionId, invocation, cwd };
  }

  /** The executable the child will run, resolved on the child's own PATH. */
  private workloadExecutable(
    workloadName: string,
    invocation: { argv: string[]; environment: Record<string, string> },
    cwd: string,
  ): string {
    try {
      return resolveExecutable(invocation.argv[0]!, invocation.environment.PATH ?? process.env.PATH ?? "", cwd);
    } catch (error) {
      throw capabilityUnavailable(`The workload's executable '${invocation.argv[0]}' cannot be run: ${toFlameoxError(error).message}`, {
        details: { next_tool: "get_declared_workflow", missing_executable: invocation.argv[0], requirement_kind: "executable" },
        remediation: ["Install the executable or fix the workload's argv with configure_workload."],
        next: { tool: "get_declared_workflow", arguments: { name: workloadName } },
      });
    }
  }

  /** The adapter's own executable and, unless preflight_mode is passive, its active probe (version, permission). */
  private async preflight(
    descriptor: AdapterDescriptor,
    request: PlanCaptureRequest,
  ): Promise<{ adapterExecutable: string | null; checks: PreflightCheck[] }> {
    if (!descriptor.executable) return { adapterExecutable: null, checks: [] };
    const report = request.preflight_mode === "passive" ? null : await this.capabilities.activeReport(descriptor, false);
    // The host's executable first, else the verified managed provider's (py-spy from its own environment).
    const { executable: adapterExecutable, source } = this.capabilities.adapterExecutable(descriptor);
    if (!adapterExecutable || (report && report.status !== "available")) {
      const passive = this.capabilities.passive(descriptor);
      const status = report?.status ?? passive.status;
      const setup = passive.setup?.method === "start_capability_setup" ? passive.setup : null;
      throw capabilityUnavailable(`${descriptor.name} is ${status.replaceAll("_", " ")} here.`, {
        details: {
          adapter: descriptor.name,
          status,
          next_tool: setup ? "start_capability_setup" : "list_capabilities",
          preflight: request.preflight_mode,
          ...(setup ? { setup_adapters: setup.arguments.adapters } : {}),
        },
        remediation: report?.remediation ?? passive.remediation,
        next: setup
          ? { tool: "start_capability_setup", arguments: setup.arguments }
          : { tool: "list_capabilities", arguments: { mode: "active_refresh", adapter: descriptor.name } },
      });
    }
    const provenance = source === "managed" ? ` (managed provider ${this.capabilities.passive(descriptor).managed_provider})` : "";
    const checks: PreflightCheck[] = [
      { name: `${descriptor.name}_executable`, status: "ok", detail: `${adapterExecutable} ${report?.version ?? ""}${provenance}`.trim() },
      report
        ? { name: `${descriptor.name}_permission`, status: report.permission_status, detail: descriptor.permissions.join(", ") || "none" }
        : { name: `${descriptor.name}_permission`, status: "unchecked", detail: "preflight_mode='passive' skipped the permission probe" },
    ];
    return { adapterExecutable, checks };
  }

  /**
   * Consumes the token atomically before any process starts, rechecks every bound input, runs the
   * collector through the broker, then registers artifacts and evidence in one transaction.
   */
  async execute(planId: string, options: { signal?: AbortSignal; progress?: ProgressReporter } = {}): Promise<CaptureReceipt> {
    // A capture runs as long as its workload: the heartbeat keeps a client's request timeout from firing meanwhile.
    const heartbeat = heartbeatProgress(options.progress, { intervalMs: this.heartbeatIntervalMs });
    try {
      await bestEffortProgress(heartbeat.report, 8)(0, "planning: capture request accepted");
      const intent = await this.consumeAndRecheck(planId);
      // The first answer is read from the rows the extraction wrote, still in memory, when they suffice.
      const recording = new StackRecording();
      const receipt = await this.executeIntent(intent, { ...options, progress: heartbeat.report, recording });
      return await this.withAnalysis(receipt, intent, recording);
    } finally {
      heartbeat.stop();
    }
  }

  /** The receipt with the adapter's default analysis of the run beside it, and the step that follows from that answer. */
  private async withAnalysis(receipt: CaptureReceipt, intent: ConsumedPlan, recording: StackRecording): Promise<CaptureReceipt> {
    const { analysis, next } = await this.receipts.analyze(
      {
        run_id: receipt.run_id,
        adapter: intent.adapter,
        workload_name: intent.workload_name,
        execution_status: receipt.execution_status,
        exception: receipt.exception,
      },
      recording,
    );
    return { ...receipt, analysis, next_tool: next.tool, next_arguments: next.arguments };
  }

  /** Spends the token and rechecks the bound inputs; after this the plan can only run once, here. */
  async consumeAndRecheck(planId: string): Promise<ConsumedPlan> {
    const outcome = this.plans.consume(planId, Date.now());
    if (!("intent" in outcome)) {
      const spent = outcome.spent;
      throw planRefused("capture", `The capture plan ${outcome.refused}.`, {
        details: { reason: outcome.refused, ...(spent ? { run_id: spent.run_id, workload_name: spent.workload_name } : {}) },
        remediation: [
          spent
            ? "Call plan_capture with the arguments in recovery and execute the new plan_id. A consumed plan is never retryable: get_run shows its run."
            : "Call list_declared_workflows, then plan_capture, and execute the new plan_id.",
        ],
        // An unknown plan_id says nothing about what was meant: discovery, not a guess at plan_capture.
        next: spent ? { tool: "plan_capture", arguments: replanArguments(spent) } : { tool: "list_declared_workflows", arguments: {} },
      });
    }
    await this.recheck(outcome.intent);
    return outcome.intent;
  }

  executeIntent(
    intent: ConsumedPlan,
    options: { signal?: AbortSignal; progress?: ProgressReporter; recording?: StackRecording } = {},
  ): Promise<CaptureReceipt> {
    return this.runner.run(intent, options);
  }

  /** The token is already spent: a changed input means re-plan, never run the stale intent. */
  private async recheck(intent: ConsumedPlan): Promise<void> {
    const problems: string[] = [];
    try {
      const { definitionId } = await this.workloads.requireWorkload(intent.workload_name);
      if (definitionId !== intent.workload_definition_id) problems.push("the workload definition changed");
    } catch {
      problems.push("the workload is no longer declared or flameox.toml is invalid");
    }
    if ((await safeDigest(intent.workload_executable)) !== intent.workload_executable_digest)
      problems.push("the workload executable changed");
    if (intent.adapter_executable && (await safeDigest(intent.adapter_executable)) !== intent.adapter_executable_digest)
      problems.push(`the ${intent.adapter} executable changed`);
    if (digestOf(loadWorkspacePolicy(this.workspace.open().root)) !== intent.policy_digest) problems.push("the workspace policy changed");
    if (problems.length > 0) {
      throw planRefused("capture", `The capture plan is stale: ${problems.join("; ")}.`, {
        details: { reasons: problems, workload_name: intent.workload_name },
        remediation: ["Call plan_capture again; nothing was executed."],
        replanArguments: replanArguments(intent),
      });
    }
  }
}

/** The plan_capture arguments that plan the same capture again (the adapter's options as resolved). */
export function replanArguments(intent: ConsumedPlan): Record<string, unknown> {
  return {
    workload_name: intent.workload_name,
    adapter: intent.adapter,
    parameters: intent.parameters,
    adapter_options: intent.adapter_options,
  };
}

/**
 * A parameter the workload does not declare, or a value it does not allow, is refused with the recovery
 * that plans the same capture without it (its declared default applies).
 */
function withoutBadParameters<T>(request: PlanCaptureRequest, resolve: () => T): T {
  try {
    return resolve();
  } catch (error) {
    const details = error instanceof FlameoxError ? error.details : {};
    const named = Array.isArray(details.parameters) ? details.parameters : typeof details.parameter === "string" ? [details.parameter] : [];
    if (!(error instanceof FlameoxError) || error.code !== "INVALID_CAPTURE_PLAN" || named.length === 0) throw error;
    const parameters = Object.fromEntries(Object.entries(request.parameters).filter(([name]) => !named.includes(name)));
    throw planRefused("capture", error.message, {
      details,
      remediation: [...error.remediation, "Or plan without the refused parameters (the call in recovery): their declared defaults apply."],
      next: {
        tool: "plan_capture",
        arguments: { workload_name: request.workload_name, adapter: request.adapter, parameters, adapter_options: request.adapter_options },
      },
    });
  }
}
