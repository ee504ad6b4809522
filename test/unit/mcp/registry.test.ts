import { expect, test } from "bun:test";
import * as v from "valibot";
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

test("published schemas leave closedness to the server, which refuses an unknown key at any depth and names it", async () => {
  for (const tool of listedTools()) {
    expect(tool.inputSchema.type).toBe("object");
    expect(JSON.stringify(tool.inputSchema)).not.toContain('"additionalProperties":false');
  }
  const definitions = new Map(allTools.map((tool) => [tool.name, tool]));
  // One unknown key at the root, one inside a nested object, one inside an array of objects.
  const cases: Array<[string, Record<string, unknown>, string]> = [
    ["list_runs", { limit: 5, bogus: 1 }, "bogus"],
    ["list_runs", { filter: { workload_name: "w", bogus: true } }, "filter.bogus"],
    [
      "record_finding",
      {
        kind: "k",
        title: "t",
        claim: "c",
        evidence_level: "observed",
        confidence: "low",
        assessment: "unassessed",
        evidence: [{ ref_type: "run", ref_id: "r", relation: "context", bogus: 1 }],
      },
      "evidence.0.bogus",
    ],
  ];
  for (const [name, input, field] of cases) {
    const result = v.safeParse(definitions.get(name)!.input, input);
    expect({ name, field, success: result.success }).toEqual({ name, field, success: false });
    const paths = (result.issues ?? []).map((issue) => v.getDotPath(issue) ?? "");
    expect(paths.some((path) => path === field || path.startsWith(field))).toBe(true);
  }
});

test("descriptions are written for a model, and an output schema is the tool's own typed envelope or absent", () => {
  const definitions = new Map(allTools.map((tool) => [tool.name, tool]));
  const typed: string[] = [];
  for (const tool of listedTools()) {
    expect(tool.description.length).toBeGreaterThan(60);
    expect(tool.description.length).toBeLessThanOrEqual(400);
    // Published only from the tool's own result schema: never a shared placeholder.
    expect({ tool: tool.name, published: tool.outputSchema !== undefined }).toEqual({
      tool: tool.name,
      published: definitions.get(tool.name)!.output !== undefined,
    });
    if (!tool.outputSchema) continue;
    typed.push(tool.name);
    const schema = tool.outputSchema as any;
    expect(schema.required).toEqual(["schema_version", "ok", "result", "error"]);
    // `result` is the typed result or null, never an untyped object.
    const branches = schema.properties.result.anyOf as any[];
    const result = branches.find((branch) => branch.type !== "null");
    expect({ tool: tool.name, typedResult: Object.keys(result?.properties ?? {}).length > 0 }).toEqual({
      tool: tool.name,
      typedResult: true,
    });
  }
  expect(typed.length).toBeGreaterThan(0);
});

test("mcp inspect shows exactly the registry and the initialize instructions", () => {
  const inspection = inspectServer();
  expect(inspection.instructions).toBe(serverInstructions);
  expect(inspection.tools.map((tool) => tool.name)).toEqual(allTools.map((tool) => tool.name));
});
