import * as v from "valibot";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  CallToolRequestSchema,
  ErrorCode,
  LATEST_PROTOCOL_VERSION,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  SUPPORTED_PROTOCOL_VERSIONS,
  type CallToolResult,
} from "@modelcontextprotocol/sdk/types.js";
import { invalidArguments, toFlameoxError, type FlameoxError } from "../domain/errors.ts";
import { flameoxVersion } from "../version.ts";
import type { Services } from "../services/services.ts";
import { pathScrubber, type PathScrubber } from "./agent-paths.ts";
import { withCallableRecovery, withCorrectedCall } from "./call-recovery.ts";
import type { ToolDefinition } from "./define-tool.ts";
import { invalidArgumentsFromIssues } from "./invalid-arguments.ts";
import { serverInstructions } from "./instructions.ts";
import { listedTools, toolsByName } from "./registry.ts";
import type { ToolFamily } from "./tool-families.ts";
import { readResource, resourceTemplates } from "./resources.ts";
import { log } from "./log.ts";
import { LineDelimitedTransport } from "./stdio-transport.ts";
import { failureResult, successResult, supportsResultExtensions } from "./tool-results.ts";

export { failureResult, successResult } from "./tool-results.ts";

export type CallOptions = {
  signal: AbortSignal;
  progress?: (progress: number, total: number | undefined, message: string) => Promise<void>;
  /** resource_link blocks only for clients whose protocol has them (default: yes). */
  resourceLinks?: boolean;
  /** Replaces host paths in everything returned (default: nothing replaced). */
  scrub?: PathScrubber;
};

/** Validates arguments, runs the handler, and turns every outcome into the envelope. */
export async function callTool(
  tool: ToolDefinition,
  rawArguments: unknown,
  services: Services,
  options: CallOptions,
): Promise<CallToolResult> {
  const scrub = options.scrub ?? (<T>(value: T) => value);
  const fail = (error: FlameoxError) =>
    scrub(failureResult(withCallableRecovery(withCorrectedCall(error, tool, rawArguments), toolsByName())));
  const unknown = unknownRootFields(tool, rawArguments);
  if (unknown.length > 0) {
    return fail(
      invalidArguments(
        tool.name,
        unknown.map((field) => ({ field, message: "Unknown argument field.", type: "extra_forbidden" })),
      ),
    );
  }
  const parsed = v.safeParse(tool.input, rawArguments ?? {});
  if (!parsed.success) return fail(invalidArgumentsFromIssues(tool.name, parsed.issues));
  try {
    const outcome = await tool.handler(parsed.output, {
      services,
      signal: options.signal,
      progress: async (progress, total, message) => {
        try {
          await options.progress?.(progress, total, scrub(message));
        } catch {
          // Progress is best-effort: a failed notification never changes the result.
        }
      },
    });
    return scrub(successResult(outcome, { resourceLinks: options.resourceLinks ?? true }));
  } catch (error) {
    const typed = toFlameoxError(error);
    if (typed.code === "INTERNAL_ERROR") log.error(`tool ${tool.name} failed`, error);
    return fail(typed);
  }
}

/** What one connection negotiated; read by the handlers, set when the client's initialize arrives. */
export type Session = { protocolVersion: string | null };

/** `families`: expose only these tool families (`mcp serve --tools`); null for all. */
export function createServer(
  services: Services,
  families: readonly ToolFamily[] | null = null,
  session: Session = { protocolVersion: null },
): Server {
  const exposed = new Set(listedTools(families).map((tool) => tool.name));
  const scrub = pathScrubber({ projectRoot: services.projectRoot, workspaceRoot: services.workspaceRoot });
  const server = new Server(
    { name: "flameox", version: flameoxVersion },
    {
      capabilities: { tools: { listChanged: false }, resources: { subscribe: false, listChanged: false } },
      instructions: serverInstructions,
    },
  );

  // outputSchema is part of the protocol since 2025-06-18; older clients get the tools without it.
  server.setRequestHandler(ListToolsRequestSchema, () => {
    const tools = listedTools(families);
    if (supportsResultExtensions(session.protocolVersion)) return { tools } as never;
    return { tools: tools.map(({ outputSchema: _outputSchema, ...tool }) => tool) } as never;
  });

  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const tool = exposed.has(request.params.name) ? toolsByName().get(request.params.name) : undefined;
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${request.params.name}`);
    const progressToken = request.params._meta?.progressToken;
    return callTool(tool, request.params.arguments, services, {
      signal: extra.signal,
      resourceLinks: supportsResultExtensions(session.protocolVersion),
      scrub,
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
    try {
      return scrub({ contents: [await readResource(request.params.uri, services)] });
    } catch (error) {
      throw error instanceof McpError ? new McpError(error.code, scrub(error.message), scrub(error.data)) : error;
    }
  });
  return server;
}

/** Connects and notes the protocol version the client's initialize negotiates (the SDK's own rule). */
export async function connectServer(server: Server, transport: Transport, session: Session): Promise<void> {
  await server.connect(transport);
  const deliver = transport.onmessage;
  transport.onmessage = (message, extra) => {
    if ("method" in message && message.method === "initialize" && "id" in message) {
      const requested = (message.params as { protocolVersion?: unknown } | undefined)?.protocolVersion;
      session.protocolVersion =
        typeof requested === "string" && SUPPORTED_PROTOCOL_VERSIONS.includes(requested) ? requested : LATEST_PROTOCOL_VERSION;
    }
    deliver?.(message, extra);
  };
}

export async function serveStdio(services: Services, families: readonly ToolFamily[] | null = null): Promise<void> {
  const session: Session = { protocolVersion: null };
  const server = createServer(services, families, session);
  const transport = new LineDelimitedTransport();
  const closed = new Promise<void>((resolve) => {
    server.onclose = () => resolve();
  });
  await connectServer(server, transport, session);
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
