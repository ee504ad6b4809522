import { FlameoxError, type ErrorCode, type FieldProblem } from "./flameox-error.ts";
import { configurationRecovery, recoveryVia, type NextStep, type Recovery } from "./recovery.ts";

/**
 * Typed factories: each kind of failure is built in one place, with the recovery that fits it, so
 * no caller assembles a code, details and next tool by hand and no transport has to guess.
 * `next` names the tool an agent should call next, with exact arguments when they are known.
 */
export type FailureOptions = {
  details?: Record<string, unknown>;
  remediation?: string[];
  runId?: string | null;
  next?: NextStep | null;
  retryable?: boolean;
  cause?: unknown;
};

function failure(code: ErrorCode, message: string, options: FailureOptions = {}, recovery?: Recovery): FlameoxError {
  return new FlameoxError({
    code,
    message,
    ...(options.details ? { details: options.details } : {}),
    ...(options.remediation ? { remediation: options.remediation } : {}),
    ...(options.runId !== undefined ? { runId: options.runId } : {}),
    ...(options.retryable !== undefined ? { retryable: options.retryable } : {}),
    ...(options.cause !== undefined ? { cause: options.cause } : {}),
    ...(recovery ? { recovery } : options.next ? { recovery: recoveryVia(options.next) } : {}),
  });
}

// ── Arguments and missing entities ────────────────────────────────────────────────────────────

export function invalidArguments(subject: string, fields: FieldProblem[], remediation?: string[]): FlameoxError {
  const summary = fields.map((field) => `${field.field}: ${field.message}`).join("; ");
  return failure("INVALID_ARGUMENTS", `Invalid arguments for ${subject}: ${summary}`, {
    details: { fields },
    remediation: remediation ?? [`Match the ${subject} input schema and retry.`],
  });
}

/** Arguments that parse but do not fit together (or fit this workspace); `fields` names them. */
export function invalidInput(message: string, fields: FieldProblem[], options: FailureOptions = {}): FlameoxError {
  return failure("INVALID_ARGUMENTS", message, { ...options, details: { fields, ...options.details } });
}

/** A request that is wrong as a whole (a command-line flag, a structured option) rather than field by field. */
export function invalidRequest(message: string, options: FailureOptions = {}): FlameoxError {
  return failure("INVALID_ARGUMENTS", message, options);
}

/** The stored records a request can name by id. Runs have their own contract code, RUN_NOT_FOUND. */
export type StoredEntity =
  | "artifact"
  | "experiment"
  | "trial"
  | "run_set"
  | "investigation"
  | "hypothesis"
  | "finding"
  | "analysis"
  | "comparison"
  | "generation"
  | "observation"
  | "operation"
  | "pipeline"
  | "reduction";

/**
 * No stored record has this id. The contract has a NOT_FOUND code only for runs and workspaces;
 * for every other record the closest contract code is INVALID_ARGUMENTS: the caller passed an id
 * that names nothing here (WORKSPACE_INVALID would claim the workspace itself is damaged). The
 * recovery is the tool that lists what does exist, when there is one.
 */
export function notFound(
  entity: StoredEntity,
  id: string,
  options: { field?: string; list?: NextStep | null; remediation?: string[]; details?: Record<string, unknown>; message?: string } = {},
): FlameoxError {
  const field = options.field ?? `${entity}_id`;
  const noun = entity.replaceAll("_", " ");
  return failure("INVALID_ARGUMENTS", options.message ?? `No ${noun} with id ${id} exists in this workspace.`, {
    details: {
      missing_entity: entity,
      [field]: id,
      ...(options.list ? { next_tool: options.list.tool } : {}),
      ...options.details,
      fields: [{ field, message: `no ${noun} with this id exists`, type: "value_error" }],
    },
    remediation: options.remediation ?? [
      options.list ? `Call ${options.list.tool} to choose an existing ${noun}.` : "Pass the id exactly as a receipt returned it.",
    ],
    next: options.list ?? null,
  });
}

