/**
 * Errors made from other errors: the same failure with a completed recovery or retold text, and
 * anything thrown turned into a FlameoxError without leaking stack traces to clients.
 */
import { internalError, storageQuotaExceeded } from "./factories.ts";
import { FlameoxError } from "./flameox-error.ts";
import type { Recovery } from "./recovery.ts";

/** The same error with the recovery its transport completed (arguments the caller can send as they are). */
export function withRecovery(error: FlameoxError, recovery: Recovery): FlameoxError {
  return new FlameoxError({
    code: error.code,
    message: error.message,
    remediation: error.remediation,
    details: error.details,
    retryable: error.retryable,
    runId: error.runId,
    recovery,
    cause: error,
  });
}

/** The same failure retold (e.g. with host paths replaced): code, remediation and recovery stay; the original is the cause. */
export function retold(error: FlameoxError, text: { message: string; details: Record<string, unknown> }): FlameoxError {
  return new FlameoxError({
    code: error.code,
    message: text.message,
    details: text.details,
    remediation: error.remediation,
    retryable: error.retryable,
    runId: error.runId,
    recovery: error.recovery,
    cause: error,
  });
}

/** Wraps anything thrown into a FlameoxError without leaking stack traces to clients. */
export function toFlameoxError(error: unknown): FlameoxError {
  if (error instanceof FlameoxError) return error;
  const code = (error as { code?: string } | null)?.code;
  if (code === "ENOSPC" || code === "EDQUOT") {
    return storageQuotaExceeded("The disk holding the workspace is full.", {
      remediation: ["Free storage on the workspace's disk, then repeat the call."],
      cause: error,
    });
  }
  return internalError(`Internal error: ${error instanceof Error ? error.message : String(error)}`.slice(0, 1000), { cause: error });
}
