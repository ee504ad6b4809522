import type * as v from "valibot";
import { toJsonSchema } from "@valibot/to-json-schema";

export type JsonSchema = Record<string, unknown>;

/** Closed object schemas everywhere: unknown keys are refused, as the interface contract asks. */
export function inputJsonSchema(schema: v.GenericSchema): JsonSchema {
  const json = toJsonSchema(schema, { errorMode: "ignore" }) as JsonSchema;
  delete json.$schema;
  if (json.type !== "object") return { type: "object", properties: {}, additionalProperties: false };
  return json;
}

const errorSchema: JsonSchema = {
  type: "object",
  properties: {
    code: { type: "string" },
    message: { type: "string" },
    retryable: { type: "boolean" },
    details: { type: "object" },
    remediation: { type: "array", items: { type: "string" } },
    run_id: { type: ["string", "null"] },
    recovery: {
      type: "object",
      properties: {
        kind: { type: "string" },
        next_tool: { type: ["string", "null"] },
        safe_to_repeat_same_call: { type: "boolean" },
        retry_after_ms: { type: ["integer", "null"] },
        context: { type: "object" },
      },
      required: ["kind", "next_tool", "safe_to_repeat_same_call", "retry_after_ms"],
    },
  },
  required: ["code", "message", "retryable", "details", "remediation", "run_id", "recovery"],
};

/** Every tool answers the same envelope; `result` is the tool's domain model. */
export const envelopeJsonSchema: JsonSchema = {
  type: "object",
  properties: {
    schema_version: { type: "integer", const: 1 },
    ok: { type: "boolean" },
    result: { type: ["object", "null"] },
    error: { anyOf: [errorSchema, { type: "null" }] },
  },
  required: ["schema_version", "ok", "result", "error"],
};
