/**
 * The one typed error hierarchy. Services throw `FlameoxError`; each transport translates it once
 * (MCP into the envelope, CLI into JSON or text plus an exit code).
 */
export const errorCodes = [
  "INVALID_ARGUMENTS",
  "WORKSPACE_NOT_FOUND",
  "WORKSPACE_INVALID",
  "RUN_NOT_FOUND",
  "CAPABILITY_UNAVAILABLE",
  "INVALID_CAPTURE_PLAN",
  "EXECUTION_REFUSED",
  "PROCESS_FAILED",
  "PROCESS_TIMEOUT",
  "PROCESS_CANCELLED",
  "ARTIFACT_TOO_LARGE",
  "ARTIFACT_INTEGRITY_FAILED",
  "ARTIFACT_PARSE_FAILED",
  "EVIDENCE_SCHEMA_MISMATCH",
  "COMPARISON_INVALID",
  "QUERY_BUDGET_EXCEEDED",
  "STORAGE_QUOTA_EXCEEDED",
  "WRITE_LOCK_TIMEOUT",
  "SENSITIVE_ARTIFACT_REFUSED",
  "REVISION_CONFLICT",
  "STALE_CURSOR",
  "INTERNAL_ERROR",
] as const;

export type ErrorCode = (typeof errorCodes)[number];

/** CLI exit codes of the spec: 0 ok, 1 negative result, 2 invalid input … 9 policy refusal. */
export const exitCodes = {
  ok: 0,
  negativeResult: 1,
  invalidInput: 2,
  capabilityUnavailable: 3,
  processFailed: 4,
  integrityFailure: 5,
  comparisonInvalid: 6,
  concurrencyFailure: 7,
  cancelledOrTimedOut: 8,
  policyRefusal: 9,
} as const;

const exitCodeByError: Record<ErrorCode, number> = {
  INVALID_ARGUMENTS: exitCodes.invalidInput,
  WORKSPACE_NOT_FOUND: exitCodes.invalidInput,
  WORKSPACE_INVALID: exitCodes.integrityFailure,
  RUN_NOT_FOUND: exitCodes.negativeResult,
  CAPABILITY_UNAVAILABLE: exitCodes.capabilityUnavailable,
  INVALID_CAPTURE_PLAN: exitCodes.policyRefusal,
  EXECUTION_REFUSED: exitCodes.policyRefusal,
  PROCESS_FAILED: exitCodes.processFailed,
  PROCESS_TIMEOUT: exitCodes.cancelledOrTimedOut,
  PROCESS_CANCELLED: exitCodes.cancelledOrTimedOut,
  ARTIFACT_TOO_LARGE: exitCodes.integrityFailure,
  ARTIFACT_INTEGRITY_FAILED: exitCodes.integrityFailure,
  ARTIFACT_PARSE_FAILED: exitCodes.integrityFailure,
  EVIDENCE_SCHEMA_MISMATCH: exitCodes.integrityFailure,
  COMPARISON_INVALID: exitCodes.comparisonInvalid,
  QUERY_BUDGET_EXCEEDED: exitCodes.integrityFailure,
  STORAGE_QUOTA_EXCEEDED: exitCodes.integrityFailure,
  WRITE_LOCK_TIMEOUT: exitCodes.concurrencyFailure,
  SENSITIVE_ARTIFACT_REFUSED: exitCodes.policyRefusal,
  REVISION_CONFLICT: exitCodes.concurrencyFailure,
  STALE_CURSOR: exitCodes.concurrencyFailure,
  INTERNAL_ERROR: exitCodes.negativeResult,
};

export function exitCodeFor(code: ErrorCode): number {
  return exitCodeByError[code];
}

export type FieldProblem = { field: string; message: string; type: string };

export type ErrorOptions = {
  code: ErrorCode;
  message: string;
  remediation?: string[];
  details?: Record<string, unknown>;
  retryable?: boolean;
  runId?: string | null;
  /** The tool an agent should call next; recovery is derived from it. */
  nextTool?: string | null;
  /** Exact arguments for the next tool, when they are known. */
  nextArguments?: Record<string, unknown> | null;
  cause?: unknown;
};

export class FlameoxError extends Error {
  readonly code: ErrorCode;
  readonly remediation: string[];
  readonly details: Record<string, unknown>;
  readonly retryable: boolean;
  readonly runId: string | null;
  readonly nextTool: string | null;
  readonly nextArguments: Record<string, unknown> | null;

  constructor(options: ErrorOptions) {
    super(options.message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "FlameoxError";
    this.code = options.code;
    this.remediation = options.remediation ?? [];
    this.details = options.details ?? {};
    this.retryable = options.retryable ?? options.code === "WRITE_LOCK_TIMEOUT";
    this.runId = options.runId ?? null;
    this.nextTool = options.nextTool ?? (typeof options.details?.next_tool === "string" ? options.details.next_tool : null);
    this.nextArguments = options.nextArguments ?? null;
  }
}

export function invalidArguments(subject: string, fields: FieldProblem[], remediation?: string[]): FlameoxError {
  const summary = fields.map((field) => `${field.field}: ${field.message}`).join("; ");
  return new FlameoxError({
    code: "INVALID_ARGUMENTS",
    message: `Invalid arguments for ${subject}: ${summary}`,
    details: { fields },
    remediation: remediation ?? [`Match the ${subject} input schema and retry.`],
  });
}

export function workspaceNotFound(root: string): FlameoxError {
  return new FlameoxError({
    code: "WORKSPACE_NOT_FOUND",
    message: `No flameox workspace exists at ${root}.`,
    remediation: ["Verify the fixed project root, then call initialize_workspace (CLI: flameox init)."],
    nextTool: "initialize_workspace",
    nextArguments: {},
  });
}

/** Wraps anything thrown into a FlameoxError without leaking stack traces to clients. */
export function toFlameoxError(error: unknown): FlameoxError {
  if (error instanceof FlameoxError) return error;
  const code = (error as { code?: string } | null)?.code;
  if (code === "ENOSPC" || code === "EDQUOT") {
    return new FlameoxError({
      code: "STORAGE_QUOTA_EXCEEDED",
      message: "The disk holding the workspace is full.",
      remediation: ["Free storage on the workspace's disk, then repeat the call."],
      cause: error,
    });
  }
  return new FlameoxError({
    code: "INTERNAL_ERROR",
    message: `Internal error: ${error instanceof Error ? error.message : String(error)}`.slice(0, 1000),
    remediation: ["Inspect the flameox log on stderr; report the issue if it repeats."],
    cause: error,
  });
}
