import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, rmSync, statSync } from "node:fs";
import { isAbsolute, join, relative, resolve, sep } from "node:path";
import * as v from "valibot";
import { digestOf } from "../domain/canonical-json.ts";
import {
  capabilityUnavailable,
  executionRefused,
  type FlameoxError,
  invalidArguments,
  planRefused,
  processCancelled,
  processTimeout,
  toFlameoxError,
} from "../domain/errors.ts";
import { resolveWorkloadInvocation } from "../config/workload-template.ts";
import { adapterDescriptor } from "../adapters/registry.ts";
import { captureAdapters } from "../adapters/capture-adapters.ts";
import type { CaptureAdapter, CollectorOutput } from "../adapters/capture-adapter.ts";
import { flameoxVersion } from "../version.ts";
import { brokerCommandRunner } from "./command-runner.ts";
import { runProcess, type ProcessResult } from "../exec/broker.ts";
import { executableDigest, resolveExecutable } from "../exec/executable.ts";
import { bootId, environmentIdentity, processStartTime, sourceIdentity } from "../exec/identity.ts";
import { runtimeMeasurementNames } from "../exec/resource-sampler.ts";
import { storeArtifactFile } from "../store/artifact-store.ts";
import { advanceCorpus } from "../store/corpus.ts";
import { blankManifest, insertRun, readRun, reviseRun, type RunArtifactReference, type RunManifest } from "../store/run-store.ts";
import { registerArtifact } from "../store/artifact-registry.ts";
import { prepareBundle, type PreparedBundle } from "./evidence-publisher.ts";
import { runResourceUri } from "../domain/resource-uris.ts";
import { bestEffortProgress, type ProgressReporter } from "./progress.ts";
import { inheritedEnvironment, loadWorkspacePolicy } from "../config/workspace-policy.ts";
import { unknownAdapter } from "./capability-service.ts";
import type { CapabilityService } from "./capability-service.ts";
import type { WorkloadService } from "./workload-service.ts";
import type { PlanTokenStore } from "../store/plan-tokens.ts";
import type { WorkspaceHandle } from "../store/workspace-handle.ts";

export type PlanCaptureRequest = {
  workload_name: string;
  adapter: string;
  parameters: Record<string, string | number | boolean>;
  adapter_options: Record<string, unknown>;
  /** The spec's name for torch.profiler's options; merged into adapter_options, refused for any other adapter. */
  torch_profiler_options?: Record<string, unknown> | null;
  preflight_mode: "auto" | "passive" | "active";
  capture_mode: "auto" | "managed" | "trusted_local";
};

/** Everything execution is bound to; any change between plan and execute refuses the plan. */
export type ConsumedPlan = BoundIntent;

type BoundIntent = {
  workspace_id: string;
  run_id: string;
  workload_name: string;
  workload_definition_id: string;
  parameters: Record<string, unknown>;
  adapter: string;
  adapter_options: Record<string, unknown>;
  adapter_executable: string | null;
  adapter_executable_digest: string | null;
  workload_executable: string;
  workload_executable_digest: string;
  argv: string[];
  collector_argv: string[];
  trusted_environment: Record<string, string>;
  outputs: CollectorOutput[];
  expected_overhead: string;
  collector_directory: string;
  cwd: string;
  environment: Record<string, string>;
  timeout_seconds: number;
  policy_digest: string;
  artifact_directory: string;
};

export type CapturePlan = {
  schema_version: 1;
  plan_id: string;
  run_id: string;
  request_digest: string;
  workspace_id: string;
  workload_name: string;
  workload_definition_id: string;
  adapter: string;
  adapter_options: Record<string, unknown>;
  parameters: Record<string, unknown>;
  command: { argv: string[]; cwd: string; timeout_seconds: number; environment_names: string[] };
  collector_argv: string[];
  expected_artifact_kinds: string[];
  expected_overhead: string;
  execution_policy: "trusted_local";
  containment: "uncontained";
  preflight: { mode: string; disposition: "ready"; checks: { name: string; status: string; detail: string }[] };
  limits: { timeout_seconds: number; max_output_bytes: number; max_artifact_bytes: number };
  warnings: string[];
  limitation_details: { source: string; code: string; message: string }[];
  created_at: string;
  expires_at: string;
  next_tool: "execute_capture_plan";
};

