import type * as v from "valibot";
import type { ToolAnnotationHints } from "./annotations.ts";
import type { Services } from "../services/services.ts";

export type ResourceLink = { uri: string; name: string; description: string };

export type ToolOutcome<Result> = {
  result: Result;
  /** One short line for the model; the structured result carries the detail. */
  text: string;
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
  /** Written for a model: what the tool is for, when to call it, what to call next. */
  description: string;
  input: Schema;
  annotations: ToolAnnotationHints;
  handler(input: v.InferOutput<Schema>, context: ToolContext): Promise<ToolOutcome<Result>>;
};

/** Declares a tool once; the server, `mcp inspect` and the registry tests all read this value. */
export function defineTool<Schema extends v.GenericSchema, Result>(definition: ToolDefinition<Schema, Result>): ToolDefinition {
  return definition as unknown as ToolDefinition;
}
