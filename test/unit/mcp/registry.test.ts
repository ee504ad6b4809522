import { expect, test } from "bun:test";
import { allTools, listedTools } from "../../../src/mcp/registry.ts";
import { inspectServer } from "../../../src/mcp/inspect.ts";
import { serverInstructions } from "../../../src/mcp/instructions.ts";

test("tool names are unique snake_case", () => {
  const names = allTools.map((tool) => tool.name);
  expect(new Set(names).size).toBe(names.length);
  for (const name of names) expect(name).toMatch(/^[a-z][a-z0-9]*(_[a-z0-9]+)*$/);
});

test("every tool carries all four hints, and read-only tools are never destructive", () => {
  for (const tool of listedTools()) {
    const hints = tool.annotations;
    for (const key of ["readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"] as const) {
      expect(typeof hints[key]).toBe("boolean");
    }
    if (hints.readOnlyHint) expect(hints.destructiveHint).toBe(false);
  }
});

test("every input schema is closed at every object level", () => {
  for (const tool of listedTools()) {
    expect(tool.inputSchema.type).toBe("object");
    // Maps (parameters, environment) are open by design; they declare their value schema instead.
    const walk = (schema: any, path: string) => {
      if (!schema || typeof schema !== "object") return;
      if (schema.properties) {
        expect({ path, additionalProperties: schema.additionalProperties }).toEqual({ path, additionalProperties: false });
        for (const [key, value] of Object.entries(schema.properties)) walk(value, `${path}.${key}`);
      }
      if (schema.items) walk(schema.items, `${path}[]`);
      for (const branch of [...(schema.anyOf ?? []), ...(schema.oneOf ?? [])]) walk(branch, path);
    };
    walk(tool.inputSchema, tool.name);
  }
});

test("descriptions are written for a model and the output schema is the envelope", () => {
  for (const tool of listedTools()) {
    expect(tool.description.length).toBeGreaterThan(60);
    expect(tool.outputSchema.required).toEqual(["schema_version", "ok", "result", "error"]);
  }
});

test("mcp inspect shows exactly the registry and the initialize instructions", () => {
  const inspection = inspectServer();
  expect(inspection.instructions).toBe(serverInstructions);
  expect(inspection.tools.map((tool) => tool.name)).toEqual(allTools.map((tool) => tool.name));
});
