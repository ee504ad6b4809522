/**
 * Tool families: one per tool file in tools/ (the evidence analyses' six files form one), the unit `mcp serve --tools FAMILY,…` exposes, for
 * hosts that cap or warn on the number of tools (Cursor, Windsurf). This is the one mapping; the
 * registry's order (tools/list order) is the families' order.
 */
import { invalidRequest } from "../domain/errors.ts";
import type { ToolDefinition } from "./define-tool.ts";
import { analysisTools } from "./tools/analysis.ts";
import { captureTools } from "./tools/capture.ts";
import { comparisonTools } from "./tools/comparisons.ts";
import { discoveryTools } from "./tools/discovery.ts";
import { evidenceTools } from "./tools/evidence.ts";
import { executionTools } from "./tools/execution.ts";
import { failureTools } from "./tools/failures.ts";
import { measurementTools } from "./tools/measurements.ts";
import { memoryTools } from "./tools/memory.ts";
import { traceTools } from "./tools/traces.ts";
import { experimentTools } from "./tools/experiments.ts";
import { extractionTools } from "./tools/extraction.ts";
import { investigationTools } from "./tools/investigations.ts";
import { pipelineTools } from "./tools/pipelines.ts";
import { reductionTools } from "./tools/reductions.ts";
import { providerTools } from "./tools/providers.ts";
import { runTools } from "./tools/runs.ts";
import { viewerTools } from "./tools/viewers.ts";
import { workspaceTools } from "./tools/workspace.ts";

export const toolFamilies = {
  workspace: workspaceTools,
  // Managed provider setup, adapter approval and dependency inspection: what list_capabilities sends an agent to.
  providers: providerTools,
  discovery: discoveryTools,
  capture: captureTools,
  runs: runTools,
  analysis: analysisTools,
  // The evidence analyses beyond hotspots: one family, so a tool-limited host selects them together.
  evidence: [...memoryTools, ...executionTools, ...traceTools, ...failureTools, ...measurementTools, ...evidenceTools],
  viewers: viewerTools,
  experiments: experimentTools,
  comparisons: comparisonTools,
  findings: investigationTools,
  extraction: extractionTools,
  pipelines: pipelineTools,
  reductions: reductionTools,
} satisfies Record<string, readonly ToolDefinition[]>;

export type ToolFamily = keyof typeof toolFamilies;

export const toolFamilyNames = Object.keys(toolFamilies) as ToolFamily[];

/**
 * Parses `--tools a,b` (names, comma-separated, order and repeats ignored) into families in registry
 * order; null means every family. An unknown or empty name is INVALID_ARGUMENTS naming the valid ones.
 */
export function parseToolFamilies(value: string | undefined | null): ToolFamily[] | null {
  if (value === undefined || value === null) return null;
  const names = value.split(",").map((name) => name.trim());
  const unknown = names.filter((name) => !(toolFamilyNames as string[]).includes(name));
  if (unknown.length > 0 || names.length === 0) {
    throw invalidRequest(
      `Unknown tool ${unknown.length === 1 ? "family" : "families"} ${unknown.map((name) => JSON.stringify(name)).join(", ")} in --tools.`,
      {
        remediation: [`Use a comma-separated list of: ${toolFamilyNames.join(", ")} (flameox mcp inspect lists each family's tools).`],
        details: { fields: [{ field: "tools", message: `unknown: ${unknown.join(", ")}`, type: "enum" }], families: toolFamilyNames },
      },
    );
  }
  return toolFamilyNames.filter((name) => names.includes(name));
}

export function toolsOfFamilies(families: readonly ToolFamily[] | null): ToolDefinition[] {
  return (families ?? toolFamilyNames).flatMap((family) => toolFamilies[family]);
}
