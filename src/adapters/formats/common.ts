/**
 * Shared plumbing of the profile/trace extractors: options and result shapes, a row budget, frame
 * interning, units and languages, line reading, and growable typed arrays. Stacks fold in
 * stack-aggregator.ts.
 */
import { frameKey, type EvidenceSink, type FrameRow, type StackRow, type StackUnit, type TraceEventRow } from "../../domain/evidence.ts";
import { closeSync, openSync, readSync } from "node:fs";
import { artifactParseFailed, extractionBoundExceeded, type FlameoxError } from "../../domain/errors.ts";
import { FrameKeySet } from "../../domain/frame-key-set.ts";
import { openByteSource } from "./byte-source.ts";
import type { ParseMode } from "./json-stream.ts";

export type ExtractOptions = {
  projectRoot: string | null;
  /** Overrides the language the extractor would infer for its frames. */
  language?: string;
  /** Caps the stacks and trace_events rows emitted (each table separately). */
  maxRows?: number;
  /** JSON formats: `auto` parses small files whole and streams big ones; tests force either path. */
  parseMode?: ParseMode;
};

export type ExtractedRowCounts = { frames: number; stacks: number; trace_events: number };

export type ExtractResult = {
  rows: ExtractedRowCounts;
  producer?: string;
  producer_version?: string;
  limitations: string[];
};

/** ARTIFACT_PARSE_FAILED for one file the extractor reads, naming the file and what is wrong with it. */
export function fileParseFailed(
  file: string,
  message: string,
  details: Record<string, unknown> = {},
  remediation = [
    "Check that the file is complete and in the format named (see detect_profile_format).",
    "Re-export the profile or trace and import it again.",
  ],
): FlameoxError {
  return artifactParseFailed(`Cannot parse ${file}: ${message}`, { details: { path: file, ...details }, remediation });
}

/** The final labels of the stacks rows whose `thread` is `key`. */
export type StackLabel = { key: string; thread: string | null; process: string | null };

/** A sink (the evidence bundle writer) that can sum repeated stacks rows and relabel them when it finishes. */
export type StackMergingSink = { mergeRepeatedStacks(labels: StackLabel[]): void };

export function canMergeStacks(sink: EvidenceSink): boolean {
  return typeof (sink as Partial<StackMergingSink>).mergeRepeatedStacks === "function";
}

/** An input whose extraction would pass a hard bound (inflated size, staging bytes, depth). */
export function artifactTooLarge(file: string, message: string, details: Record<string, unknown> = {}): FlameoxError {
  return extractionBoundExceeded(`Cannot extract ${file}: ${message}`, {
    details: { path: file, ...details },
    remediation: [
      "Check that the file is what it claims to be (a compressed file that inflates without bound is refused).",
      "Capture or export a smaller profile or trace and import that.",
    ],
  });
}

/** Staging text an extraction may write per input byte (plain, and gzip-compressed input). */
const stagingPerInputByte = 16;
const stagingPerCompressedByte = 64;

/**
 * Bounds the staging text a sink that supports it (the bundle writer) accepts for this input: a
 * multiple of the input's size, with the sink's floor. An input that would expand past it (deep
 * nesting, overlap patterns, a bomb) ends with ARTIFACT_TOO_LARGE instead of filling the disk.
 */
export function boundStaging(sink: EvidenceSink, file: string): void {
  const limit = (sink as { limitStagingBytes?: (bytes: number) => void }).limitStagingBytes;
  if (typeof limit !== "function") return;
  const size = Bun.file(file).size;
  const head = new Uint8Array(readHeadSync(file));
  const perByte = head[0] === 0x1f && head[1] === 0x8b ? stagingPerCompressedByte : stagingPerInputByte;
  limit.call(sink, size * perByte);
}

function readHeadSync(file: string): Uint8Array {
  const handle = openSync(file, "r");
  try {
    const head = new Uint8Array(2);
    readSync(handle, head, 0, 2, 0);
    return head;
  } finally {
    closeSync(handle);
  }
}

/** Wraps the sink: dedups frames it has already passed on, counts rows and enforces `maxRows`. */
export class RowEmitter {
  readonly counts: ExtractedRowCounts = { frames: 0, stacks: 0, trace_events: 0 };
  private readonly sink: EvidenceSink;
  private readonly maxRows: number;
  private readonly seenFrames = new FrameKeySet();
  private droppedStacks = 0;
  private droppedTraceEvents = 0;

  constructor(sink: EvidenceSink, maxRows: number | undefined) {
    this.sink = sink;
    this.maxRows = maxRows !== undefined && maxRows >= 0 ? maxRows : Number.POSITIVE_INFINITY;
  }

