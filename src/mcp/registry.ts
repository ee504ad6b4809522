import type { ToolDefinition } from "./define-tool.ts";
import { envelopeJsonSchema, inputJsonSchema } from "./json-schema.ts";
import { workspaceTools } from "./tools/workspace.ts";
import { discoveryTools } from "./tools/discovery.ts";
import { captureTools } from "./tools/capture.ts";
import { runTools } from "./tools/runs.ts";
import { analysisTools } from "./tools/analysis.ts";
import { viewerTools } from "./tools/viewers.ts";
import { extractionTools } from "./tools/extraction.ts";
import { memoryTools } from "./tools/memory.ts";
import { executionTools } from "./tools/execution.ts";
import { traceTools } from "./tools/traces.ts";
import { failureTools } from "./tools/failures.ts";
import { measurementTools } from "./tools/measurements.ts";
import { evidenceTools } from "./tools/evidence.ts";
import { experimentTools } from "./tools/experiments.ts";
import { comparisonTools } from "./tools/comparisons.ts";
import { investigationTools } from "./tools/investigations.ts";

/** Registration order is tools/list order and `mcp inspect` order; every tool is declared exactly once. */
export const allTools: ToolDefinition[] = [
  ...workspaceTools,
  ...discoveryTools,
  ...captureTools,
  ...runTools,
  ...analysisTools,
  ...memoryTools,
  ...executionTools,
  ...traceTools,
  ...failureTools,
  ...measurementTools,
  ...evidenceTools,
  ...viewerTools,
  ...experimentTools,
  ...comparisonTools,
  ...investigationTools,
  ...extractionTools,
];

let byName: Map<string, ToolDefinition> | undefined;
export function toolsByName(): Map<string, ToolDefinition> {
  byName ??= new Map(allTools.map((tool) => [tool.name, tool]));
  return byName;
}

export type ListedTool = {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
  outputSchema: Record<string, unknown>;
  annotations: { readOnlyHint: boolean; destructiveHint: boolean; idempotentHint: boolean; openWorldHint: boolean };
};

let listed: ListedTool[] | undefined;
/** Computed once per process; JSON Schema generation is the only per-tool startup cost. */
export function listedTools(): ListedTool[] {
  listed ??= allTools.map((tool) => ({
    name: tool.name,
    description: tool.description,
    inputSchema: inputJsonSchema(tool.input),
    outputSchema: envelopeJsonSchema,
    annotations: { ...tool.annotations },
  }));
  return listed;
}