export type CaptureReceipt = {
  schema_version: 1;
  run_id: string;
  execution_status: string;
  capture_status: string;
  validation_status: string;
  exit_code: number | null;
  source_state_id: string | null;
  environment_id: string | null;
  artifact_ids: string[];
  evidence_tables: Record<string, number>;
  limitations: string[];
  limitation_details: { source: string; code: string; message: string }[];
  corpus_commit_id: string;
  resource_uri: string;
  next_tool: string;
};

let activeCaptures = 0;

export const runMarkerVariable = "FLAMEOX_RUN_ID";

const trustedLocalWarning =
  "Trusted-local execution selected: the workload runs directly as this user with no enforced containment; it may modify files or use the network.";

export class CaptureService {
  constructor(
    private readonly workspace: WorkspaceHandle,
    private readonly workloads: WorkloadService,
    private readonly capabilities: CapabilityService,
    private readonly plans: PlanTokenStore<"capture", ConsumedPlan>,
  ) {}

  /** Read-only: resolves and probes, then issues a single-use token. No workload process starts. */
  async plan(planRequest: PlanCaptureRequest): Promise<CapturePlan> {
    const request = withTorchProfilerOptions(planRequest);
    const workspace = this.workspace.open();
    const policy = loadWorkspacePolicy(workspace.root);
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
    const { workload, definitionId } = await this.workloads.requireWorkload(request.workload_name);
    const invocation = resolveWorkloadInvocation(workload, request.parameters);
    const cwd = resolve(this.workspace.projectRoot, invocation.cwd);
    refuseEscape(this.workspace.projectRoot, cwd);
    if (!existsSync(cwd) || !statSync(cwd).isDirectory()) {
      throw executionRefused(`The workload's cwd '${invocation.cwd}' is not an existing folder.`, {
        remediation: ["Fix the workload's cwd with configure_workload."],
        details: { next_tool: "configure_workload" },
        next: { tool: "configure_workload" },
      });
    }
    const adapterOptions = parseAdapterOptions(adapter, request.adapter_options);
    const childPath = invocation.environment.PATH ?? process.env.PATH ?? "";
    const checks: { name: string; status: string; detail: string }[] = [];
    let workloadExecutable: string;
    try {
      workloadExecutable = resolveExecutable(invocation.argv[0]!, childPath, cwd);
    } catch (error) {
      const typed = toFlameoxError(error);
      throw capabilityUnavailable(`The workload's executable '${invocation.argv[0]}' cannot be run: ${typed.message}`, {
        details: { next_tool: "get_declared_workflow", missing_executable: invocation.argv[0], requirement_kind: "executable" },
        remediation: ["Install the executable or fix the workload's argv with configure_workload."],
        next: { tool: "get_declared_workflow", arguments: { name: request.workload_name } },
      });
    }
    checks.push({ name: "workload_executable", status: "ok", detail: workloadExecutable });
    let adapterExecutable: string | null = null;
    if (descriptor.executable) {
      const report = request.preflight_mode === "passive" ? null : await this.capabilities.activeReport(descriptor, false);
      const passive = (await this.capabilities.list({ mode: "passive", adapter: descriptor.name })).capabilities[0]!;
      adapterExecutable = passive.executable;
      if (!adapterExecutable || (report && report.status !== "available")) {
        const status = report?.status ?? passive.status;
        throw capabilityUnavailable(`${descriptor.name} is ${status.replaceAll("_", " ")} here.`, {
          details: { adapter: descriptor.name, status, next_tool: "list_capabilities", preflight: request.preflight_mode },
          remediation: report?.remediation ?? passive.remediation,
          next: { tool: "list_capabilities", arguments: { mode: "active_refresh", adapter: descriptor.name } },
        });
      }
      checks.push({ name: `${descriptor.name}_executable`, status: "ok", detail: `${adapterExecutable} ${report?.version ?? ""}`.trim() });
      if (report)
        checks.push({
          name: `${descriptor.name}_permission`,
          status: report.permission_status,
          detail: descriptor.permissions.join(", ") || "none",
        });
      else
        checks.push({
          name: `${descriptor.name}_permission`,
          status: "unchecked",
          detail: "preflight_mode='passive' skipped the permission probe",
        });
    }
    const runId = crypto.randomUUID();
    const artifactDirectory = workspace.path("staging", `run-${runId}`);
    const collectorDirectory = workspace.path("tools", "collectors", flameoxVersion);
    const collector = await adapter.planCollector({
      workloadArgv: [workloadExecutable, ...invocation.argv.slice(1)],
      cwd,
      environment: invocation.environment,
      artifactDirectory,
      adapterExecutable,
      options: adapterOptions,
      collectorDirectory,
      projectRoot: this.workspace.projectRoot,
    });
    const collectorArgv = collector.argv;
    const intent: BoundIntent = {
      workspace_id: workspace.id,
      run_id: runId,
      workload_name: request.workload_name,
      workload_definition_id: definitionId,
      parameters: invocation.parameters,
      adapter: descriptor.name,
      adapter_options: adapterOptions,
      adapter_executable: adapterExecutable,
      adapter_executable_digest: adapterExecutable ? await executableDigest(adapterExecutable) : null,
      workload_executable: workloadExecutable,
      workload_executable_digest: await executableDigest(workloadExecutable),
      argv: invocation.argv,
      collector_argv: collectorArgv,
      trusted_environment: collector.trustedEnvironment,
      outputs: collector.outputs,
      expected_overhead: collector.expectedOverhead,
      collector_directory: collectorDirectory,
      cwd,
      environment: invocation.environment,
      timeout_seconds: workload.timeout_seconds,
      policy_digest: digestOf(policy),
      artifact_directory: artifactDirectory,
    };
    const planId = randomBytes(32).toString("hex");
    const createdAt = new Date();
    const expiresAtMs = createdAt.getTime() + policy.limits.plan_ttl_seconds * 1000;
    const requestDigest = digestOf({ tool: "plan_capture", ...request });
    this.plans.issue({ token: planId, intent, labels: { run_id: runId, request_digest: requestDigest }, createdAt, expiresAtMs });
    return {
      schema_version: 1,
      plan_id: planId,
      run_id: runId,
      request_digest: requestDigest,
      workspace_id: workspace.id,
      workload_name: request.workload_name,
      workload_definition_id: definitionId,
      adapter: descriptor.name,
      adapter_options: adapterOptions,
      parameters: invocation.parameters,
      command: {
        argv: invocation.argv,
        cwd: relative(this.workspace.projectRoot, cwd) || ".",
        timeout_seconds: workload.timeout_seconds,
        environment_names: Object.keys(invocation.environment).sort(),
      },
      collector_argv: collectorArgv.map((argument) => argument.replace(workspace.root, ".diagnostics")),
      expected_artifact_kinds: descriptor.artifactKinds,
      expected_overhead: collector.expectedOverhead,
      execution_policy: "trusted_local",
      containment: "uncontained",
      preflight: { mode: request.preflight_mode, disposition: "ready", checks },
      limits: {
        timeout_seconds: workload.timeout_seconds,
        max_output_bytes: policy.limits.max_output_bytes,
        max_artifact_bytes: policy.limits.max_artifact_bytes,
      },
      warnings: [trustedLocalWarning],
      limitation_details: [{ source: "plan", code: "trusted_local_execution", message: trustedLocalWarning }],
      created_at: createdAt.toISOString(),
      expires_at: new Date(expiresAtMs).toISOString(),
      next_tool: "execute_capture_plan",
    };
  }

