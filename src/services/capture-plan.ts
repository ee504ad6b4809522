import { isAbsolute, relative, sep } from "node:path";
import * as v from "valibot";
import type { CaptureAdapter, CollectorOutput } from "../adapters/capture-adapter.ts";
import { executionRefused, invalidArguments, planRefused } from "../domain/errors.ts";
import { executableDigest } from "../exec/executable.ts";
import type { RunException } from "../store/run-store.ts";
import type { ReceiptAnalysis } from "./receipt-analysis.ts";
import type { StreamTail } from "./run-output.ts";
import { displayArgv } from "./host-paths.ts";

/** The types and input checks of plan_capture and execute_capture_plan, shared by planning and running. */

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
export type ConsumedPlan = {
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

export type PreflightCheck = { name: string; status: string; detail: string };

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
  preflight: { mode: string; disposition: "ready"; checks: PreflightCheck[] };
  limits: { timeout_seconds: number; max_output_bytes: number; max_artifact_bytes: number };
  warnings: string[];
  limitation_details: { source: string; code: string; message: string }[];
  created_at: string;
  expires_at: string;
  next_tool: "execute_capture_plan";
  execution_guidance: ExecutionGuidance;
};

/**
 * Whether to hold a request open for this capture or run it detached. Clients time requests out (the
 * TypeScript SDK after 60 s): a long timeout or slow earlier runs of the workload make
 * start_detached_capture the safer call; execute_capture_plan still works for a client that resets its
 * timeout on progress, which is sent every progress_interval_seconds.
 */
export type ExecutionGuidance = {
  recommended_tool: "execute_capture_plan" | "start_detached_capture";
  reason: string;
  longest_previous_run_seconds: number | null;
  progress_interval_seconds: number;
};

/** Above this many seconds a capture may outlive a client's request timeout. */
export const detachedAfterSeconds = 45;

export function executionGuidance(
  timeoutSeconds: number,
  longestPreviousSeconds: number | null,
  progressIntervalSeconds: number,
): ExecutionGuidance {
  const previous = longestPreviousSeconds === null ? null : Math.round(longestPreviousSeconds * 10) / 10;
  const why: string[] = [];
  if (timeoutSeconds > detachedAfterSeconds) why.push(`timeout_seconds is ${timeoutSeconds} (over ${detachedAfterSeconds} s)`);
  if (previous !== null && previous > detachedAfterSeconds) why.push(`earlier runs of this workload took up to ${previous} s`);
  const progress = `execute_capture_plan sends progress every ${progressIntervalSeconds} s, so a client that resets its request timeout on progress can also wait for it.`;
  return {
    recommended_tool: why.length > 0 ? "start_detached_capture" : "execute_capture_plan",
    reason:
      why.length > 0
        ? `Prefer start_detached_capture, then poll get_detached_capture: ${why.join(" and ")}. ${progress}`
        : `A short capture: call execute_capture_plan. ${progress}`,
    longest_previous_run_seconds: previous,
    progress_interval_seconds: progressIntervalSeconds,
  };
}

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
  /** The ends of stdout and stderr (redacted, bounded) when the run did not succeed or shows an exception; null otherwise. */
  output_tail: { stdout: StreamTail; stderr: StreamTail } | null;
  /** The last Python exception in the run's stderr (for a crash, what it died of); null when it shows none. */
  exception: RunException | null;
  /** The adapter's default analysis of the run, bounded (execute_capture_plan fills it; null elsewhere). */
  analysis: ReceiptAnalysis | null;
  next_tool: string;
  next_arguments: Record<string, unknown>;
};

/** Descendants inherit this marker even after setsid, so crash recovery can find a run's processes. */
export const runMarkerVariable = "FLAMEOX_RUN_ID";

export const trustedLocalWarning =
  "Trusted-local execution selected: the workload runs directly as this user with no enforced containment; it may modify files or use the network.";

export const trustedLocalLimitation = { source: "plan", code: "trusted_local_execution", message: trustedLocalWarning };

/** A plan states the warning in `warnings`; its limitation entry carries the code and points there instead of repeating it. */
const trustedLocalPlanLimitation = { ...trustedLocalLimitation, message: "Trusted-local execution: see warnings." };

/** The project-relative form of a path inside the project, "." for the root itself. */
export function projectRelative(projectRoot: string, path: string): string {
  return relative(projectRoot, path) || ".";
}

