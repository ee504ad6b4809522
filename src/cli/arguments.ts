/**
 * Argument groups the CLI's commands share, bounded by the same request schemas as the MCP tools
 * (domain/requests): a listing's --limit and --cursor, and structured JSON requests.
 */
import * as v from "valibot";
import { invalidRequest } from "../domain/errors.ts";
import { cursorText, limitValue, type LimitSpec } from "../domain/requests/fields.ts";
import { invalidArgumentsFromIssues } from "../mcp/invalid-arguments.ts";
import { parseStructuredInput } from "./structured-input.ts";

/** --limit of an analysis or listing; `noun` says what it counts. */
export function limitArgument(spec: LimitSpec, noun = "Page size", fallback: number = spec.default) {
  return { type: "string", description: `${noun} (1..${spec.maximum}, default ${fallback}).` } as const;
}

/** --limit and --cursor of a listing; `fallback` is the CLI's own default where it differs from the tool's. */
export function pageArguments(spec: LimitSpec, fallback: number = spec.default) {
  return {
    limit: limitArgument(spec, "Page size", fallback),
    cursor: { type: "string", description: "next_cursor of the previous page." },
  } as const;
}

export function pageOf(
  args: { limit?: unknown; cursor?: unknown },
  spec: LimitSpec,
  fallback: number = spec.default,
): { limit: number; cursor: string | null } {
  return { limit: limitOf(args.limit, spec, fallback), cursor: cursorOf(args.cursor) };
}

/** --limit alone, for analyses that rank without paging. */
export function limitOf(value: unknown, spec: LimitSpec, fallback: number = spec.default): number {
  if (value === undefined || value === null || value === "") return fallback;
  const parsed = v.safeParse(limitValue(spec.maximum), Number(value));
  if (parsed.success) return parsed.output;
  throw invalidRequest(`--limit must be an integer between 1 and ${spec.maximum}.`, {
    remediation: [`Pass --limit between 1 and ${spec.maximum}.`],
  });
}

function cursorOf(value: unknown): string | null {
  if (value === undefined || value === null || value === "") return null;
  const parsed = v.safeParse(cursorText, String(value));
  if (parsed.success) return parsed.output;
  throw invalidRequest("--cursor is not a next_cursor value.", { remediation: ["Pass the next_cursor of the previous page."] });
}

/** Checks a request built from CLI arguments against its shared schema; bad fields are INVALID_ARGUMENTS naming each one. */
export function checkedRequest<Schema extends v.GenericSchema>(schema: Schema, input: unknown, subject: string): v.InferOutput<Schema> {
  const parsed = v.safeParse(schema, input);
  if (parsed.success) return parsed.output;
  throw invalidArgumentsFromIssues(subject, parsed.issues);
}

/** A structured request given as JSON text or @file.json, checked like the MCP tool's arguments. */
export function parseCliRequest<Schema extends v.GenericSchema>(schema: Schema, value: string, subject: string): v.InferOutput<Schema> {
  return checkedRequest(schema, parseStructuredInput(value, subject), subject);
}