/** The contract's recovery for a missing run is exactly {discover_runs, list_runs}, without arguments. */
export function runNotFound(runId: string, options: { message?: string; remediation?: string[] } = {}): FlameoxError {
  return failure("RUN_NOT_FOUND", options.message ?? `No run with id ${runId} exists in this workspace.`, {
    details: { missing_entity: "run", run_id: runId },
    remediation: options.remediation ?? ["Call list_runs to choose an existing run."],
    next: { tool: "list_runs" },
  });
}

export function artifactNotFound(
  artifactId: string,
  options: { details?: Record<string, unknown>; message?: string; remediation?: string[]; list?: NextStep } = {},
): FlameoxError {
  return notFound("artifact", artifactId, {
    list: options.list ?? { tool: "list_artifacts" },
    remediation: options.remediation ?? ["Call list_artifacts to choose an existing artifact."],
    ...(options.details ? { details: options.details } : {}),
    ...(options.message ? { message: options.message } : {}),
  });
}

// ── Workspace and configuration ───────────────────────────────────────────────────────────────

/** Names the project by its folder's name only: the message reaches agents, which never see host paths. */
export function workspaceNotFound(root: string): FlameoxError {
  const project =
    root
      .split(/[\\/]/)
      .filter((part) => part !== "")
      .pop() ?? root;
  return failure("WORKSPACE_NOT_FOUND", `No flameox workspace exists in the project folder '${project}' (.diagnostics is missing).`, {
    details: { project_folder: project },
    remediation: ["Verify the fixed project root, then call initialize_workspace (CLI: flameox init)."],
    next: { tool: "initialize_workspace", arguments: {} },
  });
}

/** The workspace's own files (identity, policy, catalog, state) are missing or damaged. */
export function workspaceInvalid(message: string, options: FailureOptions = {}): FlameoxError {
  return failure("WORKSPACE_INVALID", message, options);
}

/**
 * flameox.toml does not parse or validate. `repairable`: a configure_workload create can write a
 * valid file; otherwise a person edits it and checks with workload_configuration_status.
 */
export function invalidConfiguration(
  message: string,
  options: {
    repairable: boolean;
    /** The configure tool whose create can repair the file; default configure_workload. */
    repairTool?: "configure_workload" | "configure_experiment";
    diagnostic?: string;
    details?: Record<string, unknown>;
    remediation?: string[];
  },
): FlameoxError {
  const diagnostic = options.diagnostic ?? message;
  const repairTool = options.repairTool ?? "configure_workload";
  return failure(
    "WORKSPACE_INVALID",
    message,
    {
      details: {
        invalid_configuration: true,
        ...(options.repairable ? { next_tool: repairTool } : {}),
        ...options.details,
      },
      ...(options.remediation ? { remediation: options.remediation } : {}),
    },
    configurationRecovery(options.repairable, diagnostic, repairTool),
  );
}

/** A workload or experiment name that flameox.toml does not declare; recovery lists the declared ones. */
export function undeclared(
  kind: "workload" | "experiment",
  name: string,
  options: { declared?: string[]; remediation?: string[] } = {},
): FlameoxError {
  return failure("WORKSPACE_INVALID", `No ${kind} named '${name}' is declared in flameox.toml.`, {
    details: {
      next_tool: "list_declared_workflows",
      kind,
      name,
      ...(options.declared ? { declared: [...options.declared].sort().slice(0, 50) } : {}),
    },
    remediation: options.remediation ?? [`Call list_declared_workflows(kind='${kind}') to see the declared names.`],
    next: { tool: "list_declared_workflows", arguments: { kind } },
  });
}

// ── Plans, capabilities, execution ────────────────────────────────────────────────────────────

/**
 * A capture or experiment plan cannot run: missing, expired, consumed, stale or ill-formed. The
 * recovery is to plan again (with the same request when it is known); nothing was executed.
 */