  /**
   * Consumes the token atomically before any process starts, rechecks every bound input, runs the
   * collector through the broker, then registers artifacts and evidence in one transaction.
   */
  async execute(planId: string, options: { signal?: AbortSignal; progress?: ProgressReporter } = {}): Promise<CaptureReceipt> {
    const report = bestEffortProgress(options.progress, 8);
    await report(0, "Capture request accepted");
    const intent = await this.consumeAndRecheck(planId);
    return this.executeIntent(intent, options);
  }

  /** Spends the token and rechecks the bound inputs; after this the plan can only run once, here. */
  async consumeAndRecheck(planId: string): Promise<ConsumedPlan> {
    const intent = this.consume(planId);
    await this.recheck(intent);
    return intent;
  }

  async executeIntent(intent: ConsumedPlan, options: { signal?: AbortSignal; progress?: ProgressReporter } = {}): Promise<CaptureReceipt> {
    const workspace = this.workspace.open();
    const report = bestEffortProgress(options.progress, 8);
    await report(1, "Capture plan validated");
    const policy = loadWorkspacePolicy(workspace.root);
    const createdAt = new Date().toISOString();
    const manifest = blankManifest(intent.run_id, "execution", createdAt);
    Object.assign(manifest, {
      execution_status: "running",
      capture_status: "running",
      workload_name: intent.workload_name,
      workload_definition_id: intent.workload_definition_id,
      adapter: intent.adapter,
      adapter_options: intent.adapter_options,
      parameters: intent.parameters,
      command: {
        argv: intent.argv,
        cwd: relative(this.workspace.projectRoot, intent.cwd) || ".",
        timeout_seconds: intent.timeout_seconds,
        environment_names: Object.keys(intent.environment).sort(),
      },
      lease: { pid: process.pid, process_start_time: processStartTime(process.pid), boot_id: bootId() },
      limitations: [trustedLocalWarning],
      limitation_details: [{ source: "plan", code: "trusted_local_execution", message: trustedLocalWarning }],
    } satisfies Partial<RunManifest>);
    workspace.state.write(() => insertRun(workspace.state.database, manifest, "execution started"));
    await report(2, "Run lifecycle initialized");
    let revision = manifest.revision;
    const [source, environment] = await Promise.all([
      sourceIdentity(this.workspace.projectRoot).catch(() => null),
      environmentIdentity({ interpreter: intent.workload_executable }).catch(() => null),
    ]);
    revision = workspace.state.write(
      () =>
        reviseRun(
          workspace.state.database,
          intent.run_id,
          revision,
          (current) => ({
            ...current,
            source_state_id: source?.source_state_id ?? null,
            environment_id: environment?.environment_id ?? null,
            source: source as unknown as Record<string, unknown> | null,
            environment: environment as unknown as Record<string, unknown> | null,
          }),
          "identity collected",
        ).revision,
    );
    await report(3, "Source and environment identity collected");
    await this.acquireSlot(policy.limits.max_parallel_captures, options.signal);
    let result: ProcessResult;
    try {
      await report(4, "Capture slot acquired");
      mkdirSync(intent.artifact_directory, { recursive: true });
      result = await runProcess(
        {
          argv: intent.collector_argv,
          cwd: intent.cwd,
          deadline: Date.now() + intent.timeout_seconds * 1000,
          stdoutPath: join(intent.artifact_directory, "stdout.txt"),
          stderrPath: join(intent.artifact_directory, "stderr.txt"),
          outputBudgetBytes: policy.limits.max_output_bytes,
          environment: intent.environment,
          // Descendants inherit this marker even after setsid, so crash recovery can find them.
          trustedEnvironment: { ...intent.trusted_environment, [runMarkerVariable]: intent.run_id },
        },
        {
          signal: options.signal,
          gracePeriodMs: policy.limits.cleanup_grace_seconds * 1000,
          sampling: { intervalMs: policy.sampling.resource_sample_interval_ms, diskPath: workspace.root },
          inheritEnvironment: inheritedEnvironment(policy),
          onStarted: (info) => {
            revision = workspace.state.write(
              () =>
                reviseRun(
                  workspace.state.database,
                  intent.run_id,
                  revision,
                  (current) => ({
                    ...current,
                    started_at: info.started_at,
                    process: { pid: info.pid, process_start_time: info.process_start_time, boot_id: info.boot_id },
                  }),
                  "process started",
                ).revision,
            );
          },
        },
      );
    } catch (error) {
      this.releaseSlot();
      const typed = toFlameoxError(error);
      this.closeFailedStart(intent, revision, typed);
      throw typed;
    }
    this.releaseSlot();
    await report(5, result.timed_out ? "Collector timed out; preserving partial evidence" : "Collector execution complete");
    return this.finish(intent, revision, result, report);
  }

