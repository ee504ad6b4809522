/**
 * What an agent should do after a failure. Every `FlameoxError` carries one `Recovery`, chosen by
 * the factory that built the error; the envelope only projects it.
 */
export type RecoveryKind =
  | "repeat_same_call"
  | "wait_then_repeat"
  | "correct_arguments"
  | "replan_capture"
  | "replan_reduction"
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

/**
 * The next tool of a recovery and, when they are known, its exact arguments. `callerSupplies` names the
 * fields only the caller can fill (its own content: a workload's argv, a file's path); every other
 * required field is in `arguments`.
 */
export type NextStep = { tool: string; arguments?: Record<string, unknown> | null; callerSupplies?: string[] };

/** Each tool a recovery can name, with its recovery kind and whether repeating the failed call is safe. */
const stepByTool: Record<string, { kind: RecoveryKind; safe: boolean }> = {
  list_declared_workflows: { kind: "discover_workflows", safe: false },
  get_declared_workflow: { kind: "discover_workflows", safe: false },
  configure_workload: { kind: "configure_workload", safe: false },
  configure_experiment: { kind: "configure_workload", safe: false },
  workload_configuration_status: { kind: "inspect_workload_configuration", safe: false },
  start_capability_setup: { kind: "start_capability_setup", safe: true },
  prepare_adapter: { kind: "prepare_adapter", safe: true },
  prepare_workload_dependencies: { kind: "prepare_workload_dependencies", safe: true },
  plan_capture: { kind: "replan_capture", safe: false },
  plan_reduction: { kind: "replan_reduction", safe: false },
  import_artifact: { kind: "import_artifact", safe: false },
  import_xctrace: { kind: "import_artifact", safe: false },
  list_capabilities: { kind: "inspect_capabilities", safe: false },
  list_runs: { kind: "discover_runs", safe: false },
  list_artifacts: { kind: "discover_artifacts", safe: false },
  initialize_workspace: { kind: "initialize_workspace", safe: false },
};

function recovery(kind: RecoveryKind, nextTool: string | null, safe: boolean, context?: Record<string, unknown>): Recovery {
  const built: Recovery = { kind, next_tool: nextTool, safe_to_repeat_same_call: safe, retry_after_ms: null };
  if (context) built.context = context;
  return built;
}

/**
 * Recovery through a named tool. Its kind comes from the tool; an extractor is safe to call (it
 * supersedes, never duplicates); any other tool is a manual step that names it. Arguments, when
 * given, travel as `context.arguments`.
 */
export function recoveryVia(step: NextStep): Recovery {
  const args = step.arguments ?? null;
  if (step.tool === "extract_perfetto") {
    const runId = args?.run_id;
    return recovery(
      "extract_perfetto",
      "extract_perfetto",
      true,
      typeof runId === "string" ? { kind: "extract_perfetto", run_id: runId, arguments: args } : undefined,
    );
  }
  const known = stepByTool[step.tool] ?? (step.tool.startsWith("extract_") ? { kind: "extract_evidence" as const, safe: true } : null);
  const supplies = step.callerSupplies && step.callerSupplies.length > 0 ? { caller_supplies: step.callerSupplies } : {};
  const context = args ? { arguments: args, ...supplies } : step.callerSupplies ? { arguments: {}, ...supplies } : undefined;
  return known ? recovery(known.kind, step.tool, known.safe, context) : recovery("manual", step.tool, false, context);
}

/** A person (or the agent, by hand) has to act; nothing can be called to repair it. */
export function manualRecovery(context?: Record<string, unknown>): Recovery {
  return recovery("manual", null, false, context);
}

/** Repeat the same call later; `retryAfterMs` is how long to wait first. */
export function repeatRecovery(kind: "repeat_same_call" | "wait_then_repeat", retryAfterMs: number): Recovery {
  return { kind, next_tool: null, safe_to_repeat_same_call: true, retry_after_ms: retryAfterMs };
}

/**
 * flameox.toml is invalid: a create may repair it, or a person fixes the file and re-checks its status. The
 * kind stays configure_workload (a configure tool's create repairs it); next_tool names the one that fits.
 */
export function configurationRecovery(
  repairable: boolean,
  diagnostic: string,
  repairTool: "configure_workload" | "configure_experiment" = "configure_workload",
): Recovery {
  // The definition itself is the caller's to write: the hint names the fields it must supply.
  if (repairable)
    return recovery("configure_workload", repairTool, false, {
      kind: "configure_workload",
      operation: "create",
      config_path: "flameox.toml",
      arguments: { operation: "create" },
      caller_supplies: repairTool === "configure_workload" ? ["name", "argv"] : ["name", "workload", "factors"],
    });
  return manualRecovery({
    kind: "manual_configuration",
    config_path: "flameox.toml",
    diagnostic: diagnostic.slice(0, 500),
    verification_tool: "workload_configuration_status",
  });
}
