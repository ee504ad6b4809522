/**
 * Codex's config.toml. No maintained JS library edits TOML while keeping comments, so our table is
 * spliced in as text: find the `[mcp_servers.flameox]` header (and its sub-tables) with the scanner in
 * toml-scan.ts, append the table or replace only the values of the keys we manage, then parse the
 * result with smol-toml and require it to equal the old document with only our entry changed.
 * Anything the splice cannot express (an inline table, dotted keys) fails closed with a repair message.
 */
import { parse as parseToml } from "smol-toml";
import {
  deepEqual,
  flameoxEntry,
  isPlainObject,
  lineEnding,
  malformedConfig,
  mergedEntry,
  restoreFinalNewline,
  sectionValue,
  withPath,
  type ConfigDocument,
  type SectionOrigin,
} from "./document.ts";
import { scanHeaders, scanStatements, type Header } from "./toml-scan.ts";

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

type Block = { header: Header; start: number; end: number };

/** What the edits of one open document share: its text, what it parses to, and where our table is. */
type TomlContext = {
  text: string;
  path: string;
  section: string[];
  parsed: Record<string, unknown>;
  entry: Record<string, unknown> | undefined;
  keyPath: string[];
  eol: string;
  blocks: Block[];
  main: Block | undefined;
};

export function openTomlDocument(text: string, path: string, section: string[]): ConfigDocument {
  let parsed: Record<string, unknown>;
  try {
    parsed = parseToml(text) as Record<string, unknown>;
  } catch (cause) {
    throw malformedConfig(path, `invalid TOML (${cause instanceof Error ? cause.message.split("\n")[0] : String(cause)})`, cause);
  }
  const entry = flameoxEntry(parsed, section, path, "a table");
  const keyPath = [...section, "flameox"];
  const blocks = ourBlocks(text, keyPath);
  const main = blocks.find((block) => !block.header.array && block.header.keys.length === keyPath.length);
  if (entry !== undefined && !main) {
    throw malformedConfig(
      path,
      `"${keyPath.join(".")}" is written as an inline table or dotted keys; rewrite it as a [${keyPath.join(".")}] table or remove it`,
    );
  }
  const context: TomlContext = { text, path, section, parsed, entry, keyPath, eol: lineEnding(text), blocks, main };
  return {
    entry,
    origin: originOf(text, parsed, section),
    withEntry: (managed) => withEntry(context, managed),
    withoutEntry: (origin) => withoutEntry(context, origin),
  };
}

/** Our header and its sub-tables, each up to the next header of another table. */
function ourBlocks(text: string, keyPath: string[]): Block[] {
  const headers = scanHeaders(text);
  const blocks: Block[] = [];
  for (const [index, header] of headers.entries()) {
    if (!startsWith(header.keys, keyPath)) continue;
    const next = headers[index + 1];
    blocks.push({ header, start: header.start, end: trimTrailingTrivia(text, header.end, next ? next.start : text.length) });
  }
  return blocks;
}

/** The edited text must parse to exactly the expected document (or the alternative), else we refuse. */
function checked(context: TomlContext, result: string, expected: Record<string, unknown>, alternative?: Record<string, unknown>): string {
  const { path, section, keyPath } = context;
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
  if (!deepEqual(reparsed, expected) && !(alternative && deepEqual(reparsed, alternative))) {
    throw malformedConfig(
      path,
      `"${keyPath.join(".")}" is also set outside its [${keyPath.join(".")}] table (dotted keys or an inline table)`,
    );
  }
  return result;
}

function withEntry(context: TomlContext, managed: Record<string, unknown>): string {
  const { text, parsed, entry, keyPath, eol, main } = context;
  const expected = withPath(parsed, keyPath, mergedEntry(entry, managed));
  if (!main) {
    let prefix = text;
    if (prefix.length > 0 && !prefix.endsWith("\n")) prefix += eol;
    if (prefix.trim().length > 0 && !prefix.endsWith(eol + eol)) prefix += eol;
    return checked(context, prefix + renderTable(keyPath, managed, eol), expected);
  }
  // Replace only the values of the keys we manage, in place; the user's own keys, comments and
  // sub-tables (`[mcp_servers.flameox.env]`) keep their bytes.
  const statements = scanStatements(text, main.header.end, main.end);
  const edits: Array<{ start: number; end: number; text: string }> = [];
  const missing: string[] = [];
  for (const [key, value] of Object.entries(managed)) {
    if (entry && deepEqual(entry[key], value)) continue;
    const statement = statements.find((candidate) => candidate.keys.length === 1 && candidate.keys[0] === key);
    if (statement) edits.push({ start: statement.valueStart, end: statement.valueEnd, text: tomlValue(value) });
    else missing.push(`${tomlKey(key)} = ${tomlValue(value)}${eol}`);
  }
  if (missing.length > 0) edits.push({ start: main.header.end, end: main.header.end, text: missing.join("") });
  let result = text;
  for (const edit of edits.sort((left, right) => right.start - left.start)) {
    result = result.slice(0, edit.start) + edit.text + result.slice(edit.end);
  }
  return checked(context, result, expected);
}

function withoutEntry(context: TomlContext, origin: SectionOrigin | null): string {
  const { text, parsed, entry, keyPath, section, blocks } = context;
  if (entry === undefined) return text;
  const first = blocks[0]!;
  let out = text.slice(0, first.start);
  let cursor = first.end;
  for (const block of blocks.slice(1)) {
    out += text.slice(cursor, block.start);
    cursor = block.end;
  }
  const rest = text.slice(cursor);
  // Removing a trailing table also drops the blank line that separated it from the one before.
  if (rest.trim() === "") out = out.trim() === "" ? "" : out.replace(/(\r?\n)(\s*\r?\n)+$/, "$1");
  const expected = withPath(parsed, keyPath, undefined);
  // Removing our only table leaves no `mcp_servers` key at all when nothing else declared it.
  return restoreFinalNewline(checked(context, out + rest, expected, withPath(parsed, section, undefined)), origin);
}

function originOf(text: string, parsed: Record<string, unknown>, section: string[]): SectionOrigin {
  const value = sectionValue(parsed, section);
  const others = isPlainObject(value) ? Object.keys(value).filter((key) => key !== "flameox") : [];
  return {
    file_existed: true,
    section: value === undefined ? "absent" : others.length > 0 ? "present" : "empty",
    empty_text: null,
    final_newline: text === "" || text.endsWith("\n"),
  };
}

function tomlKey(key: string): string {
  return /^[A-Za-z0-9_-]+$/.test(key) ? key : JSON.stringify(key);
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
  const lines = [
    `[${keyPath.map(tomlKey).join(".")}]`,
    ...Object.entries(value).map(([key, item]) => `${tomlKey(key)} = ${tomlValue(item)}`),
  ];
  return lines.join(eol) + eol;
}
