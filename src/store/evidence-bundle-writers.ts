/** The buffered staging writers of the evidence bundle's file-staged tables. */
import { closeSync, openSync, writeSync } from "node:fs";
import type { EvidenceTable } from "../domain/evidence.ts";
import { escapeSql } from "./evidence-bundle-encoding.ts";
import { flushBytes, writeBytes } from "./evidence-bundle-trace-events.ts";
import { duckdbColumnsLiteral } from "./evidence-schema.ts";

/**
 * Buffered NDJSON writer for the small tables (measurements, observations). `run_id` and
 * `artifact_id` are the same on every row, so they are not written; the Parquet conversion adds them.
 * Null members are left out (read_json with explicit columns reads a missing key as NULL).
 */
export class NdjsonWriter {
  private handle: number | undefined;
  private buffer = "";
  count = 0;
  bytes = 0;
  constructor(readonly path: string) {}

  write(row: Record<string, unknown>): void {
    let line = "{";
    let first = true;
    for (const key in row) {
      const value = row[key];
      if (value === null || value === undefined) continue;
      const text = JSON.stringify(value);
      if (text === undefined) continue;
      line += first ? `"${key}":${text}` : `,"${key}":${text}`;
      first = false;
    }
    this.buffer += `${line}}\n`;
    this.count += 1;
    if (this.buffer.length > flushBytes) this.flush();
  }

  flush(): void {
    if (this.buffer.length === 0) return;
    this.handle ??= openSync(this.path, "w", 0o600);
    const bytes = Buffer.from(this.buffer);
    writeBytes(this.handle, bytes);
    this.bytes += bytes.length;
    this.buffer = "";
  }

  close(): void {
    this.flush();
    if (this.handle !== undefined) closeSync(this.handle);
    this.handle = undefined;
  }

  source(table: EvidenceTable): string {
    return `read_json('${escapeSql(this.path)}', format = 'newline_delimited', columns = ${duckdbColumnsLiteral(table)}, maximum_object_size = 67108864)`;
  }
}

/** A staging row written straight as bytes: an upper bound of its size, and the writer (its end, or -1 for a row it leaves to the string encoder). */
export type RowBytes<Row> = { bound: (row: Row) => number; put: (into: Buffer, at: number, row: Row) => number };

/** Buffered delimited-text writer (frames, stacks): rows encoded into one byte buffer. */
export class DelimitedWriter<Row> {
  private handle: number | undefined;
  private bytes = Buffer.allocUnsafe(flushBytes);
  private used = 0;
  count = 0;
  written = 0;
  constructor(
    readonly path: string,
    private readonly encode: (row: Row) => string,
    private readonly direct?: RowBytes<Row>,
  ) {}

  write(row: Row): void {
    if (this.direct !== undefined && this.writeDirect(this.direct, row)) return;
    const line = this.encode(row);
    if (this.used + line.length * 3 > this.bytes.length) {
      this.flush();
      if (line.length * 3 > this.bytes.length) this.bytes = Buffer.allocUnsafe(line.length * 3);
    }
    this.used += this.bytes.write(line, this.used);
    this.count += 1;
  }

  /** Number → string conversions and flattening a joined line cost more than the bytes themselves. */
  private writeDirect(direct: RowBytes<Row>, row: Row): boolean {
    const bound = direct.bound(row);
    if (bound > this.bytes.length) return false;
    if (this.used + bound > this.bytes.length) this.flush();
    const end = direct.put(this.bytes, this.used, row);
    if (end < 0) return false;
    this.used = end;
    this.count += 1;
    return true;
  }

  flush(): void {
    if (this.used === 0) return;
    this.handle ??= openSync(this.path, "w", 0o600);
    let at = 0;
    while (at < this.used) at += writeSync(this.handle, this.bytes, at, this.used - at);
    this.written += this.used;
    this.used = 0;
  }

  close(): void {
    this.flush();
    if (this.handle !== undefined) closeSync(this.handle);
    this.handle = undefined;
  }
}
