import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { readJsonWithVisitor, walkParsedJson } from "../../../../src/adapters/formats/json-file.ts";
import { JsonScanError, JsonStreamScanner, type JsonPathSegment, type JsonVisitor } from "../../../../src/adapters/formats/json-stream.ts";
import { parseFailure, tempDir } from "./helpers.ts";

type Seen = { path: JsonPathSegment[]; value: unknown };

function collector(select: (path: readonly JsonPathSegment[]) => "capture" | "enter" | "skip"): { visitor: JsonVisitor; seen: Seen[] } {
  const seen: Seen[] = [];
  return { seen, visitor: { select, value: (path, value) => seen.push({ path: [...path], value }) } };
}

/** Feeds the text in pieces of `size` bytes. */
function scan(text: string, visitor: JsonVisitor, size: number): void {
  const bytes = new TextEncoder().encode(text);
  const scanner = new JsonStreamScanner(visitor);
  for (let at = 0; at < bytes.length; at += size) scanner.push(bytes.slice(at, at + size));
  scanner.end();
}

const tricky = JSON.stringify({
  'we"ird': { "k\\ey": [1, -2.5e3, true, false, null] },
  traceEvents: [
    { name: 'a "quoted" ] } [ {', ph: "X", ts: 1.5, args: { s: "back\\slash\\", u: "é \u2028 \u0001 𝄞" } },
    { name: "b", ph: "B", args: { nested: [[{}], []], empty: "" } },
    "str",
    42,
    [],
  ],
  tail: "x",
});

describe("JsonStreamScanner", () => {
  test("captures selected values identically at every chunk size, escapes and brackets in strings included", () => {
    const select = (path: readonly JsonPathSegment[]) =>
      path.length === 0 || (path.length === 1 && path[0] === "traceEvents")
        ? "enter"
        : path[0] === "traceEvents" || path[0] === 'we"ird'
          ? "capture"
          : "skip";
    const expected = collector(select);
    walkParsedJson(JSON.parse(tricky), expected.visitor);
    expect(expected.seen.length).toBe(6);
    for (const size of [1, 2, 3, 7, 64, 100_000]) {
      const actual = collector(select);
      scan(tricky, actual.visitor, size);
      expect(actual.seen).toEqual(expected.seen);
    }
  });

  test("a value or key captured across chunks survives the reader reusing one Buffer for every chunk", () => {
    const select = (path: readonly JsonPathSegment[]) =>
      path.length === 0 || (path.length === 1 && path[0] === "traceEvents") ? "enter" : path[0] === "traceEvents" ? "capture" : "skip";
    const expected = collector(select);
    walkParsedJson(JSON.parse(tricky), expected.visitor);
    const bytes = new TextEncoder().encode(tricky);
    for (const size of [1, 3, 7, 64]) {
      const actual = collector(select);
      const scanner = new JsonStreamScanner(actual.visitor);
      // What scanJsonFile does: one Buffer, refilled in place, handed over as a view.
      const reused = Buffer.alloc(size);
      for (let at = 0; at < bytes.length; at += size) {
        const piece = bytes.subarray(at, at + size);
        reused.set(piece);
        scanner.push(reused.subarray(0, piece.length));
        reused.fill(0x30);
      }
      scanner.end();
      expect(actual.seen).toEqual(expected.seen);
    }
  });

  test("enters nested containers and reports paths with indexes and keys", () => {
    const { visitor, seen } = collector((path) => (path.length < 3 ? "enter" : "capture"));
    scan('{"a":[{"b":1,"c":[2]},{"d":"x"}],"e":{"f":{"g":true}}}', visitor, 5);
    expect(seen).toEqual([
      { path: ["a", 0, "b"], value: 1 },
      { path: ["a", 0, "c"], value: [2] },
      { path: ["a", 1, "d"], value: "x" },
      { path: ["e", "f", "g"], value: true },
    ]);
  });

  test("accepts a byte-order mark, a top-level scalar and surrounding whitespace", () => {
    const { visitor, seen } = collector(() => "capture");
    const scanner = new JsonStreamScanner(visitor);
    scanner.push(new Uint8Array([0xef, 0xbb, 0xbf, 0x20, 0x31, 0x32]));
    scanner.end();
    expect(seen).toEqual([{ path: [], value: 12 }]);
  });

  const failures: [string, RegExp][] = [
    ['{"traceEvents":[{"ph":"X"},{"ph":"B"', /truncated JSON: the file ends at byte 36/],
    [
      '{"traceEvents":[{"ph":"X"},{"ph":"B", "name": "cut',
      /truncated JSON: the file ends at byte 50 .*starts at byte 27 \(traceEvents\[1\]\)/,
    ],
    ["[1,}", /malformed JSON at byte 3/],
    ['{"a" 1}', /malformed JSON at byte 5: expected ':'/],
    ["[1] x", /malformed JSON at byte 4: unexpected 'x' after the end/],
    ['[{"a":1]]', /malformed JSON at byte 7.*mismatched/],
    ["", /holds no JSON value/],
    ['{"a":[tru]}', /malformed JSON in the value that starts at byte 6 \(a\[0\]\)/],
  ];
  for (const [text, pattern] of failures) {
    test(`rejects ${JSON.stringify(text)} naming the byte offset`, () => {
      const { visitor } = collector((path) => (path.length < 2 ? "enter" : "capture"));
      let caught: unknown;
      try {
        scan(text, visitor, 3);
      } catch (error) {
        caught = error;
      }
      expect(caught).toBeInstanceOf(JsonScanError);
      expect((caught as JsonScanError).message).toMatch(pattern);
    });
  }
});

describe("readJsonWithVisitor", () => {
  test("stream and whole modes call the visitor the same way; truncated files fail with ARTIFACT_PARSE_FAILED", async () => {
    const { dir, cleanup } = tempDir();
    try {
      const file = join(dir, "doc.json");
      writeFileSync(file, tricky);
      const select = (path: readonly JsonPathSegment[]) => (path.length < 2 ? "enter" : "capture");
      const whole = collector(select);
      const streamed = collector(select);
      expect(await readJsonWithVisitor(file, whole.visitor, { mode: "whole" })).toBe("whole");
      expect(await readJsonWithVisitor(file, streamed.visitor, { mode: "stream" })).toBe("stream");
      expect(streamed.seen).toEqual(whole.seen);

      const cut = join(dir, "cut.json");
      writeFileSync(cut, tricky.slice(0, 80));
      for (const mode of ["whole", "stream"] as const) {
        const error = await parseFailure(() => readJsonWithVisitor(cut, collector(select).visitor, { mode }));
        expect(error.code).toBe("ARTIFACT_PARSE_FAILED");
        expect(error.message).toMatch(/byte 80/);
      }
    } finally {
      cleanup();
    }
  });
});
