import type { ListedTool } from "./registry.ts";

export type ModelVisible = Pick<ListedTool, "name" | "description" | "inputSchema" | "annotations">;

/**
 * What of tools/list a model is given on every turn: each tool's name, description, inputSchema and
 * annotations, counted as the UTF-8 bytes of each part's JSON. The framing around them (`{"name":…,
 * "inputSchema":…}`) is not counted: every host re-frames tools in its own format. outputSchema is for
 * the client's validation, not the model.
 */
export function modelVisibleBytes(tools: readonly ModelVisible[]): number {
  const encoder = new TextEncoder();
  const bytes = (value: unknown) => encoder.encode(JSON.stringify(value)).length;
  return tools.reduce(
    (sum, tool) => sum + bytes(tool.name) + bytes(tool.description) + bytes(tool.inputSchema) + bytes(tool.annotations),
    0,
  );
}

/**
 * The part of each tool every host actually puts in front of the model: name, description and
 * inputSchema (Claude Code, Codex, Cursor and Gemini send these as the function declaration;
 * annotations steer the client's confirmations and are not sent to the model).
 */
export function promptVisibleBytes(tools: readonly ModelVisible[]): number {
  const encoder = new TextEncoder();
  const bytes = (value: unknown) => encoder.encode(JSON.stringify(value)).length;
  return tools.reduce((sum, tool) => sum + bytes(tool.name) + bytes(tool.description) + bytes(tool.inputSchema), 0);
}
