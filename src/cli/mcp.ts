import { defineCommand } from "citty";
import { cliOptions } from "./context.ts";
import { emit } from "./output.ts";
import { inspectServer } from "../mcp/inspect.ts";

export const mcpCommand = defineCommand({
  meta: { name: "mcp", description: "The MCP server over stdio, and its inspection." },
  subCommands: {
    serve: defineCommand({
      meta: {
        name: "serve",
        description:
          "Serve MCP over stdio for the fixed --project-root (default '.'); --init creates the workspace first; --workspace names an explicit workspace folder.",
      },
      args: { init: { type: "boolean", description: "Initialize the workspace before serving (additive)." } },
      async run({ args }) {
        const { runMcpServe } = await import("../mcp/serve-command.ts");
        await runMcpServe(cliOptions(), Boolean(args.init));
      },
    }),
    inspect: defineCommand({
      meta: {
        name: "inspect",
        description: "Print the exact tools (schemas, annotations), resource templates and instructions the server exposes.",
      },
      run() {
        const result = inspectServer();
        emit(cliOptions(), result, () =>
          [
            `flameox MCP server ${result.server.version}: ${result.tools.length} tools, ${result.resource_templates.length} resource templates`,
            "",
            ...result.tools.map((tool) => `${tool.name}${tool.annotations.readOnlyHint ? " (read-only)" : ""}`),
            "",
            ...result.resource_templates.map((template) => template.uri_template),
          ].join("\n"),
        );
      },
    }),
  },
});