  private async finish(
    intent: BoundIntent,
    revision: number,
    result: ProcessResult,
    report: (step: number, message: string) => Promise<void>,
  ): Promise<CaptureReceipt> {
    const workspace = this.workspace.open();
    const policy = loadWorkspacePolicy(workspace.root);
    const executionStatus =
      result.cancelled && !result.timed_out
        ? "cancelled"
        : result.timed_out
          ? "timed_out"
          : result.exit_code === 0
            ? "succeeded"
            : "failed";
    const limitations = [...result.limitations];
    const bundles: PreparedBundle[] = [];
    const stored: {
      path: string;
      kind: string;
      role: string;
      name: string;
      mediaType: string;
      format: string | null;
      producer: string | null;
      output?: CollectorOutput;
    }[] = [
      {
        path: join(intent.artifact_directory, "stdout.txt"),
        kind: "process_output",
        role: "stdout",
        name: "stdout.txt",
        mediaType: "text/plain",
        format: "text",
        producer: null,
      },
      {
        path: join(intent.artifact_directory, "stderr.txt"),
        kind: "process_output",
        role: "stderr",
        name: "stderr.txt",
        mediaType: "text/plain",
        format: "text",
        producer: null,
      },
    ];
    let validation: RunManifest["validation_status"] = intent.outputs.length > 0 ? "passed" : "not_requested";
    let captureStatus: RunManifest["capture_status"] = "registered";
    const adapter = captureAdapters.get(intent.adapter)!;
    for (const output of intent.outputs) {
      const path = join(intent.artifact_directory, output.file);
      if (existsSync(path) && statSync(path).size > 0) {
        stored.push({
          path,
          kind: output.kind,
          role: output.role,
          name: output.file,
          mediaType: output.mediaType,
          format: output.format,
          producer: output.producer,
          output,
        });
      } else if (output.required) {
        validation = "failed";
        limitations.push(`${intent.adapter} wrote no ${output.file}; see the stderr artifact.`);
      }
    }
    if (executionStatus === "cancelled") captureStatus = "cancelled";
    const references: RunArtifactReference[] = [];
    const storedArtifacts = stored
      .filter((entry) => existsSync(entry.path))
      .map((entry) => ({ entry, artifact: storeArtifactFile(workspace, entry.path, { maxBytes: policy.limits.max_artifact_bytes }) }));
    if (executionStatus !== "cancelled" && adapter.extract) {
      const extractionContext = {
        projectRoot: this.workspace.projectRoot,
        workloadExecutable: intent.workload_executable,
        collectorDirectory: intent.collector_directory,
        run: brokerCommandRunner(join(intent.artifact_directory, "extraction")),
        scratchDirectory: join(intent.artifact_directory, "extraction"),
      };
      for (const item of storedArtifacts) {
        const output = item.entry.output;
        if (!output?.extract) continue;
        try {
          bundles.push(
            await prepareBundle(
              workspace,
              {
                runId: intent.run_id,
                artifactId: item.artifact.artifact_id,
                extractor: adapter.extractor.name,
                extractorVersion: adapter.extractor.version,
              },
              async (sink) => {
                const extracted = await adapter.extract!(output, workspace.path(item.artifact.stored_path), sink, extractionContext);
                limitations.push(...extracted.limitations);
              },
            ),
          );
        } catch (error) {
          validation = "failed";
          captureStatus = "failed";
          limitations.push(`${output.file} could not be extracted: ${toFlameoxError(error).message}`);
        }
      }
    }
    await report(6, "Validation complete");
    const measurements = (result.resources?.measurements ?? []).map((measurement) => ({
      name: measurement.name,
      value: measurement.value,
      unit: measurement.unit,
    }));
    if (!measurements.some((measurement) => measurement.name === runtimeMeasurementNames.wallTimeNs)) {
      measurements.unshift({ name: runtimeMeasurementNames.wallTimeNs, value: result.wall_time_ns, unit: "ns" });
    }
    const stdoutArtifact = storedArtifacts.find((item) => item.entry.role === "stdout");
    if (stdoutArtifact && measurements.length > 0) {
      bundles.push(
        await prepareBundle(
          workspace,
          { runId: intent.run_id, artifactId: stdoutArtifact.artifact.artifact_id, extractor: "runtime", extractorVersion: "1" },
          async (sink) => {
            for (const measurement of measurements) {
              sink.measurement({
                name: measurement.name,
                value: measurement.value,
                unit: measurement.unit,
                aggregation: measurement.name.endsWith("bytes") ? "max" : "total",
                is_warmup: false,
                worker: null,
                run_index: 0,
                value_index: 0,
                phase: "capture",
                dimensions: null,
              });
            }
          },
        ),
      );
    }
    await report(7, "Artifacts registered");
    let corpusCommitId = "";
    try {
      corpusCommitId = workspace.state.write(() => {
        const database = workspace.state.database;
        for (const { entry, artifact } of storedArtifacts) {
          references.push(
            registerArtifact(database, {
              runId: intent.run_id,
              artifact,
              displayName: entry.name,
              kind: entry.kind,
              role: entry.role,
              mediaType: entry.mediaType,
              sensitivity: "internal",
              producer: entry.producer,
              producerVersion: null,
              format: entry.format,
            }),
          );
        }
        reviseRun(
          database,
          intent.run_id,
          revision,
          (current) => ({
            ...current,
            finished_at: result.finished_at,
            execution_status: executionStatus,
            capture_status: captureStatus,
            validation_status: validation,
            process: {
              ...(current.process ?? {}),
              pid: result.pid,
              exit_code: result.exit_code,
              terminating_signal: result.terminating_signal,
              wall_time_ns: result.wall_time_ns,
              timed_out: result.timed_out,
              cancelled: result.cancelled,
              cancellation_cause: result.cancellation_cause,
              cleanup_complete: result.cleanup_complete,
              leftover_processes: result.leftover_processes,
              stdout: {
                bytes_written: result.stdout.bytes_written,
                bytes_dropped: result.stdout.bytes_dropped,
                truncated: result.stdout.truncated,
              },
              stderr: {
                bytes_written: result.stderr.bytes_written,
                bytes_dropped: result.stderr.bytes_dropped,
                truncated: result.stderr.truncated,
              },
              resources: result.resources,
            },
            lease: null,
            artifacts: references,
            measurements,
            unavailable_measurements: result.resources?.unavailable ?? [],
            limitations: [...current.limitations, ...limitations],
          }),
          "execution finished",
        );
        const head = advanceCorpus(database, workspace.id, `capture ${intent.run_id}`);
        for (const bundle of bundles) bundle.register(head);
        return head.commit_id;
      });
    } catch (error) {
      for (const bundle of bundles) bundle.discard();
      throw error;
    }
    rmSync(intent.artifact_directory, { recursive: true, force: true });
    await report(8, "Evidence publication complete");
    const receipt: CaptureReceipt = {
      schema_version: 1,
      run_id: intent.run_id,
      execution_status: executionStatus,
      capture_status: captureStatus,
      validation_status: validation,
      exit_code: result.exit_code,
      source_state_id: readRun(workspace.state.database, intent.run_id)?.source_state_id ?? null,
      environment_id: readRun(workspace.state.database, intent.run_id)?.environment_id ?? null,
      artifact_ids: [...new Set(references.map((reference) => reference.artifact_id))],
      evidence_tables: sumTables(bundles.map((bundle) => bundle.tables)),
      limitations,
      limitation_details: [{ source: "plan", code: "trusted_local_execution", message: trustedLocalWarning }],
      corpus_commit_id: corpusCommitId,
      resource_uri: runResourceUri(intent.run_id),
      next_tool: intent.adapter === "command" ? "get_run" : "analyze_hotspots",
    };
    if (executionStatus === "cancelled") {
      throw processCancelled(
        `Capture run ${intent.run_id} was cancelled; the process tree was ${result.cleanup_complete ? "fully cleaned up" : "not fully cleaned up"}.`,
        {
          runId: intent.run_id,
          details: { run_id: intent.run_id, cleanup_complete: result.cleanup_complete },
          remediation: ["Inspect the run with get_run; plan a new capture to try again."],
          next: { tool: "get_run", arguments: { run_id: intent.run_id } },
        },
      );
    }
    if (executionStatus === "timed_out") {
      throw processTimeout(
        `Capture run ${intent.run_id} exceeded the workload's timeout of ${intent.timeout_seconds} s and was stopped; its output is kept.`,
        {
          runId: intent.run_id,
          details: {
            run_id: intent.run_id,
            timeout_seconds: intent.timeout_seconds,
            cleanup_complete: result.cleanup_complete,
            artifact_ids: receipt.artifact_ids,
          },
          remediation: ["Raise the workload's timeout_seconds with configure_workload, or plan a smaller parameter choice."],
          next: {
            tool: "plan_capture",
            arguments: { workload_name: intent.workload_name, adapter: intent.adapter, parameters: intent.parameters },
          },
        },
      );
    }
    return receipt;
  }