export function planRefused(
  plan: "capture" | "experiment" | "reduction",
  message: string,
  options: {
    details?: Record<string, unknown>;
    remediation?: string[];
    replanArguments?: Record<string, unknown> | null;
    next?: NextStep;
  } = {},
): FlameoxError {
  const replan = `plan_${plan}`;
  return failure("INVALID_CAPTURE_PLAN", message, {
    ...(options.details ? { details: options.details } : {}),
    remediation: options.remediation ?? [`Call ${replan} again; nothing was executed.`],
    next: options.next ?? { tool: replan, arguments: options.replanArguments ?? null },
  });
}

/**
 * A tool, interpreter, permission or adapter this needs is not available here. The default next
 * step re-checks capabilities; a caller that knows the managed setup action passes it as `next`
 * (start_capability_setup with its adapters and idempotency key).
 */
export function capabilityUnavailable(message: string, options: FailureOptions = {}): FlameoxError {
  return failure("CAPABILITY_UNAVAILABLE", message, { ...options, next: options.next ?? { tool: "list_capabilities" } });
}

/** The evidence exists as a native artifact but has not been normalized: run the extractor first. */
export function needsExtraction(
  tool: string,
  runId: string,
  message: string,
  options: { artifactId?: string; remediation?: string[]; details?: Record<string, unknown> } = {},
): FlameoxError {
  return failure("CAPABILITY_UNAVAILABLE", message, {
    details: { next_tool: tool, run_id: runId, ...(options.artifactId ? { artifact_id: options.artifactId } : {}), ...options.details },
    remediation: options.remediation ?? [`Call ${tool} with run_id='${runId}', then repeat this call.`],
    next: { tool, arguments: { run_id: runId } },
  });
}

export function executionRefused(message: string, options: FailureOptions = {}): FlameoxError {
  return failure("EXECUTION_REFUSED", message, options);
}

/**
 * A workload declares environment entries that execution would always refuse (loader, interpreter
 * or debugger controls, credentials): refused when declared, naming every offending key, so nothing
 * is written that could never run. The recovery is configure_workload again without them.
 */
/** `retry`: the configure_workload arguments without the refused entries, when the refused call is known. */
export function environmentRefused(
  workloadName: string,
  refused: { name: string; reason: string }[],
  retry: Record<string, unknown> | null = null,
): FlameoxError {
  const names = refused.map((entry) => entry.name);
  return failure(
    "EXECUTION_REFUSED",
    `Workload ${workloadName} declares environment variables flameox never passes to a child: ${names.join(", ")}.`,
    {
      details: {
        variables: names,
        fields: refused.map((entry) => ({ field: `environment.${entry.name}`, message: entry.reason, type: "refused_environment" })),
        next_tool: "configure_workload",
      },
      remediation: [`Declare the workload again without ${names.join(", ")}; nothing was written to flameox.toml.`],
      next: { tool: "configure_workload", arguments: retry },
    },
  );
}

/**
 * A reduction plan whose bound identities (predicate workload and executable, original artifact,
 * engine, policy) changed after planning: nothing ran; plan again with the same request.
 */
export function reductionPlanStale(reasons: string[], request: Record<string, unknown>): FlameoxError {
  return failure("EXECUTION_REFUSED", `The reduction plan is stale: ${reasons.join("; ")}.`, {
    details: { reasons, next_tool: "plan_reduction" },
    remediation: ["Call plan_reduction again with the same request and execute the new plan_id; nothing was executed."],
    next: { tool: "plan_reduction", arguments: { request } },
  });
}

export function processFailed(message: string, options: FailureOptions = {}): FlameoxError {
  return failure("PROCESS_FAILED", message, options);
}

export function processTimeout(message: string, options: FailureOptions = {}): FlameoxError {
  return failure("PROCESS_TIMEOUT", message, options);
}

export function processCancelled(message: string, options: FailureOptions = {}): FlameoxError {
  return failure("PROCESS_CANCELLED", message, options);
}

