import type { FlameoxError, Recovery } from "./errors.ts";

export type { Recovery, RecoveryKind } from "./errors.ts";

export const schemaVersion = 1;

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

/** The recovery an error carries; kept as a function so callers need not know where it lives. */
export function recoveryFor(error: FlameoxError): Recovery {
  return error.recovery;
}

export function projectError(error: FlameoxError): ErrorProjection {
  return {
    code: error.code,
    message: error.message,
    retryable: error.retryable,
    details: error.details,
    remediation: error.remediation,
    run_id: error.runId,
    recovery: error.recovery,
  };
}

export function successEnvelope<T>(result: T): Envelope<T> {
  return { schema_version: schemaVersion, ok: true, result, error: null };
}

export function failureEnvelope(error: FlameoxError): Envelope<never> {
  return { schema_version: schemaVersion, ok: false, result: null, error: projectError(error) };
}
