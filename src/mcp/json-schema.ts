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
  return withStructuredArgumentsAsSignatures(json);
}

/**
 * Arguments are published typed one level deep. An argument that is itself a structured object (or a
 * list of them) is published as `object`/`array` with its shape as a signature in its description,
 * `{name:string,included?:boolean=true,status:available|failed}`: the keys, which are optional,
 * the enum values and the defaults, in a third of the bytes the nested schema took. A model reads that
 * as well as the schema, and the server's validation of every nested key, value and bound is unchanged.
 */
function withStructuredArgumentsAsSignatures(root: JsonSchema): JsonSchema {
  const properties = root.properties as Record<string, JsonSchema> | undefined;
  if (properties === undefined) return root;
  return { ...root, properties: Object.fromEntries(Object.entries(properties).map(([name, argument]) => [name, asSignature(argument)])) };
}

function asSignature(argument: JsonSchema): JsonSchema {
  const items = argument.items;
  const structured = isSchema(argument.properties) || (isSchema(items) && isSchema(items.properties));
  if (!structured) return argument;
  const { properties: _properties, required: _required, items: _items, ...rest } = argument;
  const typed = argument.type === "array" ? { ...rest, items: { type: "object" } } : rest;
  return { ...typed, description: `${argument.description ?? ""} ${signature(argument)}`.trim() };
}

function signature(node: JsonSchema): string {
  if (Array.isArray(node.enum)) return node.enum.join("|");
  if (Array.isArray(node.anyOf)) return (node.anyOf as JsonSchema[]).map(signature).join("|");
  if (node.type === "array" && isSchema(node.items)) {
    const item = signature(node.items);
    return item.includes("|") && !item.startsWith("{") ? `(${item})[]` : `${item}[]`;
  }
  if (isSchema(node.properties)) {
    const required = new Set(Array.isArray(node.required) ? node.required : []);
    const fields = Object.entries(node.properties).map(([name, field]) => {
      const value = field as JsonSchema;
      const fallback = value.default === undefined ? "" : `=${JSON.stringify(value.default)}`;
      return `${name}${required.has(name) ? "" : "?"}:${signature(value)}${fallback}`;
    });
    return `{${fields.join(",")}}`;
  }
  return typeof node.type === "string" ? node.type : "any";
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
  // Validation-only keywords are a large share of the catalog a model reads on every turn and tell it
  // little: size bounds, patterns of names and ids (a model copies ids it was given), timestamp formats,
  // lower bounds of 0 or 1 and caps (page sizes, counts, time budgets). The server enforces every one of them and
  // its INVALID_ARGUMENTS names the bound that failed. Fractional ranges stay: `0..1` says what a ratio is.
  for (const keyword of validationOnlyKeywords) delete out[keyword];
  if (out.minimum === 0 || (out.type === "integer" && out.minimum === 1)) delete out.minimum;
  if (typeof out.maximum === "number" && (out.type === "integer" || out.maximum > 1)) delete out.maximum;
  if (out.default === null || isEmpty(out.default) || out.default === false) delete out.default;
  if (Array.isArray(out.required) && out.required.length === 0) delete out.required;
  // Closedness is the server's to enforce (valibot refuses unknown keys at every level and names them);
  // `additionalProperties: false` on every object told a model nothing its properties did not, cost a
  // twentieth of the catalog, and is a keyword older Gemini declarations refuse. A map whose values may
  // be of several types says so in its description; its value union is left to the server too.
  if (out.additionalProperties === false) delete out.additionalProperties;
  if (isSchema(out.additionalProperties) && JSON.stringify(out.additionalProperties).includes('"anyOf"')) delete out.additionalProperties;
  return out;
}

const validationOnlyKeywords = ["minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties", "pattern", "format"];

/** An empty list or map: what an omitted collection means anyway. */
function isEmpty(value: unknown): boolean {
  return typeof value === "object" && value !== null && Object.keys(value).length === 0;
}

function jsonType(value: unknown): string {
  if (typeof value === "number") return Number.isInteger(value) ? "integer" : "number";
  return typeof value;
}
