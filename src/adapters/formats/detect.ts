/**
 * Names the format of a profile, trace or capture file from its content (gzip-compressed files are
 * inflated as a bounded stream first), plus producer hints, without reading it whole. A file of no
 * format flameox reads comes back `unknown` with advice: the conversion or `kind` that would make it
 * readable (format-catalog.ts).
 */
import { basename } from "node:path";
import { createReadStream } from "node:fs";
import { isGzip } from "./byte-source.ts";
import { readLines } from "./common.ts";
import {
  type BinaryDetection,
  adviseBinary,
  detectProtobuf,
  detectSqlite,
  isMemrayCapture,
  isPstats,
  sqliteHeader,
} from "./detect-binary.ts";
import { type JsonDetection, adviseJson, detectJson, torchMarkers } from "./detect-json.ts";
import { type TextDetection, adviseText, detectText } from "./detect-text.ts";
import { type DetectedFormat, type FormatAdvice, conversionAdvice, unrecognizedAdvice } from "./format-catalog.ts";

export type { DetectedFormat, ProfileFormat } from "./format-catalog.ts";

export type DetectedProfileFormat = {
  format: DetectedFormat;
  /** e.g. "torch.profiler", "py-spy", "v8"; null when nothing says. */
  producer: string | null;
  producer_version: string | null;
  /** The markers that decided, for diagnostics. */
  hints: string[];
  /** For `unknown`: what the file seems to be and the step that would make it readable. */
  advice: FormatAdvice | null;
};

/** Enough to see torch.profiler's top-level keys before `traceEvents`. */
const sniffBytes = 64 * 1024;
/** An SQLite schema sits in the first pages; Nsight's spans a few hundred KB. */
const sqliteSniffBytes = 1 << 20;
/** Folded lines are classified on at most this many of the first lines. */
const sniffLines = 400;

async function readHead(path: string, bytes = sniffBytes): Promise<Uint8Array> {
  return new Uint8Array(await Bun.file(path).slice(0, bytes).arrayBuffer());
}

/**
 * The first `bytes` of a gzip file's inflated content, read in small chunks with a sync flush at the
 * end, so a file cut short or damaged still shows what inflated before the damage (an empty array
 * when nothing did).
 */
async function inflatedHead(path: string, bytes = sniffBytes): Promise<Uint8Array> {
  // Loaded here, not at start: node:zlib costs every flameox process several ms.
  const { createGunzip, constants: zlibConstants } = await import("node:zlib");
  const gunzip = createGunzip({ chunkSize: 16 * 1024, finishFlush: zlibConstants.Z_SYNC_FLUSH });
  const input = createReadStream(path, { highWaterMark: 64 * 1024 });
  input.on("error", (error) => gunzip.destroy(error));
  const parts: Buffer[] = [];
  let filled = 0;
  try {
    for await (const chunk of input.pipe(gunzip) as AsyncIterable<Buffer>) {
      parts.push(chunk);
      filled += chunk.length;
      if (filled >= bytes) break;
    }
  } catch {
    // Damaged or cut: detection goes by what inflated before the damage.
  } finally {
    input.destroy();
    gunzip.destroy();
  }
  return new Uint8Array(Buffer.concat(parts).subarray(0, bytes));
}

/** Text a UTF-16 file (with its byte-order mark) holds, else null. */
export function utf16Encoding(head: Uint8Array): "utf-16le" | "utf-16be" | null {
  if (head.length >= 2 && head[0] === 0xff && head[1] === 0xfe) return "utf-16le";
  if (head.length >= 2 && head[0] === 0xfe && head[1] === 0xff) return "utf-16be";
  return null;
}

function detected(
  format: DetectedFormat,
  hints: string[],
  producer: string | null = null,
  version: string | null = null,
  advice: FormatAdvice | null = null,
): DetectedProfileFormat {
  return { format, producer, producer_version: version, hints, advice };
}

function unknown(advice: FormatAdvice, hints: string[]): DetectedProfileFormat {
  return detected("unknown", hints, null, null, advice);
}

function fromJson(found: JsonDetection): DetectedProfileFormat {
  return detected(found.format, found.hints, found.producer, found.version);
}

function fromOther(found: BinaryDetection | TextDetection): DetectedProfileFormat {
  return detected(found.format, found.hints, found.producer);
}

/** Text (no more control bytes than text has) whose first non-blank character opens a JSON value. */
function looksLikeJsonText(head: Uint8Array): boolean {
  if (isBinary(head)) return false;
  for (const byte of head.subarray(0, 4096)) {
    if (byte === 0x20 || byte === 0x09 || byte === 0x0a || byte === 0x0d) continue;
    return byte === 0x7b || byte === 0x5b;
  }
  return false;
}

/** Mostly NUL bytes and control characters: not text, whatever a stray NUL in a name says. */
function isBinary(head: Uint8Array): boolean {
  const sample = head.subarray(0, 4096);
  let control = 0;
  for (const byte of sample) if (byte === 0 || (byte < 0x20 && byte !== 0x09 && byte !== 0x0a && byte !== 0x0d && byte !== 0x0c)) control++;
  return control > sample.length / 20;
}

/**
 * Detects from bytes already read (exported for callers that hold the head). `complete` says the
 * head is the whole file (its last line is complete too).
 */