  frame(row: FrameRow): void {
    if (!this.seenFrames.add(row.frame_key)) return;
    this.counts.frames++;
    this.sink.frame(row);
  }

  full(table: "stacks" | "trace_events"): boolean {
    return (table === "stacks" ? this.counts.stacks : this.counts.trace_events) >= this.maxRows;
  }

  /** Returns false once the budget is spent (the row is dropped and counted). */
  stack(row: StackRow, frames?: readonly FrameRow[]): boolean {
    if (this.counts.stacks >= this.maxRows) {
      this.droppedStacks++;
      return false;
    }
    if (frames) for (const frame of frames) this.frame(frame);
    this.counts.stacks++;
    this.sink.stack(row);
    return true;
  }

  traceEvent(row: TraceEventRow): boolean {
    if (this.counts.trace_events >= this.maxRows) {
      this.droppedTraceEvents++;
      return false;
    }
    this.counts.trace_events++;
    this.sink.traceEvent(row);
    return true;
  }

  /**
   * Rows were flushed before the end: they may repeat a stack, and their `thread` holds a key that
   * `labels` maps to the final thread and process labels. Only for sinks that `canMergeStacks`.
   */
  stacksMayRepeat(labels: StackLabel[]): void {
    (this.sink as unknown as StackMergingSink).mergeRepeatedStacks(labels);
  }

  limitations(): string[] {
    const notes: string[] = [];
    if (this.droppedStacks > 0) notes.push(`maxRows reached: ${this.droppedStacks} stacks rows were not emitted.`);
    if (this.droppedTraceEvents > 0) {
      notes.push(`maxRows reached: ${this.droppedTraceEvents} trace_events rows were not emitted.`);
    }
    return notes;
  }
}

export type FrameSpec = {
  function: string;
  file: string | null;
  line: number | null;
  module: string | null;
  language: string;
};

/**
 * A frame without a source file is located by its module (`memcpy` in libc.so.6 is not `memcpy`
 * in libfoo.so, a GPU annotation is not the CPU one of the same name), as the perf adapter keys them.
 */
function location(spec: FrameSpec): string | null {
  return spec.file ?? spec.module;
}

/**
 * A copy of a string that holds its own characters. A slice of a large decoded chunk keeps the
 * whole chunk alive, so strings kept for the whole extraction (frames, labels) are copied once.
 */
export function ownedString<T extends string | null>(text: T): T {
  return (text === null || text.length === 0 ? text : JSON.parse(JSON.stringify(text))) as T;
}

export function frameRow(spec: FrameSpec): FrameRow {
  const owned: FrameSpec = {
    function: ownedString(spec.function),
    file: ownedString(spec.file),
    line: spec.line,
    module: ownedString(spec.module),
    language: spec.language,
  };
  return {
    frame_key: frameKey({ language: owned.language, function: owned.function, file: location(owned), line: owned.line }),
    function: owned.function,
    file: owned.file,
    line: owned.line,
    module: owned.module,
    language: owned.language,
  };
}

/** Interns frames by identity (a frame with a file: the first module seen for it wins). */
export class FrameTable {
  readonly rows: FrameRow[] = [];
  private readonly byIdentity = new Map<string, number>();

  intern(spec: FrameSpec): number {
    const identity = `${spec.language}\u0000${spec.function}\u0000${location(spec) ?? ""}\u0000${spec.line ?? ""}`;
    const known = this.byIdentity.get(identity);
    if (known !== undefined) return known;
    const index = this.rows.length;
    this.rows.push(frameRow(spec));
    this.byIdentity.set(identity, index);
    return index;
  }
}

/** Weight unit of a time/size unit name; `scale` converts raw values to the stack unit. */
export function stackUnitOf(unit: string | null | undefined): { unit: StackUnit; scale: number } | null {
  switch ((unit ?? "").toLowerCase()) {
    case "nanoseconds":
    case "ns":
      return { unit: "ns", scale: 1 };
    case "microseconds":
    case "us":
      return { unit: "ns", scale: 1e3 };
    case "milliseconds":
    case "ms":
      return { unit: "ns", scale: 1e6 };
    case "seconds":
    case "s":
      return { unit: "ns", scale: 1e9 };
    case "bytes":
      return { unit: "bytes", scale: 1 };
    case "":
    case "none":
    case "samples":
    case "count":
      return { unit: "samples", scale: 1 };
    default:
      return null;
  }
}

