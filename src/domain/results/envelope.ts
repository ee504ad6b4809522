/**
 * The result envelope as a valibot schema: what a tool's published outputSchema is made from. Objects are
 * open (v.object), so a field added to a result later never makes a client's validation of it fail.
 */
import * as v from "valibot";

const RecoverySchema = v.object({
  kind: v.string(),
  next_tool: v.nullable(v.string()),
  safe_to_repeat_same_call: v.boolean(),
  retry_after_ms: v.nullable(v.number()),
  context: v.optional(v.record(v.string(), v.unknown())),
});

export const ErrorProjectionSchema = v.object({
  code: v.string(),
  message: v.string(),
  retryable: v.boolean(),
  details: v.record(v.string(), v.unknown()),
  remediation: v.array(v.string()),
  run_id: v.nullable(v.string()),
  recovery: RecoverySchema,
});

/** Success carries `result` and a null error; failure a null result and the error. */
export function envelopeSchema<Result extends v.GenericSchema>(result: Result) {
  return v.object({
    schema_version: v.literal(1),
    ok: v.boolean(),
    result: v.nullable(result),
    error: v.nullable(ErrorProjectionSchema),
  });
}
