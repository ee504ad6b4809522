import { describe, expect, test } from "bun:test";
import type { StackRow, TraceEventRow } from "../../../src/domain/evidence.ts";
import { stackLine, traceEventLine, writeTraceEventLine } from "../../../src/store/evidence-bundle-encoding.ts";
import { putRow, putStackRow, rowBytesBound, stackRowBytesBound } from "../../../src/store/evidence-bundle-row-bytes.ts";
import { seededRandom } from "../../support/random.ts";

const plainTexts = ["aten::mm", "cpu_op", "4242", '{"External id":7,"Input Dims":[[1,64]]}', "~"];
const shortTexts = [
  "",
  "aten::mm",
  "cpu_op",
  "4242",
  '{"External id":7,"Input Dims":[[1,64]]}',
  "a\u001fb",
  "line\nbreak",
  "cr\r",
  "\u0003m",
  "\u0002",
  "\u0001",
  "\u001e",
  "nul\u0000",
  "tab\t",
  "ünï ✓",
  "🔥",
  "~\u007f",
  // Non-ASCII that is still one byte in Latin-1, and a lone surrogate (three UTF-8 bytes, as U+FFFD).
  "\u0080",
  "\u00ff",
  "lone \ud800 surrogate",
];
// The same characters in text long enough for the native-copy path, at its start, middle and end.
const texts = [
  ...shortTexts,
  ...shortTexts.flatMap((text) => [`${text}${"x".repeat(64)}`, `${"x".repeat(32)}${text}${"x".repeat(32)}`, `${"x".repeat(64)}${text}`]),
  // Just below the native-copy length, through the loop.
  ...shortTexts.map((text) => `${"x".repeat(Math.max(0, 63 - text.length))}${text}`),
];
const integers = [
  0,
  1,
  -1,
  9,
  10,
  99,
  100,
  123456789,
  2 ** 53 - 1,
  -(2 ** 53 - 1),
  2 ** 53,
  2 ** 53 + 2,
  1.7e18,
  1.7e18 + 123_456_768,
  1e18 - 128,
  4.4e18,
  4.5e18,
  -1.7e18,
  9.2e18,
  1e21,
  0.5,
  2.5,
  -0.4,
  Number.NaN,
  Number.POSITIVE_INFINITY,
];

function randomRow(next: () => number): TraceEventRow {
  const pick = (from: string[]) => from[Math.floor(next() * from.length)] as string;
  const text = () => (next() < 0.9 ? pick(plainTexts) : pick(texts));
  const maybe = () => (next() < 0.2 ? null : text());
  const integer = () =>
    next() < 0.1 ? null : next() < 0.5 ? Math.floor(next() * 1e9) : (integers[Math.floor(next() * integers.length)] as number);
  const largeTimestamp = () => 1.7e18 + Math.floor(next() * 2 ** 40) * 256;
  return {
    event_id: Math.floor(next() * 1e7),
    parent_id: integer(),
    depth: Math.floor(next() * 12),
    name: next() < 0.7 ? "aten::linear" : text(),
    category: maybe(),
    ts_ns: next() < 0.5 ? largeTimestamp() : integer(),
    dur_ns: integer(),
    pid: maybe(),
    tid: maybe(),
    args: maybe(),
    correlation: maybe(),
    device: maybe(),
    stream: maybe(),
    phase: next() < 0.8 ? "X" : text(),
  } as TraceEventRow;
}

describe("trace_events rows written as bytes", () => {
  test("every row gives the same bytes as its UTF-8 line string, whichever writer takes it", () => {
    const next = seededRandom(16);
    const into = Buffer.alloc(1 << 16);
    let plain = 0;
    for (let index = 0; index < 20_000; index++) {
      const row = randomRow(next);
      const expected = Buffer.from(traceEventLine(row));
      const written = writeTraceEventLine(row, into, 0);
      expect(into.subarray(0, written).equals(expected)).toBe(true);
      const end = putRow(into, 0, row);
      if (end >= 0) {
        plain++;
        expect(end).toBeLessThanOrEqual(rowBytesBound(row));
        expect(into.subarray(0, end).equals(expected)).toBe(true);
      }
    }
    // Both paths were exercised.
    expect(plain).toBeGreaterThan(1_000);
    expect(plain).toBeLessThan(19_000);
  });

  test("a row that does not fit is refused, not cut", () => {
    const row = randomRow(seededRandom(3));
    const line = Buffer.from(traceEventLine(row));
    expect(writeTraceEventLine(row, Buffer.alloc(line.length - 1), 0)).toBe(-1);
  });
});

function randomStack(next: () => number): StackRow {
  const pick = <T>(from: readonly T[]) => from[Math.floor(next() * from.length)] as T;
  const key = () => (next() < 0.95 ? `f_${Math.floor(next() * 1e12).toString(16)}` : pick(["", "a,b", "ü", "x\u001fy", "\n"]));
  const weights = [0, 1, 1.5, 2 ** 53 - 1, 2 ** 53, 2 ** 60, 1e21, -3, Number.NaN, 123_456_789];
  return {
    thread: next() < 0.2 ? null : pick(texts.concat(plainTexts, plainTexts)),
    process: next() < 0.2 ? null : pick(plainTexts),
    frame_keys: next() < 0.05 ? [] : Array.from({ length: 1 + Math.floor(next() * 6) }, key),
    weight: next() < 0.7 ? Math.floor(next() * 1e9) : pick(weights),
    unit: pick(["ns", "samples", "bytes"]),
    sample_count: next() < 0.9 ? Math.floor(next() * 1000) : pick(weights),
  } as StackRow;
}

test("stacks rows as bytes are the bytes of their UTF-8 line string", () => {
  const next = seededRandom(61);
  const into = Buffer.alloc(1 << 16);
  let plain = 0;
  for (let index = 0; index < 20_000; index++) {
    const row = randomStack(next);
    const end = putStackRow(into, 0, row);
    if (end < 0) continue;
    plain++;
    expect(end).toBeLessThanOrEqual(stackRowBytesBound(row));
    expect(into.subarray(0, end).equals(Buffer.from(stackLine(row)))).toBe(true);
  }
  expect(plain).toBeGreaterThan(5_000);
  expect(plain).toBeLessThan(19_000);
});
