import { flameoxVersion } from "../version.ts";
import { serverInstructions } from "./instructions.ts";
import { familyListing, listedTools, type ListedTool } from "./registry.ts";
import type { ToolFamily } from "./tool-families.ts";
import { resourceTemplates } from "./resources.ts";

export type ServerInspection = {
  schema_version: 1;
  server: { name: "flameox"; version: string };
  instructions: string;
  /** The tool families (`mcp serve --tools`) and the tools each holds. */
  families: Array<{ name: ToolFamily; tools: string[] }>;
  tools: ListedTool[];
  resource_templates: { uri_template: string; name: string; description: string; mime_type: string }[];
};

/** Exactly what tools/list and resources/templates/list answer, plus the initialize instructions. */
export function inspectServer(families: readonly ToolFamily[] | null = null): ServerInspection {
  return {
    schema_version: 1,
    server: { name: "flameox", version: flameoxVersion },
    instructions: serverInstructions,
    families: familyListing(families),
    tools: listedTools(families),
    resource_templates: resourceTemplates.map((template) => ({
      uri_template: template.uriTemplate,
      name: template.name,
      description: template.description,
      mime_type: template.mimeType,
    })),
  };
}
