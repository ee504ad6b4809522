import { defineCommand } from "citty";
import { cliOptions } from "./context.ts";
import { emit } from "./output.ts";
import { inspectServer } from "../mcp/inspect.ts";
import { parseToolFamilies, toolFamilyNames } from "../mcp/tool-families.ts";

const toolsArgument = {
  type: "string",
  description: `Expose only these tool families, comma-separated (${toolFamilyNames.join(", ")}); default all`,
  valueHint: "FAMILY,…",
} as const;

export const mcpCommand = defineCommand({
  meta: { name: "mcp", description: "The MCP server over stdio, and its inspection." },
  subCommands: {
    serve: defineCommand({
      meta: {
        name: "serve",
        description:
          "Serve MCP over stdio for the fixed --project-root (default '.'); --init creates the workspace first; --workspace names an explicit workspace folder.",
      },
      args: { init: { type: "boolean", description: "Initialize the workspace before serving (additive)." }, tools: toolsArgument },
      async run({ args }) {
        const families = parseToolFamilies(args.tools);
        const { runMcpServe } = await import("../mcp/serve-command.ts");
        await runMcpServe(cliOptions(), Boolean(args.init), families);
      },
    }),
    inspect: defineCommand({
      meta: {
        name: "inspect",
        description:
          "Print the exact tools (schemas, annotations), tool families, resource templates and instructions the server exposes (with --tools, for those families only).",
      },
      args: { tools: toolsArgument },
      run({ args }) {
        const result = inspectServer(parseToolFamilies(args.tools));
        emit(cliOptions(), result, () =>
          [
            `flameox MCP server ${result.server.version}: ${result.tools.length} tools, ${result.resource_templates.length} resource templates`,
            "",
            ...result.tools.map((tool) => `${tool.name}${tool.annotations.readOnlyHint ? " (read-only)" : ""}`),
            "",
            "Tool families (mcp serve --tools FAMILY,…):",
            ...result.families.map((family) => `  ${family.name} (${family.tools.length}): ${family.tools.join(", ")}`),
            "",
            ...result.resource_templates.map((template) => template.uri_template),
          ].join("\n"),
        );
      },
    }),
  },
});
