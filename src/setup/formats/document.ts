/** What every config editor offers: the current entry, and the whole new text with it set or removed. */
import { type FlameoxError, executionRefused } from "../../domain/errors.ts";

/**
 * How the server section looked before we first added our entry, so a disconnect can put back exactly
 * that: no section at all, an empty one (with its exact text), or one that holds other servers.
 */
export type SectionOrigin = {
  file_existed: boolean;
  section: "absent" | "empty" | "present";
  /** The exact text of an empty section (`{}`, `{ }`), or of an empty document when the section was absent. */
  empty_text: string | null;
  /**
   * JSON: the exact text between the last member and the closing brace of the object our entry (or
   * section) was added to, which an insertion re-formats; null when not applicable.
   */
  tail_text?: string | null;
  final_newline: boolean;
};

export type ConfigDocument = {
  /** Our entry as parsed, or undefined when absent. */
  entry: Record<string, unknown> | undefined;
  /** The section as it is apart from our entry (meaningful before we add it). */
  origin: SectionOrigin;
  /**
   * Full new file text with the `managed` keys of our entry set; keys the user added to our entry
   * (an `env` table, a timeout) are kept. Every byte outside the entry is kept.
   */
  withEntry(managed: Record<string, unknown>): string;
  /** Full new file text without our entry, restoring the section as `origin` describes when it is now empty. */
  withoutEntry(origin: SectionOrigin | null): string;
};

/** Our entry with `managed` keys set and the user's own keys kept, in their order. */
export function mergedEntry(entry: Record<string, unknown> | undefined, managed: Record<string, unknown>): Record<string, unknown> {
  return { ...(entry ?? {}), ...managed };
}

/** Drops one final line ending when the file had none before we first wrote it. */
export function restoreFinalNewline(text: string, origin: SectionOrigin | null): string {
  if (!origin || origin.final_newline) return text;
  if (text.endsWith("\r\n")) return text.slice(0, -2);
  if (text.endsWith("\n")) return text.slice(0, -1);
  return text;
}

const bom = "\uFEFF";

export type DecodedConfig = { text: string; bom: boolean };

/** Strict UTF-8; a BOM is accepted and put back on write. */
export function decodeConfig(bytes: Uint8Array, path: string): DecodedConfig {
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch (cause) {
    throw executionRefused(`MCP client configuration is not UTF-8: ${path}`, {
      remediation: [`Re-save ${path} as UTF-8, then rerun flameox setup.`],
      details: { path },
      cause,
    });
  }
  if (text.startsWith(bom)) return { text: text.slice(1), bom: true };
  return { text, bom: false };
}

export function encodeConfig(text: string, hadBom: boolean): Uint8Array {
  return new TextEncoder().encode(hadBom ? bom + text : text);
}

export function malformedConfig(path: string, reason: string, cause?: unknown): FlameoxError {
  return executionRefused(`Refusing to overwrite malformed client configuration ${path}: ${reason}`, {
    remediation: [`Repair ${path} by hand (it was not changed), then rerun flameox setup.`],
    details: { path, reason },
    cause,
  });
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value) && !(value instanceof Date);
}

/**
 * Finds the existing flameox entry under `section` in a parsed client configuration. A missing
 * section means no entry yet; a section or entry that is there but not a mapping is refused, since
 * editing around it could lose the user's data. `mapping` names one in the format's words ("an object", "a table").
 */
export function flameoxEntry(
  parsed: unknown,
  section: string[],
  path: string,
  mapping: "an object" | "a table",
): Record<string, unknown> | undefined {
  let container: unknown = parsed;
  for (const [index, key] of section.entries()) {
    if (!isPlainObject(container)) break;
    const next = container[key];
    if (next === undefined) {
      container = undefined;
      break;
    }
    if (!isPlainObject(next)) throw malformedConfig(path, `"${section.slice(0, index + 1).join(".")}" is not ${mapping}`);
    container = next;
  }
  const entry = isPlainObject(container) ? container.flameox : undefined;
  if (entry !== undefined && !isPlainObject(entry)) throw malformedConfig(path, `"${[...section, "flameox"].join(".")}" is not ${mapping}`);
  return entry as Record<string, unknown> | undefined;
}

/** Deep equality with object key order ignored and array order significant. */
export function deepEqual(left: unknown, right: unknown): boolean {
  if (left === right) return true;
  if (Array.isArray(left) || Array.isArray(right)) {
    if (!Array.isArray(left) || !Array.isArray(right) || left.length !== right.length) return false;
    return left.every((item, index) => deepEqual(item, right[index]));
  }
  if (left instanceof Date || right instanceof Date) {
    return left instanceof Date && right instanceof Date && left.getTime() === right.getTime();
  }
  if (isPlainObject(left) && isPlainObject(right)) {
    const leftKeys = Object.keys(left);
    if (leftKeys.length !== Object.keys(right).length) return false;
    return leftKeys.every((key) => Object.hasOwn(right, key) && deepEqual(left[key], right[key]));
  }
  return typeof left === "number" && typeof right === "number" && Number.isNaN(left) && Number.isNaN(right);
}

/** A copy of `root` with `path` set to `value` (or deleted when undefined): the expected parse after an edit. */
export function withPath(root: Record<string, unknown>, path: string[], value: unknown): Record<string, unknown> {
  const copy: Record<string, unknown> = { ...root };
  const [head, ...rest] = path;
  if (head === undefined) return copy;
  if (rest.length === 0) {
    if (value === undefined) delete copy[head];
    else copy[head] = value;
    return copy;
  }
  const child = copy[head];
  if (child === undefined && value === undefined) return copy;
  copy[head] = withPath(isPlainObject(child) ? child : {}, rest, value);
  return copy;
}

/** The section value (undefined when absent) of a parsed document. */
export function sectionValue(parsed: Record<string, unknown>, section: string[]): unknown {
  let node: unknown = parsed;
  for (const key of section) {
    if (!isPlainObject(node)) return undefined;
    node = node[key];
  }
  return node;
}

export function lineEnding(text: string): "\r\n" | "\n" {
  return text.includes("\r\n") ? "\r\n" : "\n";
}
