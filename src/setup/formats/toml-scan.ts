/**
 * A small string-, comment- and bracket-aware scanner over TOML text: table headers at line starts,
 * and the `key = value` statements inside one table, with the exact offsets of each value. The
 * splicer in toml.ts edits only those offsets; smol-toml re-parses every result.
 */
export type Header = { start: number; end: number; keys: string[]; array: boolean };

export function parseKey(source: string): string[] | undefined {
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
export function scanHeaders(text: string): Header[] {
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
      index = skipString(text, index);
    } else {
      if (char === "[" || char === "{") depth += 1;
      else if ((char === "]" || char === "}") && depth > 0) depth -= 1;
      index += 1;
    }
  }
  return headers;
}

/** The index just past the string starting at `index` (basic, literal, or either multi-line form). */
export function skipString(text: string, index: number): number {
  const char = text[index]!;
  const triple = text.startsWith(char.repeat(3), index);
  const delimiter = triple ? char.repeat(3) : char;
  let cursor = index + delimiter.length;
  while (cursor < text.length) {
    if (char === '"' && text[cursor] === "\\") {
      cursor += 2;
      continue;
    }
    if (text.startsWith(delimiter, cursor)) {
      cursor += delimiter.length;
      // A multi-line string may end with up to two extra quotes.
      while (triple && text[cursor] === char) cursor += 1;
      return cursor;
    }
    if (!triple && text[cursor] === "\n") return cursor;
    cursor += 1;
  }
  return cursor;
}

/** The end of the value starting at `index`: the line end (or comment) at bracket depth 0. */
function valueEnd(text: string, index: number, limit: number): number {
  let depth = 0;
  let cursor = index;
  let end = index;
  while (cursor < limit) {
    const char = text[cursor]!;
    if (char === '"' || char === "'") {
      cursor = skipString(text, cursor);
      end = cursor;
      continue;
    }
    if (char === "#") {
      const lineEnd = text.indexOf("\n", cursor);
      if (depth === 0) return end;
      cursor = lineEnd < 0 ? limit : lineEnd;
      continue;
    }
    if (char === "\n" && depth === 0) return end;
    if (char === "[" || char === "{") depth += 1;
    else if ((char === "]" || char === "}") && depth > 0) depth -= 1;
    cursor += 1;
    if (char !== " " && char !== "\t" && char !== "\r" && char !== "\n") end = cursor;
  }
  return end;
}

export type Statement = { keys: string[]; start: number; valueStart: number; valueEnd: number; lineEnd: number };

/** `key = value` statements between `from` and `to` (the body of one table). */
export function scanStatements(text: string, from: number, to: number): Statement[] {
  const statements: Statement[] = [];
  let index = from;
  while (index < to) {
    const lineEnd = text.indexOf("\n", index);
    const stop = lineEnd < 0 || lineEnd > to ? to : lineEnd;
    let cursor = index;
    while (cursor < stop && (text[cursor] === " " || text[cursor] === "\t")) cursor += 1;
    if (cursor >= stop || text[cursor] === "#" || text[cursor] === "\r") {
      index = stop + 1;
      continue;
    }
    let equals = cursor;
    while (equals < stop && text[equals] !== "=") {
      equals = text[equals] === '"' || text[equals] === "'" ? skipString(text, equals) : equals + 1;
    }
    const keys = equals < stop ? parseKey(text.slice(cursor, equals)) : undefined;
    if (!keys) {
      index = stop + 1;
      continue;
    }
    let valueStart = equals + 1;
    while (text[valueStart] === " " || text[valueStart] === "\t") valueStart += 1;
    const end = valueEnd(text, valueStart, to);
    const next = text.indexOf("\n", end);
    const statementLineEnd = next < 0 || next > to ? to : next;
    statements.push({ keys, start: cursor, valueStart, valueEnd: end, lineEnd: statementLineEnd });
    index = statementLineEnd + 1;
  }
  return statements;
}
