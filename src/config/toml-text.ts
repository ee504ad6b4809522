/**
 * Just enough TOML lexing to find table headers in already-valid text, and a small emitter for
 * values and keys. Surgical edits work on byte spans so comments and layout elsewhere survive.
 */
import { parse } from "smol-toml";

export type TomlHeader = {
  /** Offset of the first character of the header's line. */
  lineStart: number;
  /** Offset just past the header line (after its newline, or the end of the text). */
  lineEnd: number;
  /** The decoded key path, e.g. `[workloads."a.b".oracle]` → ["workloads", "a.b", "oracle"]. */
  path: string[];
  arrayOfTables: boolean;
};

/** Skips a string starting at `index`; returns the offset just past it. */
function skipString(text: string, index: number): number {
  const quote = text[index]!;
  const triple = text.startsWith(quote.repeat(3), index);
  if (triple) {
    let cursor = index + 3;
    while (cursor < text.length) {
      if (quote === '"' && text[cursor] === "\\") {
        cursor += 2;
        continue;
      }
      if (text.startsWith(quote.repeat(3), cursor)) {
        // Up to two extra quotes right before the closing delimiter belong to the content.
        let run = 3;
        while (run < 5 && text[cursor + run] === quote) run += 1;
        return cursor + run;
      }
      cursor += 1;
    }
    return text.length;
  }
  let cursor = index + 1;
  while (cursor < text.length) {
    const char = text[cursor]!;
    if (quote === '"' && char === "\\") {
      cursor += 2;
      continue;
    }
    if (char === quote || char === "\n") return cursor + 1;
    cursor += 1;
  }
  return text.length;
}

function decodeHeaderPath(header: string): string[] {
  let node: unknown = parse(`${header}\n`);
  const path: string[] = [];
  for (;;) {
    if (Array.isArray(node)) node = node[node.length - 1];
    if (node === null || typeof node !== "object") break;
    const keys = Object.keys(node);
    if (keys.length !== 1) break;
    const key = keys[0]!;
    path.push(key);
    node = (node as Record<string, unknown>)[key];
  }
  return path;
}

type TomlLayout = { headers: TomlHeader[]; commentStarts: Set<number> };

/** Headers (`[table]`, `[[array]]`) and real comment positions of a valid TOML document. */
function scanTomlLayout(text: string): TomlLayout {
  const headers: TomlHeader[] = [];
  const commentStarts = new Set<number>();
  let depth = 0;
  let atStatementStart = true;
  let index = 0;
  while (index < text.length) {
    const char = text[index]!;
    if (char === "\n") {
      if (depth === 0) atStatementStart = true;
      index += 1;
      continue;
    }
    if (char === " " || char === "\t" || char === "\r") {
      index += 1;
      continue;
    }
    if (char === "#") {
      commentStarts.add(index);
      const newline = text.indexOf("\n", index);
      index = newline === -1 ? text.length : newline;
      continue;
    }
    if (char === '"' || char === "'") {
      atStatementStart = false;
      index = skipString(text, index);
      continue;
    }
    if (char === "[" && depth === 0 && atStatementStart) {
      const arrayOfTables = text[index + 1] === "[";
      let cursor = index + (arrayOfTables ? 2 : 1);
      while (cursor < text.length && text[cursor] !== "]") {
        cursor = text[cursor] === '"' || text[cursor] === "'" ? skipString(text, cursor) : cursor + 1;
      }
      const headerEnd = Math.min(text.length, cursor + (arrayOfTables ? 2 : 1));
      const newline = text.indexOf("\n", headerEnd);
      const lineEnd = newline === -1 ? text.length : newline + 1;
      const trailingComment = text.indexOf("#", headerEnd);
      if (trailingComment !== -1 && trailingComment < lineEnd) commentStarts.add(trailingComment);
      headers.push({
        lineStart: text.lastIndexOf("\n", index - 1) + 1,
        lineEnd,
        path: decodeHeaderPath(text.slice(index, headerEnd)),
        arrayOfTables,
      });
      index = lineEnd;
      atStatementStart = true;
      continue;
    }
    atStatementStart = false;
    if (char === "[" || char === "{") depth += 1;
    else if (char === "]" || char === "}") depth = Math.max(0, depth - 1);
    index += 1;
  }
  return { headers, commentStarts };
}

/** Every `[table]` and `[[array]]` header of a valid TOML document, in order. */
export function scanTomlHeaders(text: string): TomlHeader[] {
  return scanTomlLayout(text).headers;
}

export type TableSpan = { start: number; end: number };

/**
 * The spans of every table whose path starts with `prefix` (the table itself and its sub-tables).
 * Each span runs from its header line to the next header, minus trailing blank and comment-only
 * lines, which usually introduce whatever follows and so stay where they are.
 */
export function tableSpans(text: string, prefix: readonly string[]): TableSpan[] {
  const { headers, commentStarts } = scanTomlLayout(text);
  const spans: TableSpan[] = [];
  headers.forEach((header, position) => {
    const matches = header.path.length >= prefix.length && prefix.every((key, keyIndex) => header.path[keyIndex] === key);
    if (!matches) return;
    let end = headers[position + 1]?.lineStart ?? text.length;
    while (end > header.lineEnd) {
      const contentEnd = text[end - 1] === "\n" ? end - 1 : end;
      const lineBegin = text.lastIndexOf("\n", contentEnd - 1) + 1;
      if (lineBegin < header.lineEnd) break;
      const line = text.slice(lineBegin, contentEnd);
      const firstVisible = line.search(/[^ \t\r]/);
      const blank = firstVisible === -1;
      // Only a real comment counts: a "#" inside a multi-line string does not.
      const comment = !blank && line[firstVisible] === "#" && commentStarts.has(lineBegin + firstVisible);
      if (!blank && !comment) break;
      end = lineBegin;
    }
    spans.push({ start: header.lineStart, end });
  });
  return spans;
}

const bareKeyPattern = /^[A-Za-z0-9_-]+$/;

export function renderTomlString(value: string): string {
  let out = '"';
  for (const char of value) {
    const code = char.codePointAt(0)!;
    if (char === '"') out += '\\"';
    else if (char === "\\") out += "\\\\";
    else if (char === "\n") out += "\\n";
    else if (char === "\t") out += "\\t";
    else if (char === "\r") out += "\\r";
    else if (char === "\b") out += "\\b";
    else if (char === "\f") out += "\\f";
    else if (code < 0x20 || code === 0x7f) out += `\\u${code.toString(16).toUpperCase().padStart(4, "0")}`;
    else out += char;
  }
  return `${out}"`;
}

export function renderTomlKey(key: string): string {
  return bareKeyPattern.test(key) ? key : renderTomlString(key);
}

export function renderTomlValue(value: unknown): string {
  if (typeof value === "string") return renderTomlString(value);
  if (typeof value === "boolean") return value ? "true" : "false";
  if (typeof value === "number") {
    if (!Number.isFinite(value)) throw new TypeError("TOML output here never holds NaN or infinities.");
    if (Number.isInteger(value) && !Number.isSafeInteger(value)) return value.toExponential();
    return String(value);
  }
  if (Array.isArray(value)) return `[${value.map(renderTomlValue).join(", ")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, item]) => item !== undefined);
    if (entries.length === 0) return "{}";
    return `{ ${entries.map(([key, item]) => `${renderTomlKey(key)} = ${renderTomlValue(item)}`).join(", ")} }`;
  }
  throw new TypeError(`Cannot render ${typeof value} as TOML.`);
}
