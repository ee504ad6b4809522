/**
 * Codex's config.toml. No maintained JS library edits TOML while keeping comments, so our table is
 * spliced in as text: find the `[mcp_servers.flameox]` header (and its sub-tables) with a small
 * string-, comment- and bracket-aware scanner, replace or append that block, then parse the result
 * with smol-toml and require it to equal the old document with only our entry changed. Anything the
 * splice cannot express (an inline table, dotted keys) fails closed with a repair message.
 */
import { parse as parseToml } from "smol-toml";
import { deepEqual, flameoxEntry, isPlainObject, lineEnding, malformedConfig, withPath, type ConfigDocument } from "./document.ts";

type Header = { start: number; end: number; keys: string[]; array: boolean };

function parseKey(source: string): string[] | undefined {
  const keys: string[] = [];
  let index = 0;
  const skip = (): void => {
    while (index < source.length && (source[index] === " " || source[index] === "\t")) index += 1;
  };
  for (;;) {
    skip();
    const char = source[index];
    if (char === '"' || char === "'") {
      const close = source.indexOf(char, index + 1);
      if (close < 0) return undefined;
      const raw = source.slice(index, close + 1);
      try {
        keys.push(char === '"' ? (JSON.parse(raw) as string) : raw.slice(1, -1));
      } catch {
        return undefined;
      }
      index = close + 1;
    } else {
      const match = /^[A-Za-z0-9_-]+/.exec(source.slice(index));
      if (!match) return undefined;
      keys.push(match[0]);
      index += match[0].length;
    }
    skip();
    if (index >= source.length) return keys;
    if (source[index] !== ".") return undefined;
    index += 1;
  }
}

/** Table headers at the start of a line, outside strings and multi-line values. */
function scanHeaders(text: string): Header[] {
  const headers: Header[] = [];
  let depth = 0;
  let index = 0;
  let lineStart = true;
  while (index < text.length) {
    const char = text[index]!;
    if (lineStart && depth === 0) {
      let cursor = index;
      while (text[cursor] === " " || text[cursor] === "\t") cursor += 1;
      if (text[cursor] === "[") {
        const array = text[cursor + 1] === "[";
        const open = cursor + (array ? 2 : 1);
        const lineEnd = text.indexOf("\n", cursor);
        const line = text.slice(open, lineEnd < 0 ? text.length : lineEnd);
        const close = line.indexOf(array ? "]]" : "]");
        const keys = close >= 0 ? parseKey(line.slice(0, close)) : undefined;
        if (keys) {
          const end = lineEnd < 0 ? text.length : lineEnd + 1;
          headers.push({ start: index, end, keys, array });
          index = end;
          lineStart = true;
          continue;
        }
      }
    }
    lineStart = false;
    if (char === "\n") {
      lineStart = true;
      index += 1;
    } else if (char === "#") {
      const lineEnd = text.indexOf("\n", index);
      index = lineEnd < 0 ? text.length : lineEnd;
    } else if (char === '"' || char === "'") {
      const triple = text.startsWith(char.repeat(3), index);
      const delimiter = triple ? char.repeat(3) : char;
      let cursor = index + delimiter.length;
      for (;;) {
        if (cursor >= text.length) break;
        if (char === '"' && text[cursor] === "\\") {
          cursor += 2;
          continue;
        }
        if (text.startsWith(delimiter, cursor)) {
          cursor += delimiter.length;
          // A multi-line string may end with up to two extra quotes.
          while (triple && text[cursor] === char) cursor += 1;
          break;
        }
        if (!triple && text[cursor] === "\n") break;
        cursor += 1;
      }
      index = cursor;
    } else {
      if (char === "[" || char === "{") depth += 1;
      else if ((char === "]" || char === "}") && depth > 0) depth -= 1;
      index += 1;
    }
  }
  return headers;
}

function tomlValue(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value);
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  if (Array.isArray(value)) return `[${value.map(tomlValue).join(", ")}]`;
  if (isPlainObject(value)) {
    return `{ ${Object.entries(value)
      .map(([key, item]) => `${JSON.stringify(key)} = ${tomlValue(item)}`)
      .join(", ")} }`;
  }
  throw new Error(`Cannot write ${typeof value} to TOML.`);
}

