import type * as v from "valibot";
import { toJsonSchema } from "@valibot/to-json-schema";
import { envelopeSchema } from "../domain/results/envelope.ts";

export type JsonSchema = Record<string, unknown>;

/**
 * A tool's inputSchema in the plain JSON Schema every host takes as it is (gemini-cli old and new,
 * older Codex converters, Claude Code, VS Code, Cursor): every property and union branch has one
 * `type`; no null branches (an optional field is absent, not null), no `const`, `propertyNames`,
 * exclusive bounds, `$ref` or `$defs`. The server's own valibot validation stays exact: it still
 * refuses unknown keys, and still accepts the null that contract clients send for an optional field.
 */
export function inputJsonSchema(schema: v.GenericSchema): JsonSchema {
  const json = portable(toJsonSchema(schema, { errorMode: "ignore" }) as JsonSchema);
  if (json.type !== "object") return { type: "object", properties: {} };
  return json;
}

/**
 * The envelope a tool answers, with `result` typed by the tool's own result schema. Clients validate
 * structuredContent against it (errors included), so it is derived from the very schema the service's
 * result type is inferred from; conversion problems throw, and the registry tests surface them.
 */
export function outputJsonSchema(result: v.GenericSchema): JsonSchema {
  const json = toJsonSchema(envelopeSchema(result), { errorMode: "throw" }) as JsonSchema;
  delete json.$schema;
  return json;
}

const isSchema = (value: unknown): value is JsonSchema => typeof value === "object" && value !== null && !Array.isArray(value);

function portable(node: JsonSchema): JsonSchema {
  let out: JsonSchema = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === "$schema" || key === "propertyNames") continue;
    if (key === "properties" && isSchema(value))
      out.properties = Object.fromEntries(Object.entries(value).map(([name, property]) => [name, portable(property as JsonSchema)]));
    else if ((key === "items" || key === "additionalProperties") && isSchema(value)) out[key] = portable(value);
    else if (key === "anyOf" && Array.isArray(value)) out.anyOf = value.map((branch) => portable(branch as JsonSchema));
    else out[key] = value;
  }
  if (Array.isArray(out.anyOf)) {
    const branches = (out.anyOf as JsonSchema[])
      .flatMap((branch) => (Array.isArray(branch.anyOf) && Object.keys(branch).length === 1 ? (branch.anyOf as JsonSchema[]) : [branch]))
      .filter((branch) => branch.type !== "null");
    const { anyOf: _union, ...rest } = out;
    out = branches.length === 1 ? { ...branches[0], ...rest } : { ...rest, anyOf: branches };
  }
  if ("const" in out) {
    const { const: value, ...rest } = out;
    out = { type: jsonType(value), ...rest, enum: [value] };
  }
  if (typeof out.exclusiveMinimum === "number") {
    // Integers move the bound inward; for numbers the published bound is inclusive and the server's stays exclusive.
    out.minimum = out.type === "integer" ? out.exclusiveMinimum + 1 : out.exclusiveMinimum;
    delete out.exclusiveMinimum;
  }
  if (typeof out.exclusiveMaximum === "number") {
    out.maximum = out.type === "integer" ? out.exclusiveMaximum - 1 : out.exclusiveMaximum;
    delete out.exclusiveMaximum;
  }
  // Size bounds are a large share of the catalog a model reads on every turn and tell it little; the
  // server enforces them and its INVALID_ARGUMENTS names the bound that failed. Patterns and numeric
  // ranges (page maximums, thresholds) stay: they say what a value may be.
  for (const keyword of sizeKeywords) delete out[keyword];
  // A count's lower bound of 1 and an id's bound of the largest safe integer say nothing a model would miss.
  if (out.type === "integer" && out.minimum === 1) delete out.minimum;
  if (typeof out.maximum === "number" && out.maximum >= Number.MAX_SAFE_INTEGER) delete out.maximum;
  if (out.default === null || isEmpty(out.default) || out.default === false) delete out.default;
  if (Array.isArray(out.required) && out.required.length === 0) delete out.required;
  // Closedness is the server's to enforce (valibot refuses unknown keys at every level and names them);
  // `additionalProperties: false` on every object told a model nothing its properties did not, cost a
  // twentieth of the catalog, and is a keyword older Gemini declarations refuse. A map whose values may
  // be of several types says so in its description; its value union is left to the server too.
  if (out.additionalProperties === false) delete out.additionalProperties;
  if (isSchema(out.additionalProperties) && Array.isArray(out.additionalProperties.anyOf)) delete out.additionalProperties;
  return out;
}

const sizeKeywords = ["minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties"];

/** An empty list or map: what an omitted collection means anyway. */
function isEmpty(value: unknown): boolean {
  return typeof value === "object" && value !== null && Object.keys(value).length === 0;
}

function jsonType(value: unknown): string {
  if (typeof value === "number") return Number.isInteger(value) ? "integer" : "number";
  return typeof value;
}
