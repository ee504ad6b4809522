/**
 * Binary formats told apart by their first bytes: profile.proto (pprof) versus a Perfetto trace
 * (both protobuf), cProfile's marshal dump, SQLite databases (Nsight Systems, coverage.py) by the
 * tables their schema creates, memray captures, and binaries flameox can name but not read
 * (perf.data, gperftools' legacy CPU profile, Java Flight Recorder, zip archives).
 */
import { type ArtifactFormat, type FormatAdvice, conversionAdvice, unrecognizedAdvice } from "./format-catalog.ts";

export type BinaryDetection = { format: "pprof" | "pstats" | ArtifactFormat; hints: string[]; producer: string | null };

export const sqliteHeader = "SQLite format 3\u0000";

function startsWith(head: Uint8Array, text: string): boolean {
  if (head.length < text.length) return false;
  for (let index = 0; index < text.length; index++) if (head[index] !== text.charCodeAt(index)) return false;
  return true;
}

function varint(bytes: Uint8Array, at: number): { value: number; next: number } | null {
  let value = 0;
  let scale = 1;
  for (let index = at; index < bytes.length && index < at + 10; index++) {
    const byte = bytes[index] as number;
    value += (byte & 0x7f) * scale;
    scale *= 128;
    if (byte < 0x80) return { value, next: index + 1 };
  }
  return null;
}

/** The top-level fields of a protobuf message that fit in `bytes`: field numbers and wire types. */
function protobufFields(bytes: Uint8Array, limit = 64): { field: number; wire: number; start: number; end: number }[] | null {
  const fields: { field: number; wire: number; start: number; end: number }[] = [];
  let at = 0;
  while (at < bytes.length && fields.length < limit) {
    const tag = varint(bytes, at);
    if (!tag || tag.value === 0) return fields.length > 0 ? fields : null;
    const field = Math.floor(tag.value / 8);
    const wire = tag.value % 8;
    let end: number;
    if (wire === 0) {
      const value = varint(bytes, tag.next);
      if (!value) return fields;
      end = value.next;
    } else if (wire === 2) {
      const length = varint(bytes, tag.next);
      if (!length) return fields;
      end = length.next + length.value;
      if (end > bytes.length) {
        fields.push({ field, wire, start: length.next, end: bytes.length });
        return fields;
      }
      fields.push({ field, wire, start: length.next, end });
      at = end;
      continue;
    } else if (wire === 1) end = tag.next + 8;
    else if (wire === 5) end = tag.next + 4;
    // A wire type protobuf does not have: the message is damaged here; what came before still counts.
    else return fields.length > 0 ? fields : null;
    fields.push({ field, wire, start: tag.next, end });
    at = end;
  }
  return fields;
}

/** pprof's first messages are `sample_type` ValueTypes: `08 <type> 10 <unit>`, a few bytes long. */
function isValueType(bytes: Uint8Array): boolean {
  const inner = protobufFields(bytes);
  return (
    inner !== null &&
    inner.length >= 1 &&
    inner.length <= 2 &&
    inner.every((field) => (field.field === 1 || field.field === 2) && field.wire === 0)
  );
}

const pprofWireTypes: Record<number, number[]> = {
  1: [2],
  2: [2],
  3: [2],
  4: [2],
  5: [2],
  6: [2],
  7: [0],
  8: [0],
  9: [0],
  10: [0],
  11: [2],
  12: [0],
  13: [0, 2],
  14: [0],
};

/**
 * profile.proto or a Perfetto trace. A trace is nothing but field 1 (packet) messages; a profile
 * usually opens with its `sample_type` ValueTypes, and every field it has is one of profile.proto's
 * 14 with its wire type (checked over the fields that fit in the head, at least two of them).
 */