// ── Evidence, comparisons, budgets ────────────────────────────────────────────────────────────

export function comparisonInvalid(message: string, options: FailureOptions = {}): FlameoxError {
  return failure("COMPARISON_INVALID", message, options);
}

export function queryBudgetExceeded(limit: number, maximum: number): FlameoxError {
  return failure("QUERY_BUDGET_EXCEEDED", `limit must be between 1 and ${maximum}.`, {
    details: { limit, max_row_limit: maximum },
    remediation: [`Pass a limit between 1 and ${maximum} and page with the cursor.`],
  });
}

export function artifactTooLarge(size: number, limit: number): FlameoxError {
  return failure("ARTIFACT_TOO_LARGE", `The artifact is ${size} bytes, over the workspace limit of ${limit} bytes.`, {
    details: { byte_length: size, max_artifact_bytes: limit },
    remediation: ["Raise limits.max_artifact_bytes in .diagnostics/config.toml, or capture a shorter workload."],
  });
}

/** An input whose reading would pass one of an extractor's hard bounds (inflated size, rows, time). */
export function extractionBoundExceeded(message: string, options: FailureOptions = {}): FlameoxError {
  return failure("ARTIFACT_TOO_LARGE", message, options);
}

/** A native artifact that its extractor cannot read (truncated, wrong format, unsupported producer version). */
export function artifactParseFailed(message: string, options: FailureOptions = {}): FlameoxError {
  return failure("ARTIFACT_PARSE_FAILED", message, options);
}

export function artifactIntegrityFailed(message: string, options: FailureOptions = {}): FlameoxError {
  return failure("ARTIFACT_INTEGRITY_FAILED", message, options);
}

export function sensitiveArtifactRefused(message: string, options: FailureOptions = {}): FlameoxError {
  return failure("SENSITIVE_ARTIFACT_REFUSED", message, options);
}

export function storageQuotaExceeded(message: string, options: FailureOptions = {}): FlameoxError {
  return failure("STORAGE_QUOTA_EXCEEDED", message, options);
}

// ── Concurrency and staleness ─────────────────────────────────────────────────────────────────

export function writeLockTimeout(
  lock: string,
  message: string,
  options: { details?: Record<string, unknown>; remediation?: string[]; cause?: unknown } = {},
): FlameoxError {
  return failure("WRITE_LOCK_TIMEOUT", message, {
    retryable: true,
    details: { lock, ...options.details },
    remediation: options.remediation ?? ["Wait for the other flameox operation to finish, then repeat the call."],
    ...(options.cause !== undefined ? { cause: options.cause } : {}),
  });
}

/**
 * The caller's view is stale (an expected revision or configuration id that moved on). The
 * recovery re-reads the current state with `fresh`, whose arguments give the current identity.
 */
export function staleInput(message: string, options: FailureOptions & { fresh?: NextStep | null } = {}): FlameoxError {
  return failure("REVISION_CONFLICT", message, { ...options, next: options.fresh ?? options.next ?? null });
}

export function staleCursor(reason: string): FlameoxError {
  return failure("STALE_CURSOR", `The cursor cannot be used for this request: ${reason}.`, {
    remediation: ["Repeat the request without a cursor to start from the first page."],
  });
}

// ── Anything else ─────────────────────────────────────────────────────────────────────────────

export function internalError(message: string, options: { cause?: unknown; remediation?: string[] } = {}): FlameoxError {
  return failure("INTERNAL_ERROR", message, {
    remediation: options.remediation ?? ["Inspect the flameox log on stderr; report the issue if it repeats."],
    ...(options.cause !== undefined ? { cause: options.cause } : {}),
  });
}

/** Writing evidence failed for a reason that is not the input's (the extractor's or the schema's fault). */
export function evidenceSchemaMismatch(message: string, options: FailureOptions = {}): FlameoxError {
  return failure("EVIDENCE_SCHEMA_MISMATCH", message, options);
}
