import type { FlameoxError } from "./errors.ts";

export const schemaVersion = 1;

export type RecoveryKind =
  | "repeat_same_call"
  | "wait_then_repeat"
  | "replan_capture"
  | "initialize_workspace"
  | "configure_workload"
  | "inspect_workload_configuration"
  | "start_capability_setup"
  | "prepare_adapter"
  | "prepare_workload_dependencies"
  | "inspect_capabilities"
  | "discover_workflows"
  | "discover_runs"
  | "discover_artifacts"
  | "import_artifact"
  | "extract_evidence"
  | "extract_perfetto"
  | "manual";

export type Recovery = {
  kind: RecoveryKind;
  next_tool: string | null;
  safe_to_repeat_same_call: boolean;
  retry_after_ms: number | null;
  context?: Record<string, unknown>;
};

export type ErrorProjection = {
  code: string;
  message: string;
  retryable: boolean;
  details: Record<string, unknown>;
  remediation: string[];
  run_id: string | null;
  recovery: Recovery;
};

export type Envelope<T> = {
  schema_version: number;
  ok: boolean;
  result: T | null;
  error: ErrorProjection | null;
};

const recoveryByTool: Record<string, { kind: RecoveryKind; safe: boolean }> = {
  list_declared_workflows: { kind: "discover_workflows", safe: false },
  get_declared_workflow: { kind: "discover_workflows", safe: false },
  configure_workload: { kind: "configure_workload", safe: false },
  workload_configuration_status: { kind: "inspect_workload_configuration", safe: false },
  start_capability_setup: { kind: "start_capability_setup", safe: true },
  prepare_adapter: { kind: "prepare_adapter", safe: true },
  prepare_workload_dependencies: { kind: "prepare_workload_dependencies", safe: true },
  plan_capture: { kind: "replan_capture", safe: false },
  import_artifact: { kind: "import_artifact", safe: false },
  extract_perfetto: { kind: "extract_perfetto", safe: true },
  list_capabilities: { kind: "inspect_capabilities", safe: false },
  list_runs: { kind: "discover_runs", safe: false },
  list_artifacts: { kind: "discover_artifacts", safe: false },
  initialize_workspace: { kind: "initialize_workspace", safe: false },
};

/** Recovery is derived once, here, so every transport tells an agent the same next step. */
export function recoveryFor(error: FlameoxError): Recovery {
  const context = error.nextArguments ? { arguments: error.nextArguments } : undefined;
  const build = (kind: RecoveryKind, nextTool: string | null, safe: boolean, retryAfter: number | null = null): Recovery => {
    const recovery: Recovery = { kind, next_tool: nextTool, safe_to_repeat_same_call: safe, retry_after_ms: retryAfter };
    if (context) recovery.context = context;
    return recovery;
  };
  // An invalid flameox.toml: either a create that repairs it, or a person fixes the file by hand.
  if (error.details.invalid_configuration === true) {
    if (error.nextTool === "configure_workload") {
      return {
        kind: "configure_workload",
        next_tool: "configure_workload",
        safe_to_repeat_same_call: false,
        retry_after_ms: null,
        context: { kind: "configure_workload", operation: "create", config_path: "flameox.toml" },
      };
    }
    const diagnostic = String((error.details.diagnostics as unknown[] | undefined)?.[0] ?? error.details.diagnostic ?? error.message).slice(
      0,
      500,
    );
    return {
      kind: "manual",
      next_tool: null,
      safe_to_repeat_same_call: false,
      retry_after_ms: null,
      context: {
        kind: "manual_configuration",
        config_path: "flameox.toml",
        diagnostic,
        verification_tool: "workload_configuration_status",
      },
    };
  }
  if (error.nextTool === "extract_perfetto") {
    const runId = error.nextArguments?.run_id ?? error.details.run_id;
    return {
      kind: "extract_perfetto",
      next_tool: "extract_perfetto",
      safe_to_repeat_same_call: true,
      retry_after_ms: null,
      ...(typeof runId === "string"
        ? { context: { kind: "extract_perfetto", run_id: runId, arguments: error.nextArguments ?? { run_id: runId } } }
        : {}),
    };
  }
  if (error.code === "RUN_NOT_FOUND" || error.details.missing_entity === "run") return build("discover_runs", "list_runs", false);
  if (error.details.missing_entity === "artifact") return build("discover_artifacts", "list_artifacts", false);
  if (error.nextTool) {
    const known = recoveryByTool[error.nextTool];
    if (known) return build(known.kind, error.nextTool, known.safe);
    if (error.nextTool.startsWith("extract_")) return build("extract_evidence", error.nextTool, true);
    if (error.nextTool === "manual") return build("manual", null, false);
    return build("manual", error.nextTool, false);
  }
  switch (error.code) {
    case "WORKSPACE_NOT_FOUND":
      return build("initialize_workspace", "initialize_workspace", false);
    case "CAPABILITY_UNAVAILABLE":
      return build("inspect_capabilities", "list_capabilities", false);
    case "INVALID_CAPTURE_PLAN":
    case "PROCESS_TIMEOUT":
      return build("replan_capture", "plan_capture", false);
    case "WRITE_LOCK_TIMEOUT":
      return build("wait_then_repeat", null, true, 100);
    default:
      return error.retryable ? build("repeat_same_call", null, true, 250) : build("manual", null, false);
  }
}

export function projectError(error: FlameoxError): ErrorProjection {
  return {
    code: error.code,
    message: error.message,
    retryable: error.retryable,
    details: error.details,
    remediation: error.remediation,
    run_id: error.runId,
    recovery: recoveryFor(error),
  };
}

export function successEnvelope<T>(result: T): Envelope<T> {
  return { schema_version: schemaVersion, ok: true, result, error: null };
}

export function failureEnvelope(error: FlameoxError): Envelope<never> {
  return { schema_version: schemaVersion, ok: false, result: null, error: projectError(error) };
}
