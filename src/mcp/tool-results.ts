import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { type Envelope, failureEnvelope, successEnvelope } from "../domain/envelope.ts";
import type { FlameoxError } from "../domain/errors.ts";
import type { ToolOutcome } from "./define-tool.ts";

/**
 * How a tool's envelope reaches a client. The text content is the envelope itself as compact JSON (the
 * same object as structuredContent), because hosts differ in what they show a model: Claude Code drops
 * structuredContent on error results, older clients do not know it at all. resource_link blocks exist
 * only since protocol 2025-06-18; an older client's SDK rejects a result that carries one.
 */
export type ResultOptions = { resourceLinks: boolean };

/** Protocol versions are dates; resource_link content and outputSchema arrived in 2025-06-18. */
export function supportsResultExtensions(protocolVersion: string | null): boolean {
  return protocolVersion !== null && protocolVersion >= "2025-06-18";
}

/**
 * The most characters the text content carries. A default result stays far below it (8,000); a caller
 * who asks for a page of 1,000 rows gets the first rows that fit in the text, said so, and all of them
 * in structuredContent.
 */
export const maxTextCharacters = 24_000;

export function successResult(outcome: ToolOutcome<unknown>, options: ResultOptions = { resourceLinks: true }): CallToolResult {
  const envelope = successEnvelope(outcome.result);
  return {
    content: [
      { type: "text", text: boundedJson(envelope) },
      ...(options.resourceLinks ? (outcome.links ?? []) : []).map((link) => ({
        type: "resource_link" as const,
        uri: link.uri,
        name: link.name,
        description: link.description,
        mimeType: "application/json",
      })),
    ],
    structuredContent: envelope as unknown as Record<string, unknown>,
    isError: false,
  };
}

export function failureResult(error: FlameoxError): CallToolResult {
  const envelope = failureEnvelope(error);
  return {
    content: [{ type: "text", text: boundedJson(envelope) }],
    structuredContent: envelope as unknown as Record<string, unknown>,
    isError: true,
  };
}

/**
 * Compact JSON of the envelope, at most `limit` characters: while it is longer, the largest array in the
 * result loses its second half, and `text_truncated` says how many items the text leaves out.
 */
export function boundedJson(envelope: Envelope<unknown>, limit = maxTextCharacters): string {
  const text = JSON.stringify(envelope);
  if (text.length <= limit) return text;
  const copy = JSON.parse(text) as Envelope<unknown> & { text_truncated?: Record<string, unknown> };
  let omitted = 0;
  let shortened = text;
  for (let round = 0; round < 64 && shortened.length > limit; round += 1) {
    const largest = largestArray(copy.result);
    if (!largest || largest.length < 2) break;
    const keep = Math.floor(largest.length / 2);
    omitted += largest.length - keep;
    largest.length = keep;
    copy.text_truncated = truncationNote(text.length, omitted);
    shortened = JSON.stringify(copy);
  }
  if (shortened.length <= limit) return shortened;
  return JSON.stringify({
    schema_version: envelope.schema_version,
    ok: envelope.ok,
    result: null,
    error: envelope.error
      ? { code: envelope.error.code, message: envelope.error.message.slice(0, 2000), recovery: envelope.error.recovery }
      : null,
    text_truncated: truncationNote(text.length, null),
  });
}

function truncationNote(characters: number, omittedItems: number | null): Record<string, unknown> {
  return {
    characters,
    omitted_items: omittedItems,
    note: "The text shows part of the result; structuredContent holds all of it. Ask for a smaller limit and page with the cursor.",
  };
}

/** The array whose JSON is longest, anywhere in the value. */
function largestArray(value: unknown): unknown[] | null {
  let best: unknown[] | null = null;
  let bestSize = 0;
  const visit = (node: unknown): number => {
    if (node === null || typeof node !== "object") return JSON.stringify(node ?? null).length;
    let size = 2;
    for (const item of Object.values(node)) size += visit(item) + 1;
    if (Array.isArray(node) && size > bestSize) {
      best = node;
      bestSize = size;
    }
    return size;
  };
  visit(value);
  return best;
}
