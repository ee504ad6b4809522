import * as v from "valibot";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import {
  CallToolRequestSchema,
  ErrorCode,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  type CallToolResult,
} from "@modelcontextprotocol/sdk/types.js";
import { invalidArguments, toFlameoxError, type FlameoxError } from "../domain/errors.ts";
import { failureEnvelope, successEnvelope } from "../domain/envelope.ts";
import { flameoxVersion } from "../version.ts";
import type { Services } from "../services/services.ts";
import type { ToolDefinition, ToolOutcome } from "./define-tool.ts";
import { invalidArgumentsFromIssues } from "./invalid-arguments.ts";
import { serverInstructions } from "./instructions.ts";
import { listedTools, toolsByName } from "./registry.ts";
import type { ToolFamily } from "./tool-families.ts";
import { readResource, resourceTemplates } from "./resources.ts";
import { log } from "./log.ts";

export function successResult(outcome: ToolOutcome<unknown>): CallToolResult {
  return {
    content: [
      { type: "text", text: outcome.text },
      ...(outcome.links ?? []).map((link) => ({
        type: "resource_link" as const,
        uri: link.uri,
        name: link.name,
        description: link.description,
        mimeType: "application/json",
      })),
    ],
    structuredContent: successEnvelope(outcome.result) as unknown as Record<string, unknown>,
    isError: false,
  };
}

export function failureResult(error: FlameoxError): CallToolResult {
  const envelope = failureEnvelope(error);
  const recovery = envelope.error!.recovery;
  const text = [error.message, recovery.next_tool ? `Next tool: ${recovery.next_tool}.` : "", error.remediation[0] ?? ""]
    .filter((part) => part !== "")
    .join(" ");
  return { content: [{ type: "text", text }], structuredContent: envelope as unknown as Record<string, unknown>, isError: true };
}

/** Validates arguments, runs the handler, and turns every outcome into the envelope. */
export async function callTool(
  tool: ToolDefinition,
  rawArguments: unknown,
  services: Services,
  options: { signal: AbortSignal; progress?: (progress: number, total: number | undefined, message: string) => Promise<void> },
): Promise<CallToolResult> {
  const unknown = unknownRootFields(tool, rawArguments);
  if (unknown.length > 0) {
    return failureResult(
      invalidArguments(
        tool.name,
        unknown.map((field) => ({ field, message: "Unknown argument field.", type: "extra_forbidden" })),
      ),
    );
  }
  const parsed = v.safeParse(tool.input, rawArguments ?? {});
  if (!parsed.success) return failureResult(invalidArgumentsFromIssues(tool.name, parsed.issues));
  try {
    const outcome = await tool.handler(parsed.output, {
      services,
      signal: options.signal,
      progress: async (progress, total, message) => {
        try {
          await options.progress?.(progress, total, message);
        } catch {
          // Progress is best-effort: a failed notification never changes the result.
        }
      },
    });
    return successResult(outcome);
  } catch (error) {
    const typed = toFlameoxError(error);
    if (typed.code === "INTERNAL_ERROR") log.error(`tool ${tool.name} failed`, error);
    return failureResult(typed);
  }
}

/** `families`: expose only these tool families (`mcp serve --tools`); null for all. */
export function createServer(services: Services, families: readonly ToolFamily[] | null = null): Server {
  const exposed = new Set(listedTools(families).map((tool) => tool.name));
  const server = new Server(
    { name: "flameox", version: flameoxVersion },
    {
      capabilities: { tools: { listChanged: false }, resources: { subscribe: false, listChanged: false } },
      instructions: serverInstructions,
    },
  );

  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: listedTools(families) }) as never);

  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const tool = exposed.has(request.params.name) ? toolsByName().get(request.params.name) : undefined;
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${request.params.name}`);
    const progressToken = request.params._meta?.progressToken;
    return callTool(tool, request.params.arguments, services, {
      signal: extra.signal,
      progress:
        progressToken === undefined
          ? undefined
          : (progress, total, message) =>
              extra.sendNotification({
                method: "notifications/progress",
                params: { progressToken, progress, ...(total === undefined ? {} : { total }), message },
              }),
    }) as never;
  });

  server.setRequestHandler(ListResourcesRequestSchema, () => ({ resources: [] }));
  server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({
    resourceTemplates: resourceTemplates.map((template) => ({
      uriTemplate: template.uriTemplate,
      name: template.name,
      description: template.description,
      mimeType: template.mimeType,
    })),
  }));
  server.setRequestHandler(ReadResourceRequestSchema, async (request) => {
    const contents = await readResource(request.params.uri, services);
    if (!contents)
      throw new McpError(ErrorCode.InvalidParams, `No resource template matches ${request.params.uri}`, { uri: request.params.uri });
    return { contents: [contents] };
  });
  return server;
}

export async function serveStdio(services: Services, families: readonly ToolFamily[] | null = null): Promise<void> {
  const server = createServer(services, families);
  const transport = new StdioServerTransport();
  const closed = new Promise<void>((resolve) => {
    server.onclose = () => resolve();
  });
  await server.connect(transport);
  process.stdin.on("end", () => void server.close());
  await closed;
  // Detached captures belong to this process: cancel them and wait until their runs are recorded.
  await services.shutdown();
}

/** Every unknown top-level field at once, sorted, so an agent fixes them in one retry. */
function unknownRootFields(tool: ToolDefinition, rawArguments: unknown): string[] {
  const entries = (tool.input as { entries?: Record<string, unknown> }).entries;
  if (!entries || rawArguments === null || typeof rawArguments !== "object" || Array.isArray(rawArguments)) return [];
  return Object.keys(rawArguments)
    .filter((key) => !Object.hasOwn(entries, key))
    .sort();
}
