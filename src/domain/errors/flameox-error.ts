import { recoveryVia, manualRecovery, repeatRecovery, type Recovery } from "./recovery.ts";

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

/** CLI exit codes (docs/errors.md): 0 ok, 1 negative result, 2 invalid input … 9 policy refusal. */
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

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === "string" && (errorCodes as readonly string[]).includes(value);
}

export type FieldProblem = { field: string; message: string; type: string };

export type ErrorOptions = {
  code: ErrorCode;
  message: string;
  remediation?: string[];
  details?: Record<string, unknown>;
  retryable?: boolean;
  runId?: string | null;
  /** What to do next; without one, the code's own recovery (see `recoveryForCode`). */
  recovery?: Recovery;
  cause?: unknown;
};

/**
 * The recovery a code implies when the error names no better one. Factories in ./factories.ts pass
 * an explicit recovery; this covers errors built directly from a code.
 */
export function recoveryForCode(code: ErrorCode, retryable: boolean): Recovery {
  switch (code) {
    case "WORKSPACE_NOT_FOUND":
      return recoveryVia({ tool: "initialize_workspace" });
    case "RUN_NOT_FOUND":
      return recoveryVia({ tool: "list_runs" });
    case "CAPABILITY_UNAVAILABLE":
      return recoveryVia({ tool: "list_capabilities" });
    case "INVALID_CAPTURE_PLAN":
    case "PROCESS_TIMEOUT":
      return recoveryVia({ tool: "plan_capture" });
    case "WRITE_LOCK_TIMEOUT":
      return repeatRecovery("wait_then_repeat", 100);
    default:
      return retryable ? repeatRecovery("repeat_same_call", 250) : manualRecovery();
  }
}

export class FlameoxError extends Error {
  readonly code: ErrorCode;
  readonly remediation: string[];
  readonly details: Record<string, unknown>;
  readonly retryable: boolean;
  readonly runId: string | null;
  readonly recovery: Recovery;

  constructor(options: ErrorOptions) {
    super(options.message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "FlameoxError";
    this.code = options.code;
    this.remediation = options.remediation ?? [];
    this.details = options.details ?? {};
    this.retryable = options.retryable ?? options.code === "WRITE_LOCK_TIMEOUT";
    this.runId = options.runId ?? null;
    this.recovery = options.recovery ?? recoveryForCode(options.code, this.retryable);
  }

  /** The tool the recovery names, if any. */
  get nextTool(): string | null {
    return this.recovery.next_tool;
  }

  /** The exact arguments for the next tool, when the recovery carries them. */
  get nextArguments(): Record<string, unknown> | null {
    const args = this.recovery.context?.arguments;
    return args !== null && typeof args === "object" ? (args as Record<string, unknown>) : null;
  }
}