export function detectProtobuf(head: Uint8Array): BinaryDetection | null {
  const fields = protobufFields(head);
  if (!fields || fields.length === 0) return null;
  const first = fields[0] as { field: number; wire: number; start: number; end: number };
  const opensWithValueType = first.field === 1 && first.wire === 2 && isValueType(head.subarray(first.start, first.end));
  if (fields.every((field) => field.field === 1 && field.wire === 2) && !opensWithValueType) {
    return { format: "perfetto_protobuf", hints: ["protobuf", "trace packets"], producer: "perfetto" };
  }
  // A profile that opens with its sample types is one even if a later field is damaged: its reader says where.
  const pprofLike = fields.every((field) => pprofWireTypes[field.field]?.includes(field.wire));
  if (opensWithValueType || (pprofLike && fields.length >= 2 && fields.some((field) => field.field === 2 || field.field === 6))) {
    return {
      format: "pprof",
      hints: ["protobuf", opensWithValueType ? "profile.proto sample types" : "profile.proto fields"],
      producer: null,
    };
  }
  return null;
}

/** cProfile's dump: a marshal dict (`{`, maybe with the reference flag) whose first key is a 3-tuple. */
export function isPstats(head: Uint8Array): boolean {
  if (head.length < 3 || (head[0] !== 0x7b && head[0] !== 0xfb)) return false;
  const tuple = (head[1] as number) & 0x7f;
  if (tuple === 0x29) return head[2] === 3;
  return tuple === 0x28 && head.length >= 6 && head[2] === 3 && head[3] === 0 && head[4] === 0 && head[5] === 0;
}

/** Names of the tables an SQLite file's schema creates (found in its first pages, where the schema lives). */
export function sqliteTables(bytes: Uint8Array): Set<string> {
  const text = new TextDecoder("latin1").decode(bytes);
  const tables = new Set<string>();
  for (const match of text.matchAll(/CREATE TABLE (?:IF NOT EXISTS )?["`[]?([A-Za-z_][A-Za-z0-9_]*)/g)) tables.add(match[1] as string);
  return tables;
}

export function detectSqlite(bytes: Uint8Array): BinaryDetection | FormatAdvice {
  const tables = sqliteTables(bytes);
  const names = [...tables];
  if (
    names.some(
      (name) =>
        name === "StringIds" || name.startsWith("CUPTI_ACTIVITY_KIND_") || name.startsWith("TARGET_INFO_") || name === "NVTX_EVENTS",
    )
  ) {
    return { format: "nsight_sqlite", hints: ["SQLite", "Nsight Systems tables"], producer: "nsight-systems" };
  }
  if (tables.has("coverage_schema")) return { format: "coverage_sqlite", hints: ["SQLite", "coverage.py schema"], producer: "coverage" };
  return unrecognizedAdvice(
    `an SQLite database whose tables (${names.slice(0, 5).join(", ") || "none found"}) are not an Nsight Systems export or a coverage.py data file`,
  );
}

/** memray writes an lz4 frame (or, with --no-compress, plain data) that starts with its "memray" magic. */
export function isMemrayCapture(head: Uint8Array): boolean {
  if (startsWith(head, "memray")) return true;
  if (!(head[0] === 0x04 && head[1] === 0x22 && head[2] === 0x4d && head[3] === 0x18)) return false;
  return new TextDecoder("latin1").decode(head.subarray(0, 64)).includes("memray");
}

/** Binaries flameox does not read, with the conversion that makes them readable. */
export function adviseBinary(head: Uint8Array): FormatAdvice {
  if (startsWith(head, "PERFILE2"))
    return conversionAdvice("a perf.data recording", "write its samples as text with `perf script -i <file> > profile.perf.txt`");
  if (startsWith(head, "FLR\u0000")) {
    return conversionAdvice(
      "a Java Flight Recorder recording",
      "convert it to pprof or collapsed stacks with async-profiler's converter (`jfrconv`)",
    );
  }
  if (head.length >= 40) {
    const view = new DataView(head.buffer, head.byteOffset, head.byteLength);
    const legacy64 = view.getBigUint64(0, true) === 0n && view.getBigUint64(8, true) === 3n && view.getBigUint64(16, true) === 0n;
    const legacy32 = view.getUint32(0, true) === 0 && view.getUint32(4, true) === 3 && view.getUint32(8, true) === 0;
    if (legacy64 || legacy32) {
      return conversionAdvice(
        "a legacy gperftools CPU profile",
        "convert it to profile.proto with `pprof -proto <program> <file> > profile.pb.gz`",
      );
    }
  }
  if (startsWith(head, "PK\u0003\u0004")) return unrecognizedAdvice("a zip archive; unpack it and import the profile inside");
  return unrecognizedAdvice("binary data of no known profile format");
}
