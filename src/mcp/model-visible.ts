import type { ListedTool } from "./registry.ts";

export type ModelVisible = Pick<ListedTool, "name" | "description" | "inputSchema" | "annotations">;

const encoder = new TextEncoder();
const bytes = (value: unknown) => encoder.encode(JSON.stringify(value)).length;

/**
 * What of tools/list a model is given on every turn: each tool's name, description, inputSchema and
 * annotations, counted as the UTF-8 bytes of each part's JSON. The framing around them (`{"name":…,
 * "inputSchema":…}`) is not counted: every host re-frames tools in its own format. outputSchema is for
 * the client's validation, not the model.
 */
export function modelVisibleBytes(tools: readonly ModelVisible[]): number {
  return tools.reduce(
    (sum, tool) => sum + bytes(tool.name) + bytes(tool.description) + bytes(tool.inputSchema) + bytes(tool.annotations),
    0,
  );
}

/** The same four parts with their framing: each tool as the object `{name, description, inputSchema, annotations}`. */
export function framedModelVisibleBytes(tools: readonly ModelVisible[]): number {
  return tools.reduce(
    (sum, tool) =>
      sum + bytes({ name: tool.name, description: tool.description, inputSchema: tool.inputSchema, annotations: tool.annotations }),
    0,
  );
}
