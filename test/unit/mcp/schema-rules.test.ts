/**
 * The catalog hosts take as it is: every tool's inputSchema obeys the portable rules (test/support/schema-rules.ts),
 * every property is described, descriptions stay short, and the part a model reads fits its budget.
 */
import { expect, test } from "bun:test";
import * as v from "valibot";
import { callTool } from "../../../src/mcp/server.ts";
import { inputJsonSchema } from "../../../src/mcp/json-schema.ts";
import { framedModelVisibleBytes, modelVisibleBytes } from "../../../src/mcp/model-visible.ts";
import { listedTools, toolsByName } from "../../../src/mcp/registry.ts";
import type { Services } from "../../../src/services/services.ts";
import { framedModelVisibleByteLimit, modelVisibleByteLimit, schemaRuleViolations } from "../../support/schema-rules.ts";

test("every tool's inputSchema is portable: typed properties and branches, no nulls, const, $ref, propertyNames or exclusive bounds; every property described", () => {
  expect(listedTools().flatMap(schemaRuleViolations)).toEqual([]);
});

test("the rule check finds each kind of violation, so a clean catalog means something", () => {
  const tool = (inputSchema: Record<string, unknown>) => schemaRuleViolations({ name: "t", description: "d", inputSchema });
  const closed = (properties: Record<string, unknown>) => ({ type: "object", properties, additionalProperties: false });
  expect(tool(closed({ a: { type: "string", description: "A." } }))).toEqual([]);
  expect(tool(closed({ a: { anyOf: [{ type: "string" }, { type: "null" }], description: "A." } }))).toEqual([
    "t.a: no type",
    "t.a|1: null type",
  ]);
  expect(tool(closed({ a: { type: ["string", "null"], description: "A." } }))).toEqual(["t.a: type array"]);
  expect(tool(closed({ a: { type: "string" } }))).toEqual(["t.a: property without a description"]);
  expect(tool(closed({ a: { type: "string", const: "x", description: "A." } }))).toEqual(["t.a: uses const"]);
  expect(tool(closed({ a: { type: "number", exclusiveMinimum: 0, description: "A." } }))).toEqual(["t.a: uses exclusiveMinimum"]);
  expect(tool(closed({ a: { type: "object", propertyNames: {}, additionalProperties: { type: "string" }, description: "A." } }))).toEqual([
    "t.a: uses propertyNames",
  ]);
  expect(tool(closed({ a: { $ref: "#/$defs/x", description: "A." } }))).toEqual(["t.a: uses $ref", "t.a: no type"]);
  // Closedness is the server's: an open nested object breaks no rule.
  expect(tool(closed({ a: { type: "object", properties: {}, description: "A." } }))).toEqual([]);
  // A map's values may be a union of typed branches; a branch without a type is not.
  expect(
    tool(closed({ a: { type: "object", additionalProperties: { anyOf: [{ type: "string" }, { type: "number" }] }, description: "A." } })),
  ).toEqual([]);
  expect(tool(closed({ a: { type: "array", items: { anyOf: [{ type: "string" }, { enum: [1] }] }, description: "A." } }))).toEqual([
    "t.a[]|1: no type",
  ]);
  expect(schemaRuleViolations({ name: "t", description: "x".repeat(401), inputSchema: closed({}) })).toEqual([
    "t: description has 401 characters",
  ]);
});

test("the conversion turns nullable, literal, record and exclusive bounds into portable JSON Schema", () => {
  const schema = inputJsonSchema(
    v.strictObject({
      maybe: v.optional(v.nullable(v.pipe(v.string(), v.description("Maybe."))), null),
      fixed: v.pipe(v.literal("v1"), v.description("Fixed.")),
      map: v.pipe(v.record(v.pipe(v.string(), v.minLength(1)), v.union([v.string(), v.number(), v.null()])), v.description("Map.")),
      ratio: v.pipe(v.number(), v.gtValue(0), v.ltValue(1), v.description("Ratio.")),
      count: v.pipe(v.number(), v.integer(), v.gtValue(1), v.description("Count.")),
    }),
  );
  expect(schema).toEqual({
    type: "object",
    properties: {
      maybe: { type: "string", description: "Maybe." },
      fixed: { type: "string", enum: ["v1"], description: "Fixed." },
      // A map of mixed value types publishes as an object; the server checks its values.
      map: { type: "object", description: "Map." },
      // A fraction keeps its range's upper end; the lower bound of 0 is the server's.
      ratio: { type: "number", maximum: 1, description: "Ratio." },
      count: { type: "integer", minimum: 2, description: "Count." },
    },
    required: ["fixed", "map", "ratio", "count"],
  });
});