/** What plan_capture returns for an issued intent: the command, collector, preflight checks and limits it is bound to. */
export function capturePlanView(plan: {
  planId: string;
  requestDigest: string;
  intent: ConsumedPlan;
  preflightMode: string;
  checks: PreflightCheck[];
  artifactKinds: string[];
  limits: { max_output_bytes: number; max_artifact_bytes: number };
  workspaceRoot: string;
  projectRoot: string;
  createdAt: Date;
  expiresAtMs: number;
  guidance: ExecutionGuidance;
}): CapturePlan {
  const { intent } = plan;
  return {
    schema_version: 1,
    plan_id: plan.planId,
    run_id: intent.run_id,
    request_digest: plan.requestDigest,
    workspace_id: intent.workspace_id,
    workload_name: intent.workload_name,
    workload_definition_id: intent.workload_definition_id,
    adapter: intent.adapter,
    adapter_options: intent.adapter_options,
    parameters: intent.parameters,
    command: { ...commandView(intent, plan.projectRoot), argv: displayArgv(intent.argv, plan.projectRoot) },
    collector_argv: displayArgv(
      intent.collector_argv.map((argument) => argument.replace(plan.workspaceRoot, ".diagnostics")),
      plan.projectRoot,
    ),
    expected_artifact_kinds: plan.artifactKinds,
    expected_overhead: intent.expected_overhead,
    execution_policy: "trusted_local",
    containment: "uncontained",
    preflight: {
      mode: plan.preflightMode,
      disposition: "ready",
      checks: plan.checks.map((check) => ({ ...check, detail: displayArgv(check.detail.split(" "), plan.projectRoot).join(" ") })),
    },
    limits: {
      timeout_seconds: intent.timeout_seconds,
      max_output_bytes: plan.limits.max_output_bytes,
      max_artifact_bytes: plan.limits.max_artifact_bytes,
    },
    warnings: [trustedLocalWarning],
    limitation_details: [trustedLocalPlanLimitation],
    created_at: plan.createdAt.toISOString(),
    expires_at: new Date(plan.expiresAtMs).toISOString(),
    next_tool: "execute_capture_plan",
    execution_guidance: plan.guidance,
  };
}

/**
 * The command as a run manifest records it: argv as declared, project-relative cwd, timeout, environment
 * names. Results show argv through displayArgv (the plan here, get_run in RunService).
 */
export function commandView(intent: ConsumedPlan, projectRoot: string): CapturePlan["command"] {
  return {
    argv: intent.argv,
    cwd: projectRelative(projectRoot, intent.cwd),
    timeout_seconds: intent.timeout_seconds,
    environment_names: Object.keys(intent.environment).sort(),
  };
}

export function withTorchProfilerOptions(request: PlanCaptureRequest): PlanCaptureRequest {
  if (!request.torch_profiler_options) return request;
  if (request.adapter !== "torch.profiler") {
    throw planRefused("capture", `torch_profiler_options apply only to the torch.profiler adapter, not ${request.adapter}.`, {
      details: { field: "torch_profiler_options", adapter: request.adapter },
      remediation: ["Omit torch_profiler_options, or plan with adapter='torch.profiler'."],
    });
  }
  return { ...request, adapter_options: { ...request.adapter_options, ...request.torch_profiler_options }, torch_profiler_options: null };
}

/** adapter_options are checked against the adapter's own strict schema; unknown options are refused. */
export function parseAdapterOptions(adapter: CaptureAdapter, options: Record<string, unknown>): Record<string, unknown> {
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

export function refuseEscape(projectRoot: string, path: string, workloadName: string): void {
  const rel = relative(projectRoot, path);
  if (rel.startsWith("..") || isAbsolute(rel) || rel.split(sep).includes("..")) {
    throw executionRefused("The workload's cwd escapes the project root.", {
      remediation: ["Use a cwd inside the project (configure_workload; get_declared_workflow shows the definition)."],
      details: { next_tool: "configure_workload" },
      next: { tool: "get_declared_workflow", arguments: { kind: "workload", name: workloadName } },
    });
  }
}

/** An executable's digest, or null when it is gone or unreadable (which a recheck reports as changed). */
export async function safeDigest(path: string): Promise<string | null> {
  try {
    return await executableDigest(path);
  } catch {
    return null;
  }
}
