import {
  CallToolRequestSchema,
  InitializeRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  PingRequestSchema,
  ReadResourceRequestSchema,
  type JSONRPCMessage,
} from "@modelcontextprotocol/sdk/types.js";

/** The requests this server answers, by method, with the SDK's own schema of each. */
const requestSchemas = new Map<string, { safeParse(value: unknown): { success: boolean; error?: { issues: Issue[] } } }>([
  ["initialize", InitializeRequestSchema],
  ["ping", PingRequestSchema],
  ["tools/list", ListToolsRequestSchema],
  ["tools/call", CallToolRequestSchema],
  ["resources/list", ListResourcesRequestSchema],
  ["resources/templates/list", ListResourceTemplatesRequestSchema],
  ["resources/read", ReadResourceRequestSchema],
]);

type Issue = { path: PropertyKey[]; code: string; expected?: string; message: string };

export type ParameterProblem = { message: string; fields: { field: string; message: string }[] };

/**
 * Checks a request's params against its method before the SDK sees it, so a malformed request is
 * -32602 naming the fields (params.name: expected string) rather than -32603 carrying a schema library's
 * issue dump. Unknown methods and notifications pass through: the SDK answers or ignores those.
 */
export function requestParameterProblem(message: JSONRPCMessage): ParameterProblem | null {
  if (!("method" in message) || !("id" in message)) return null;
  const schema = requestSchemas.get(message.method);
  if (!schema) return null;
  const parsed = schema.safeParse({ method: message.method, params: message.params });
  if (parsed.success) return null;
  const fields = (parsed.error?.issues ?? []).slice(0, 10).map((issue) => ({
    field: issue.path.map(String).join(".") || "params",
    message: issue.code === "invalid_type" && issue.expected ? `expected ${issue.expected}` : issue.message.slice(0, 120),
  }));
  return {
    message: `Invalid params for ${message.method}: ${fields.map((field) => `${field.field}: ${field.message}`).join("; ")}.`,
    fields,
  };
}