  private consume(planId: string): BoundIntent {
    const outcome = this.plans.consume(planId, Date.now());
    if ("intent" in outcome) return outcome.intent;
    throw planRefused("capture", `The capture plan ${outcome.refused}.`, {
      details: { reason: outcome.refused },
      remediation: [
        "Call plan_capture again and execute the new plan_id. A consumed plan is never retryable: inspect list_runs/get_run for its run.",
      ],
    });
  }

  /** The token is already spent: a changed input means re-plan, never run the stale intent. */
  private async recheck(intent: BoundIntent): Promise<void> {
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
        replanArguments: { workload_name: intent.workload_name, adapter: intent.adapter, parameters: intent.parameters },
      });
    }
  }

  private closeFailedStart(intent: BoundIntent, revision: number, error: FlameoxError): void {
    const workspace = this.workspace.open();
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

  private async acquireSlot(maximum: number, signal?: AbortSignal): Promise<void> {
    while (activeCaptures >= maximum) {
      if (signal?.aborted)
        throw processCancelled("Cancelled while waiting for a capture slot.", { remediation: ["Plan the capture again."] });
      await Bun.sleep(50);
    }
    activeCaptures += 1;
  }

  private releaseSlot(): void {
    activeCaptures = Math.max(0, activeCaptures - 1);
  }
}