const languageByExtension: Record<string, string> = {
  py: "python",
  pyx: "python",
  js: "javascript",
  mjs: "javascript",
  cjs: "javascript",
  ts: "javascript",
  mts: "javascript",
  tsx: "javascript",
  jsx: "javascript",
  go: "go",
  rs: "rust",
  c: "native",
  h: "native",
  cc: "native",
  cpp: "native",
  cxx: "native",
  hpp: "native",
  java: "java",
  kt: "java",
  rb: "ruby",
};

/** Language from a source file's extension, or null when it says nothing. */
export function languageForFile(file: string | null | undefined): string | null {
  if (!file) return null;
  const match = /\.([A-Za-z0-9]+)$/.exec(file);
  if (!match) return null;
  return languageByExtension[(match[1] as string).toLowerCase()] ?? null;
}

/** A line longer than this is refused rather than held (a folded file has no reason for one). */
export const maxLineBytes = 64 << 20;

/** The file has a line longer than `maxLineBytes`. */
export class LineTooLong extends Error {
  constructor(
    readonly line: number,
    readonly offset: number,
  ) {
    super(`line ${line} (byte ${offset}) is longer than ${maxLineBytes} bytes`);
  }
}

/**
 * Reads a text file (gzip-compressed or not) line by line without holding it whole; yields each
 * line and its byte offset. A line over `maxLineBytes` throws LineTooLong.
 */
export async function* readLines(file: string): AsyncGenerator<{ line: string; offset: number; number: number }> {
  let decoder = new TextDecoder();
  let pending = "";
  let pendingOffset = 0;
  let number = 0;
  const encoder = new TextEncoder();
  let byteLength = (text: string): number => (/^[\x00-\x7f]*$/.test(text) ? text.length : encoder.encode(text).length);
  const source = await openByteSource(file, { maxInflatedBytes: 16 * 1024 ** 3 });
  const chunk = Buffer.allocUnsafe(1 << 20);
  let first = true;
  try {
    for (;;) {
      const read = await source.read(chunk, 0, chunk.length);
      if (read === 0) break;
      if (first) {
        first = false;
        // UTF-16 text (with its byte-order mark) is read as such: two bytes per code unit.
        const utf16 =
          read >= 2 && chunk[0] === 0xff && chunk[1] === 0xfe
            ? "utf-16le"
            : read >= 2 && chunk[0] === 0xfe && chunk[1] === 0xff
              ? "utf-16be"
              : null;
        if (utf16) {
          decoder = new TextDecoder(utf16);
          byteLength = (text) => text.length * 2;
          pendingOffset = 2;
        }
      }
      pending += decoder.decode(chunk.subarray(0, read), { stream: true });
      let newline = pending.indexOf("\n");
      let start = 0;
      while (newline !== -1) {
        const raw = pending.slice(start, newline);
        number++;
        yield { line: raw.endsWith("\r") ? raw.slice(0, -1) : raw, offset: pendingOffset, number };
        pendingOffset += byteLength(raw) + 1;
        start = newline + 1;
        newline = pending.indexOf("\n", start);
      }
      pending = pending.slice(start);
      if (pending.length > maxLineBytes) throw new LineTooLong(number + 1, pendingOffset);
    }
  } finally {
    await source.close();
  }
  pending += decoder.decode();
  if (pending.length > 0) {
    number++;
    yield { line: pending.endsWith("\r") ? pending.slice(0, -1) : pending, offset: pendingOffset, number };
  }
}

/** Growable typed arrays: per-sample data of big profiles without boxed numbers. */
export class GrowableFloat64 {
  private data = new Float64Array(1024);
  length = 0;
  push(value: number): void {
    if (this.length === this.data.length) {
      const next = new Float64Array(this.data.length * 2);
      next.set(this.data);
      this.data = next;
    }
    this.data[this.length++] = value;
  }
  get(index: number): number {
    return this.data[index] as number;
  }
}

export class GrowableInt32 {
  private data = new Int32Array(1024);
  length = 0;
  push(value: number): void {
    if (this.length === this.data.length) {
      const next = new Int32Array(this.data.length * 2);
      next.set(this.data);
      this.data = next;
    }
    this.data[this.length++] = value;
  }
  get(index: number): number {
    return this.data[index] as number;
  }
}

/** "name@1.2.3" → producer and version (scoped npm names keep their leading "@"). */
export function splitExporter(exporter: string): { producer: string; version?: string } {
  const match = /^(.+)@([^@]+)$/.exec(exporter);
  if (!match) return { producer: exporter };
  return { producer: match[1] as string, version: match[2] as string };
}