test("a structured argument publishes as a typed object or list whose description carries its shape; the server still checks every nested key", () => {
  const member = v.strictObject({
    run_id: v.pipe(v.string(), v.description("Run.")),
    status: v.optional(v.pipe(v.picklist(["available", "failed"]), v.description("Status.")), "available"),
    tags: v.optional(v.pipe(v.array(v.picklist(["a", "b"])), v.description("Tags."))),
  });
  const input = v.strictObject({
    members: v.pipe(v.array(member), v.description("Members.")),
    limits: v.optional(
      v.pipe(
        v.strictObject({ attempts: v.optional(v.pipe(v.number(), v.integer(), v.maxValue(9), v.description("Attempts.")), 3) }),
        v.description("Budgets."),
      ),
    ),
    name: v.pipe(v.string(), v.regex(/^[a-z]+$/), v.description("Name.")),
  });
  expect(inputJsonSchema(input)).toEqual({
    type: "object",
    properties: {
      members: {
        type: "array",
        items: { type: "object" },
        description: 'Members. {run_id:string,status?:available|failed="available",tags?:(a|b)[]}[]',
      },
      limits: { type: "object", description: "Budgets. {attempts?:integer=3}" },
      // The pattern is validation only: the server applies it.
      name: { type: "string", description: "Name." },
    },
    required: ["members", "name"],
  });
  expect(v.safeParse(input, { members: [{ run_id: "r", bogus: 1 }], name: "n" }).success).toBe(false);
  expect(v.safeParse(input, { members: [{ run_id: "r", status: "gone" }], name: "n" }).success).toBe(false);
  expect(v.safeParse(input, { members: [], limits: { attempts: 10 }, name: "n" }).success).toBe(false);
  expect(v.safeParse(input, { members: [{ run_id: "r" }], name: "N" }).success).toBe(false);
  expect(v.safeParse(input, { members: [{ run_id: "r", tags: ["a"] }], limits: { attempts: 9 }, name: "n" }).success).toBe(true);
});

test(`the model-visible part of tools/list (names, descriptions, inputSchemas, annotations) is at most ${modelVisibleByteLimit} bytes`, () => {
  const bytes = modelVisibleBytes(listedTools());
  expect(bytes).toBeLessThanOrEqual(modelVisibleByteLimit);
  // Framing adds the same keys to every tool: 54 bytes each.
  expect(framedModelVisibleBytes(listedTools())).toBe(bytes + 54 * listedTools().length);
  expect(framedModelVisibleBytes(listedTools())).toBeLessThanOrEqual(framedModelVisibleByteLimit);
  // The count is of the parts themselves: a tool's bytes grow with each of them.
  const [first] = listedTools();
  expect(modelVisibleBytes([{ ...first!, description: `${first!.description}x` }])).toBe(modelVisibleBytes([first!]) + 1);
});

test("the server's own validation stays exact: unknown keys are refused, and the null contract clients send for an optional field is accepted", async () => {
  const listRuns = toolsByName().get("list_runs")!;
  // Refused before any service is reached, so no workspace is needed.
  const refused = await callTool(listRuns, { bogus: 1, limit: 5 }, {} as Services, { signal: new AbortController().signal });
  const envelope = refused.structuredContent as { error: { code: string; details: { fields: { field: string; type: string }[] } } };
  expect(envelope.error.code).toBe("INVALID_ARGUMENTS");
  expect(envelope.error.details.fields).toEqual([{ field: "bogus", message: "Unknown argument field.", type: "extra_forbidden" }] as never);
  const nested = v.safeParse(listRuns.input, { filter: { workload_name: "w", bogus: true } });
  expect(nested.success).toBe(false);
  expect(v.safeParse(listRuns.input, { cursor: null, filter: { adapter: null, execution_status: null } }).success).toBe(true);
  // Published as optional, not nullable.
  const published = listedTools().find((tool) => tool.name === "list_runs")!.inputSchema as any;
  expect(published.properties.cursor.type).toBe("string");
  expect(published.properties.filter.description).toContain("adapter?:string,");
});
