import type { ToolDefinition } from "./define-tool.ts";
import { inputJsonSchema, outputJsonSchema } from "./json-schema.ts";
import { toolFamilyNames, toolsOfFamilies, type ToolFamily } from "./tool-families.ts";

/** Registration order is tools/list order and `mcp inspect` order; every tool is declared exactly once. */
export const allTools: ToolDefinition[] = toolsOfFamilies(null);

let byName: Map<string, ToolDefinition> | undefined;
export function toolsByName(): Map<string, ToolDefinition> {
  byName ??= new Map(allTools.map((tool) => [tool.name, tool]));
  return byName;
}

export type ListedTool = {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
  /** Only for a tool with a result schema: the envelope with `result` typed. */
  outputSchema?: Record<string, unknown>;
  annotations: { readOnlyHint: boolean; destructiveHint: boolean; idempotentHint: boolean; openWorldHint: boolean };
};

let listed: ListedTool[] | undefined;
/** Computed once per process; JSON Schema generation is the only per-tool startup cost. */
export function listedTools(families: readonly ToolFamily[] | null = null): ListedTool[] {
  listed ??= allTools.map((tool) => ({
    name: tool.name,
    description: tool.description,
    inputSchema: inputJsonSchema(tool.input),
    ...(tool.output ? { outputSchema: outputJsonSchema(tool.output) } : {}),
    annotations: { ...tool.annotations },
  }));
  if (families === null) return listed;
  const exposed = new Set(toolsOfFamilies(families).map((tool) => tool.name));
  return listed.filter((tool) => exposed.has(tool.name));
}

/** Each family with the names of the tools it holds, in registry order. */
export function familyListing(families: readonly ToolFamily[] | null = null): Array<{ name: ToolFamily; tools: string[] }> {
  return (families ?? toolFamilyNames).map((name) => ({ name, tools: toolsOfFamilies([name]).map((tool) => tool.name) }));
}
