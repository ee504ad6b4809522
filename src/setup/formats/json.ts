/**
 * Strict JSON and JSONC client configs, edited with jsonc-parser `modify` so every byte outside our
 * entry (comments, key order, indentation, line endings) survives. After each edit the result is parsed
 * again and must equal the old document with only our entry changed.
 */
import {
  applyEdits,
  format,
  modify,
  parseTree,
  printParseErrorCode,
  type FormattingOptions,
  type Node,
  type ParseError,
} from "jsonc-parser";
import { deepEqual, flameoxEntry, isPlainObject, lineEnding, malformedConfig, withPath, type ConfigDocument } from "./document.ts";

export type JsonFlavour = "json" | "jsonc";

type Parsed = { value: Record<string, unknown>; tree: Node | undefined };

function parseDocument(text: string, flavour: JsonFlavour, path: string): Parsed {
  if (text.trim() === "") return { value: {}, tree: undefined };
  const errors: ParseError[] = [];
  const tree = parseTree(text, errors, {
    disallowComments: flavour === "json",
    allowTrailingComma: flavour === "jsonc",
    allowEmptyContent: false,
  });
  if (errors.length > 0 || tree === undefined) {
    const first = errors[0];
    const reason = first ? `${printParseErrorCode(first.error)} at offset ${first.offset}` : "no JSON value";
    throw malformedConfig(path, flavour === "json" ? `${reason} (strict JSON: no comments or trailing commas)` : reason);
  }
  if (flavour === "json") {
    try {
      JSON.parse(text);
    } catch (cause) {
      throw malformedConfig(path, "not strict JSON", cause);
    }
  }
  const duplicate = findDuplicateKey(tree, []);
  if (duplicate) throw malformedConfig(path, `duplicate key ${JSON.stringify(duplicate.join("."))}`);
  const value = nodeValue(tree);
  if (!isPlainObject(value)) throw malformedConfig(path, "the top level is not an object");
  return { value, tree };
}

function findDuplicateKey(node: Node, path: string[]): string[] | undefined {
  if (node.type === "object") {
    const seen = new Set<string>();
    for (const property of node.children ?? []) {
      const key = property.children?.[0]?.value as string;
      if (seen.has(key)) return [...path, key];
      seen.add(key);
      const child = property.children?.[1];
      if (child) {
        const found = findDuplicateKey(child, [...path, key]);
        if (found) return found;
      }
    }
  } else if (node.type === "array") {
    for (const [index, child] of (node.children ?? []).entries()) {
      const found = findDuplicateKey(child, [...path, String(index)]);
      if (found) return found;
    }
  }
  return undefined;
}

function nodeValue(node: Node): unknown {
  switch (node.type) {
    case "object": {
      const result: Record<string, unknown> = {};
      for (const property of node.children ?? []) {
        const key = property.children?.[0]?.value as string;
        const child = property.children?.[1];
        result[key] = child ? nodeValue(child) : undefined;
      }
      return result;
    }
    case "array":
      return (node.children ?? []).map(nodeValue);
    default:
      return node.value;
  }
}

function indentation(text: string): { insertSpaces: boolean; tabSize: number } {
  const match = /\n([ \t]+)\S/.exec(text);
  if (!match) return { insertSpaces: true, tabSize: 2 };
  const indent = match[1]!;
  if (indent.startsWith("\t")) return { insertSpaces: false, tabSize: 1 };
  return { insertSpaces: true, tabSize: Math.min(indent.length, 8) };
}

export function openJsonDocument(text: string, flavour: JsonFlavour, path: string, section: string[]): ConfigDocument {
  const parsed = parseDocument(text, flavour, path);
  const entry = flameoxEntry(parsed.value, section, path, "an object");

  const eol = lineEnding(text);
  const edit = (value: Record<string, unknown> | undefined): string => {
    const keyPath = [...section, "flameox"];
    if (value === undefined && entry === undefined) return text;
    const options: FormattingOptions = { ...indentation(text), eol };
    const result0 =
      text.trim() === ""
        ? applyEdits(`{}${eol}`, modify(`{}${eol}`, keyPath, value, { formattingOptions: options }))
        : editInPlace(text, keyPath, value, options);
    let result = result0;
    if (!result.endsWith("\n") && text.endsWith("\n")) result += eol;
    const expected = withPath(parsed.value, keyPath, value);
    const reparsed = parseDocument(result, flavour, path).value;
    if (!deepEqual(reparsed, expected)) throw malformedConfig(path, "an edit would change more than the flameox entry");
    return result;
  };
  return { entry, withEntry: (value) => edit(value), withoutEntry: () => edit(undefined) };
}

/**
 * jsonc-parser's own formatting re-flows whole lines around an edit, which would rewrite a neighbour
 * sharing the line. Instead, edit unformatted and format only the inserted text (plus the one character
 * on each side, so the line breaks next to it are right).
 */
function editInPlace(text: string, keyPath: string[], value: unknown, options: FormattingOptions): string {
  const edits = modify(text, keyPath, value, {});
  if (edits.length !== 1 || value === undefined) return applyEdits(text, edits);
  const edit = edits[0]!;
  const edited = applyEdits(text, edits);
  const start = Math.max(0, edit.offset - 1);
  const end = Math.min(edited.length, edit.offset + edit.content.length + 1);
  const contentEnd = edit.offset + edit.content.length;
  // Format edits may also trim whitespace just outside our text; keep only those inside it.
  const formatting = format(edited, { offset: start, length: end - start }, options).filter(
    (change) => change.offset >= edit.offset && change.offset + change.length <= contentEnd,
  );
  return applyEdits(edited, formatting);
}
