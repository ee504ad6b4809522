import type * as v from "valibot";
import type { ToolAnnotationHints } from "./annotations.ts";
import type { Services } from "../services/services.ts";

export type ResourceLink = { uri: string; name: string; description: string };

/**
 * What a handler returns. There is no separate summary text: a tool's text content is its envelope as
 * JSON (tool-results.ts), which hosts show a model whether or not they read structuredContent.
 */
export type ToolOutcome<Result> = {
  result: Result;
  links?: ResourceLink[];
};

export type ToolContext = {
  services: Services;
  /** Best-effort: a no-op when the client sent no progress token. */
  progress(progress: number, total: number | undefined, message: string): Promise<void>;
  signal: AbortSignal;
};

export type ToolDefinition<Schema extends v.GenericSchema = v.GenericSchema, Result = unknown> = {
  name: string;
  /** Written for a model, at most 400 characters: what the tool is for and what to call next; field details go on the fields. */
  description: string;
  input: Schema;
  /**
   * The valibot schema of `result`: the one the service's result type is inferred from. It becomes the
   * tool's outputSchema (the envelope with `result` typed); a tool without one publishes none.
   */
  output?: v.GenericSchema<unknown, Result>;
  annotations: ToolAnnotationHints;
  handler(input: v.InferOutput<Schema>, context: ToolContext): Promise<ToolOutcome<Result>>;
};

/** Declares a tool once; the server, `mcp inspect` and the registry tests all read this value. */
export function defineTool<Schema extends v.GenericSchema, Result>(definition: ToolDefinition<Schema, Result>): ToolDefinition {
  return definition as unknown as ToolDefinition;
}