function startsWith(keys: string[], prefix: string[]): boolean {
  return prefix.every((key, index) => keys[index] === key);
}

export function openTomlDocument(text: string, path: string, section: string[]): ConfigDocument {
  let parsed: Record<string, unknown>;
  try {
    parsed = parseToml(text) as Record<string, unknown>;
  } catch (cause) {
    throw malformedConfig(path, `invalid TOML (${cause instanceof Error ? cause.message.split("\n")[0] : String(cause)})`, cause);
  }
  const entry = flameoxEntry(parsed, section, path, "a table");

  const keyPath = [...section, "flameox"];
  const eol = lineEnding(text);
  const headers = scanHeaders(text);

  // Our block(s): our header and its sub-tables, each up to the next header of another table.
  const blocks: Array<{ start: number; end: number }> = [];
  for (const [index, header] of headers.entries()) {
    if (!startsWith(header.keys, keyPath)) continue;
    const next = headers[index + 1];
    blocks.push({ start: header.start, end: trimTrailingTrivia(text, header.end, next ? next.start : text.length) });
  }

  const edit = (value: Record<string, unknown> | undefined): string => {
    if (value === undefined && entry === undefined) return text;
    if (
      entry !== undefined &&
      !headers.some((header) => !header.array && header.keys.length === keyPath.length && startsWith(header.keys, keyPath))
    ) {
      throw malformedConfig(
        path,
        `"${keyPath.join(".")}" is written as an inline table or dotted keys; rewrite it as a [${keyPath.join(".")}] table or remove it`,
      );
    }
    const table = value === undefined ? "" : renderTable(keyPath, value, eol);
    let result: string;
    if (blocks.length > 0) {
      const first = blocks[0]!;
      let out = text.slice(0, first.start) + table;
      let cursor = first.end;
      for (const block of blocks.slice(1)) {
        out += text.slice(cursor, block.start);
        cursor = block.end;
      }
      const rest = text.slice(cursor);
      // Removing a trailing table also drops the blank line that separated it from the one before.
      if (value === undefined && rest.trim() === "") out = out.replace(/(\r?\n)(\s*\r?\n)+$/, "$1");
      result = out + rest;
    } else {
      let prefix = text;
      if (prefix.length > 0 && !prefix.endsWith("\n")) prefix += eol;
      if (prefix.trim().length > 0 && !prefix.endsWith(eol + eol)) prefix += eol;
      result = prefix + table;
    }
    let reparsed: Record<string, unknown>;
    try {
      reparsed = parseToml(result) as Record<string, unknown>;
    } catch (cause) {
      throw malformedConfig(
        path,
        `"${section.join(".")}" cannot take a [${keyPath.join(".")}] table as written (an inline table or array?)`,
        cause,
      );
    }
    let expected = withPath(parsed, keyPath, value);
    // Removing our only table leaves no `mcp_servers` key at all when nothing else declared it.
    if (value === undefined && !deepEqual(reparsed, expected)) expected = withPath(parsed, section, undefined);
    if (!deepEqual(reparsed, expected)) {
      throw malformedConfig(
        path,
        `"${keyPath.join(".")}" is also set outside its [${keyPath.join(".")}] table (dotted keys or an inline table)`,
      );
    }
    return result;
  };
  return { entry, withEntry: (value) => edit(value), withoutEntry: () => edit(undefined) };
}

/** Comments and blank lines right before the next header (or the end) stay where they are. */
function trimTrailingTrivia(text: string, from: number, to: number): number {
  const lines = text.slice(from, to).split(/(?<=\n)/);
  let end = to;
  for (let index = lines.length - 1; index >= 0; index -= 1) {
    const line = lines[index]!;
    if (line.trim() === "" || line.trim().startsWith("#")) end -= line.length;
    else break;
  }
  return end;
}

function renderTable(keyPath: string[], value: Record<string, unknown>, eol: string): string {
  const header = `[${keyPath.map((key) => (/^[A-Za-z0-9_-]+$/.test(key) ? key : JSON.stringify(key))).join(".")}]`;
  const lines = [
    header,
    ...Object.entries(value).map(([key, item]) => `${/^[A-Za-z0-9_-]+$/.test(key) ? key : JSON.stringify(key)} = ${tomlValue(item)}`),
  ];
  return lines.join(eol) + eol;
}
