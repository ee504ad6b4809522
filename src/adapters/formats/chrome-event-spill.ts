/**
 * Sorted runs of trace event records on disk, for traces too big to order in memory: one record per
 * line, fields separated by U+001F. A string that is empty or holds a line break or any of U+0001–
 * U+0003, U+001E, U+001F is written as U+0003 and its JSON text; null is U+0002.
 */
import { closeSync, openSync, writeSync } from "node:fs";
import { open } from "node:fs/promises";
import { TraceEventRecord } from "./chrome-event-record.ts";

const separator = "\u001f";
const nullField = "\u0002";
const encodedMarker = "\u0003";
const special = /[\n\r\u0001-\u0003\u001e\u001f]/;
const flushChars = 4 << 20;

function text(value: string | null): string {
  if (value === null) return nullField;
  if (value === "" || special.test(value)) return `${encodedMarker}${JSON.stringify(value)}`;
  return value;
}

function number(value: number | null): string {
  return value === null ? nullField : String(value);
}

function readText(field: string): string | null {
  if (field === nullField) return null;
  if (field.charCodeAt(0) === 3) return JSON.parse(field.slice(1)) as string;
  return field;
}

function readNumber(field: string): number | null {
  return field === nullField ? null : Number(field);
}

export function encodeRecord(record: TraceEventRecord): string {
  return [
    number(record.ts),
    number(record.group),
    number(record.sub),
    number(record.seq),
    text(record.ph),
    text(record.name),
    record.nameString === null ? "0" : "1",
    text(record.category),
    number(record.tsNs),
    number(record.durNs),
    text(record.pid),
    text(record.tid),
    text(record.scope),
    record.idDefined ? "1" : "0",
    text(record.idText),
    text(record.bindIdText),
    text(record.argsJson),
    record.argsIsObject ? "1" : "0",
    text(record.correlation),
    text(record.device),
    text(record.stream),
    text(record.file),
    number(record.line),
    text(record.metaName),
    number(record.size),
  ].join(separator);
}

/**
 * The record of one line. The args of a spilled record are its bounded JSON text, so a B event
 * with more than 4 KiB of args merges its E's args into that bounded text.
 */
export function decodeRecord(line: string): TraceEventRecord {
  const fields = line.split(separator);
  const field = (index: number) => fields[index] as string;
  const record = new TraceEventRecord();
  record.ts = Number(field(0));
  record.group = Number(field(1));
  record.sub = Number(field(2));
  record.seq = Number(field(3));
  record.ph = readText(field(4));
  record.name = readText(field(5)) ?? "";
  record.nameString = field(6) === "1" ? record.name : null;
  record.category = readText(field(7));
  record.tsNs = readNumber(field(8));
  record.durNs = readNumber(field(9));
  record.pid = readText(field(10));
  record.tid = readText(field(11));
  record.scope = readText(field(12)) ?? "t";
  record.idDefined = field(13) === "1";
  record.idText = readText(field(14));
  record.bindIdText = readText(field(15));
  record.argsJson = readText(field(16));
  record.argsIsObject = field(17) === "1";
  record.argsText = record.argsIsObject ? record.argsJson : null;
  record.correlation = readText(field(18));
  record.device = readText(field(19));
  record.stream = readText(field(20));
  record.file = readText(field(21));
  record.line = readNumber(field(22));
  record.metaName = readText(field(23));
  record.size = Number(field(24));
  return record;
}

/** Writes one sorted run. */
export function writeRun(path: string, records: readonly TraceEventRecord[]): number {
  const handle = openSync(path, "w", 0o600);
  let bytes = 0;
  try {
    let pending = "";
    for (const record of records) {
      pending += `${encodeRecord(record)}\n`;
      if (pending.length > flushChars) {
        bytes += writeSync(handle, pending);
        pending = "";
      }
    }
    if (pending.length > 0) bytes += writeSync(handle, pending);
  } finally {
    closeSync(handle);
  }
  return bytes;
}

/** The most a run reader reads at once (and so about the most text it decodes into records at once). */
export const maximumRunReadBytes = 256 << 10;

/** Reads a run back in batches of records, `readBytes` of its text at a time. */
export class RunReader {
  private readonly decoder = new TextDecoder();
  private readonly buffer: Buffer;
  private pending = "";
  private done = false;

  private constructor(
    private readonly handle: Awaited<ReturnType<typeof open>>,
    readBytes: number,
  ) {
    this.buffer = Buffer.allocUnsafe(readBytes);
  }

  static async open(path: string, readBytes = maximumRunReadBytes): Promise<RunReader> {
    return new RunReader(await open(path, "r"), readBytes);
  }

  /** The next records (at least one), or an empty array at the end. */
  async next(): Promise<TraceEventRecord[]> {
    for (;;) {
      const newline = this.pending.lastIndexOf("\n");
      if (newline >= 0) {
        const lines = this.pending.slice(0, newline).split("\n");
        this.pending = this.pending.slice(newline + 1);
        return lines.map(decodeRecord);
      }
      if (this.done) return [];
      const { bytesRead } = await this.handle.read(this.buffer, 0, this.buffer.length, null);
      if (bytesRead === 0) {
        this.done = true;
        this.pending += this.decoder.decode();
        if (this.pending.length > 0 && !this.pending.endsWith("\n")) this.pending += "\n";
        continue;
      }
      this.pending += this.decoder.decode(this.buffer.subarray(0, bytesRead), { stream: true });
    }
  }

  async close(): Promise<void> {
    await this.handle.close();
  }
}
