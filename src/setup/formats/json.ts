/**
 * Strict JSON and JSONC client configs, edited with jsonc-parser `modify` so every byte outside our
 * entry (comments, key order, indentation, line endings) survives. After each edit the result is parsed
 * again and must equal the old document with only our entry changed.
 */
import {
  applyEdits,
  findNodeAtLocation,
  format,
  modify,
  parseTree,
  printParseErrorCode,
  type FormattingOptions,
  type Node,
  type ParseError,
} from "jsonc-parser";
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

/**
 * json: strict JSON (Claude Code, Cursor, …). jsonc: comments and trailing commas (VS Code, OpenCode).
 * json-comments: comments but no trailing commas — Gemini CLI strips comments, then JSON.parse()s.
 */
export type JsonFlavour = "json" | "jsonc" | "json-comments";

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
    const rule = {
      json: " (strict JSON: no comments or trailing commas)",
      "json-comments": " (comments are allowed, trailing commas are not)",
      jsonc: "",
    };
    throw malformedConfig(path, reason + rule[flavour]);
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
  const keyPath = [...section, "flameox"];
  const eol = lineEnding(text);
  const options: FormattingOptions = { ...indentation(text), eol };

  const checked = (result: string, expected: Record<string, unknown>): string => {
    const final = !result.endsWith("\n") && text.endsWith("\n") ? result + eol : result;
    if (!deepEqual(parseDocument(final, flavour, path).value, expected)) {
      throw malformedConfig(path, "an edit would change more than the flameox entry");
    }
    return final;
  };

  const withEntry = (managed: Record<string, unknown>): string => {
    if (text.trim() === "") {
      const empty = `{}${eol}`;
      return checked(applyEdits(empty, modify(empty, keyPath, managed, { formattingOptions: options })), withPath({}, keyPath, managed));
    }
    const merged = mergedEntry(entry, managed);
    if (entry === undefined) return checked(editInPlace(text, keyPath, managed, options), withPath(parsed.value, keyPath, merged));
    // Only the keys we manage change; the user's own keys in our entry keep their bytes.
    let result = text;
    for (const [key, value] of Object.entries(managed)) {
      if (!deepEqual(entry[key], value)) result = editInPlace(result, [...keyPath, key], value, options);
    }
    return checked(result, withPath(parsed.value, keyPath, merged));
  };

  const withoutEntry = (origin: SectionOrigin | null): string => {
    if (entry === undefined) return text;
    let result = applyEdits(text, modify(text, keyPath, undefined, {}));
    let expected = withPath(parsed.value, keyPath, undefined);
    const remaining = sectionNode(result, flavour, path, section);
    if (remaining && (remaining.children ?? []).length === 0) {
      if (origin?.section === "absent") {
        result = applyEdits(result, modify(result, section, undefined, {}));
        expected = withPath(expected, section, undefined);
        // The section was the only thing we added to an empty document: give back its exact text.
        const root = parseDocument(result, flavour, path).tree;
        if (root?.type === "object" && (root.children ?? []).length === 0 && origin.empty_text !== null) {
          // A blank file is given back whole; an empty object in place.
          result =
            origin.empty_text.trim() === ""
              ? origin.empty_text
              : result.slice(0, root.offset) + origin.empty_text + result.slice(root.offset + root.length);
        }
      } else {
        // An emptied section goes back to exactly the text it had (`{}` when we do not know).
        const emptyText = origin?.section === "empty" && origin.empty_text !== null ? origin.empty_text : "{}";
        result = result.slice(0, remaining.offset) + emptyText + result.slice(remaining.offset + remaining.length);
      }
    }
    if (typeof origin?.tail_text === "string")
      result = restoreTail(result, flavour, path, origin.section === "absent" ? [] : section, origin.tail_text);
    return restoreFinalNewline(checked(result, expected), origin);
  };

  return { entry, origin: originOf(text, parsed, section), withEntry, withoutEntry };
}

/** The whitespace between an object's last member and its closing brace: what an insertion re-formats. */
function tailGap(node: Node | undefined): [number, number] | undefined {
  if (node?.type !== "object" || (node.children ?? []).length === 0) return undefined;
  const last = node.children![node.children!.length - 1]!;
  return [last.offset + last.length, node.offset + node.length - 1];
}

function restoreTail(text: string, flavour: JsonFlavour, path: string, container: string[], tail: string): string {
  const { tree } = parseDocument(text, flavour, path);
  const gap = tailGap(tree && (container.length === 0 ? tree : findNodeAtLocation(tree, container)));
  if (!gap || text.slice(gap[0], gap[1]).trim() !== "") return text;
  return text.slice(0, gap[0]) + tail + text.slice(gap[1]);
}

function sectionNode(text: string, flavour: JsonFlavour, path: string, section: string[]): Node | undefined {
  const { tree } = parseDocument(text, flavour, path);
  const node = tree ? findNodeAtLocation(tree, section) : undefined;
  return node?.type === "object" ? node : undefined;
}

function originOf(text: string, parsed: Parsed, section: string[]): SectionOrigin {
  const finalNewline = text.endsWith("\n");
  const value = sectionValue(parsed.value, section);
  if (value === undefined) {
    // For an absent section, empty_text is the text of an empty document (`{}`), so removing the
    // section we added can give it back exactly.
    const rootEmpty = parsed.tree?.type === "object" && (parsed.tree.children ?? []).length === 0;
    const emptyText =
      parsed.tree === undefined ? text : rootEmpty ? text.slice(parsed.tree.offset, parsed.tree.offset + parsed.tree.length) : null;
    const gap = tailGap(parsed.tree);
    const tail = gap ? text.slice(gap[0], gap[1]) : null;
    return { file_existed: true, section: "absent", empty_text: emptyText, tail_text: tail, final_newline: finalNewline };
  }
  const others = isPlainObject(value) ? Object.keys(value).filter((key) => key !== "flameox") : [];
  if (others.length > 0) {
    const gap = tailGap(parsed.tree ? findNodeAtLocation(parsed.tree, section) : undefined);
    const tail = gap ? text.slice(gap[0], gap[1]) : null;
    return { file_existed: true, section: "present", empty_text: null, tail_text: tail, final_newline: finalNewline };
  }
  const node = parsed.tree ? findNodeAtLocation(parsed.tree, section) : undefined;
  const emptyText = node && (node.children ?? []).length === 0 ? text.slice(node.offset, node.offset + node.length) : null;
  return { file_existed: true, section: "empty", empty_text: emptyText, final_newline: finalNewline };
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