export function detectProfileFormatFromHead(head: Uint8Array, name: string, complete = head.length < sniffBytes): DetectedProfileFormat {
  const lowerName = name.toLowerCase();
  if (isGzip(head)) {
    if (/\.json(\.gz)?$/.test(lowerName) && !lowerName.endsWith(".pb.gz"))
      return unknown(adviseJson("{"), ["gzip-compressed JSON: detectProfileFormat inflates it to look inside"]);
    return detected("pprof", ["gzip magic"]);
  }
  const utf16 = utf16Encoding(head);
  if (utf16 === null) {
    if (isPstats(head)) return detected("pstats", ["marshal dict of (file, line, name) keys"], "cProfile");
    // JSON that opens with a newline and spaces also parses as protobuf field 1 messages (0x0a, then a
    // length); text is never a trace packet stream, so printable JSON goes to the JSON readers.
    const protobuf = looksLikeJsonText(head) ? null : detectProtobuf(head);
    if (protobuf) return fromOther(protobuf);
    if (startsWithText(head, sqliteHeader)) {
      const sqlite = detectSqlite(head);
      return "format" in sqlite ? fromOther(sqlite) : unknown(sqlite, ["SQLite"]);
    }
    if (isMemrayCapture(head)) return detected("memray_capture", ["memray magic"], "memray");
    if (isBinary(head)) return unknown(adviseBinary(head), ["binary data"]);
  }
  const text = new TextDecoder(utf16 ?? "utf-8", { fatal: false }).decode(head).replace(/^\uFEFF/, "");
  const trimmed = text.trimStart();
  if (trimmed.startsWith("{") || /^\[\s*(\{|\[|\]|"|$)/.test(trimmed)) {
    const found = detectJson(trimmed, lowerName);
    return found ? fromJson(found) : unknown(adviseJson(trimmed), ["JSON of no known profile shape"]);
  }
  const lines = text.split("\n").map((line) => line.replace(/\r$/, ""));
  if (!complete) lines.pop();
  const sample = lines.slice(0, sniffLines);
  const found = detectText(sample);
  return found ? fromOther(found) : unknown(adviseText(sample), ["text of no known profile shape"]);
}

function startsWithText(head: Uint8Array, text: string): boolean {
  return head.length >= text.length && new TextDecoder("latin1").decode(head.subarray(0, text.length)) === text;
}

/** Producer markers found in the last `sniffBytes` of a JSON file (py-spy writes `exporter` last, kineto its metadata). */
function tailProducer(tail: string, format: DetectedFormat): { producer: string; version: string | null; hint: string } | null {
  if (format === "speedscope") {
    const exporter = /"exporter"\s*:\s*"([^"]*)"/.exec(tail)?.[1];
    if (!exporter) return null;
    const parts = /^(.+)@([^@]+)$/.exec(exporter);
    return { producer: parts ? (parts[1] as string) : exporter, version: parts ? (parts[2] as string) : null, hint: "exporter at the end" };
  }
  if (format === "chrome_trace") {
    const marker = torchMarkers.find((candidate) => tail.includes(candidate));
    return marker ? { producer: "torch.profiler", version: null, hint: `${marker} at the end` } : null;
  }
  return null;
}

/**
 * Text whose first line does not end within the head (a folded line over 64 KiB) is classified on
 * its first lines read whole, up to the line reader's own bound.
 */
async function detectLongLines(path: string, name: string): Promise<DetectedProfileFormat> {
  const lines: string[] = [];
  let characters = 0;
  try {
    for await (const { line } of readLines(path)) {
      lines.push(line);
      characters += line.length;
      if (lines.length >= sniffLines || characters >= 4 * sniffBytes) break;
    }
  } catch {
    // A line past the reader's bound, or damaged data: classified on what was read.
  }
  const found = detectText(lines);
  if (found) return fromOther(found);
  return detectProfileFormatFromHead(new TextEncoder().encode(lines.join("\n")), name, true);
}

export async function detectProfileFormat(path: string): Promise<DetectedProfileFormat> {
  const name = basename(path);
  const size = Bun.file(path).size;
  let head = await readHead(path);
  const gzip = isGzip(head);
  if (gzip) head = await inflatedHead(path);
  const innerName = gzip ? name.replace(/\.gz$/i, "") : name;
  if (startsWithText(head, sqliteHeader) && !gzip) head = await readHead(path, sqliteSniffBytes);
  const complete = gzip ? head.length < sniffBytes : size <= sniffBytes;
  if (gzip && head.length === 0)
    return unknown(unrecognizedAdvice("a gzip file whose data is damaged or cut off before anything inflates"), ["gzip"]);
  if (gzip && startsWithText(head, sqliteHeader)) {
    // SQLite reads files, not streams: the database has to be inflated to a file first.
    const advice = conversionAdvice(
      "a gzip-compressed SQLite database (an Nsight Systems or coverage.py file?)",
      "decompress it with `gunzip`",
    );
    return unknown(advice, ["gzip", "SQLite"]);
  }
  let result = detectProfileFormatFromHead(head, innerName, complete);
  if (
    result.format === "unknown" &&
    !complete &&
    result.hints.includes("text of no known profile shape") &&
    !head.subarray(0, sniffBytes).includes(0x0a)
  ) {
    result = await detectLongLines(path, innerName);
  }
  if (gzip) result = { ...result, hints: ["gzip", ...result.hints] };
  if (!gzip && result.producer === null && size > sniffBytes && (result.format === "speedscope" || result.format === "chrome_trace")) {
    const tail = new TextDecoder().decode(
      await Bun.file(path)
        .slice(Math.max(sniffBytes, size - sniffBytes), size)
        .arrayBuffer(),
    );
    const found = tailProducer(tail, result.format);
    if (found) return { ...result, producer: found.producer, producer_version: found.version, hints: [...result.hints, found.hint] };
  }
  return result;
}