function withTorchProfilerOptions(request: PlanCaptureRequest): PlanCaptureRequest {
  if (!request.torch_profiler_options) return request;
  if (request.adapter !== "torch.profiler") {
    throw planRefused("capture", `torch_profiler_options apply only to the torch.profiler adapter, not ${request.adapter}.`, {
      details: { field: "torch_profiler_options", adapter: request.adapter },
      remediation: ["Omit torch_profiler_options, or plan with adapter='torch.profiler'."],
    });
  }
  return { ...request, adapter_options: { ...request.adapter_options, ...request.torch_profiler_options }, torch_profiler_options: null };
}

/** Row counts per evidence table across every bundle a capture published. */
function sumTables(tables: Record<string, number>[]): Record<string, number> {
  const total: Record<string, number> = {};
  for (const table of tables) for (const [name, rows] of Object.entries(table)) total[name] = (total[name] ?? 0) + rows;
  return total;
}

/** adapter_options are checked against the adapter's own strict schema; unknown options are refused. */
function parseAdapterOptions(adapter: CaptureAdapter, options: Record<string, unknown>): Record<string, unknown> {
  const parsed = v.safeParse(adapter.optionsSchema, options);
  if (parsed.success) return parsed.output;
  const allowed = Object.keys(adapter.descriptor.options);
  const error = invalidArguments(
    "plan_capture",
    parsed.issues.map((issue) => ({
      field: `adapter_options.${(issue.path ?? []).map((item) => String(item.key)).join(".")}`,
      message: issue.message,
      type: issue.type,
    })),
    [
      allowed.length > 0
        ? `Use only the ${adapter.descriptor.name} options listed by list_capabilities: ${allowed.join(", ")}.`
        : `The ${adapter.descriptor.name} adapter takes no adapter_options.`,
    ],
  );
  throw planRefused("capture", error.message, { details: error.details, remediation: error.remediation });
}

function refuseEscape(projectRoot: string, path: string): void {
  const rel = relative(projectRoot, path);
  if (rel.startsWith("..") || isAbsolute(rel) || rel.split(sep).includes("..")) {
    throw executionRefused("The workload's cwd escapes the project root.", {
      remediation: ["Use a cwd inside the project."],
      details: { next_tool: "configure_workload" },
      next: { tool: "configure_workload" },
    });
  }
}

async function safeDigest(path: string): Promise<string | null> {
  try {
    return await executableDigest(path);
  } catch {
    return null;
  }
}
