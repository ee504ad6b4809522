/**
 * Partitioners cut an artifact into the units a reducer may remove and rebuild a candidate from the
 * units it keeps. Pure: bytes in, bytes out. Each unit's text is computed once, so a rebuild is a
 * concatenation, not a re-serialization of the whole document.
 */
import { artifactParseFailed } from "../../domain/errors.ts";
import type { ReductionPartitioner } from "../../domain/requests/reductions.ts";

export type Partition = {
  partitioner: ReductionPartitioner;
  unitCount: number;
  /** The candidate holding exactly these units (ascending indices). */
  rebuild(kept: readonly number[]): Uint8Array;
  /** Units another unit cannot be kept without (a trace's end event needs its begin event). */
  requires: ReadonlyMap<number, readonly number[]>;
};

/** The most units a reduction takes on: beyond it ddmin's bookkeeping would not fit the memory bound. */
export const maximumReductionUnits = 1_000_000;

const encoder = new TextEncoder();
const noDependencies: ReadonlyMap<number, readonly number[]> = new Map();

export function partitionArtifact(partitioner: ReductionPartitioner, bytes: Uint8Array): Partition {
  const partition = partitioners[partitioner](bytes);
  if (partition.unitCount === 0)
    throw artifactParseFailed(`The artifact has no ${unitNoun[partitioner]} to reduce.`, {
      details: { partitioner },
      remediation: ["Choose the partitioner that matches the artifact's format (text_lines works for any text)."],
    });
  if (partition.unitCount > maximumReductionUnits)
    throw artifactParseFailed(
      `The artifact has ${partition.unitCount} ${unitNoun[partitioner]}, over the ${maximumReductionUnits} a reduction takes.`,
      {
        details: { partitioner, unit_count: partition.unitCount, maximum_units: maximumReductionUnits },
        remediation: ["Reduce a smaller artifact, or a coarser partitioner (json_top_level instead of text_lines)."],
      },
    );
  return partition;
}

const unitNoun: Record<ReductionPartitioner, string> = {
  text_lines: "lines",
  json_top_level: "top-level JSON elements",
  jsonl_records: "JSONL records",
  chrome_trace_events: "trace events",
};

const partitioners: Record<ReductionPartitioner, (bytes: Uint8Array) => Partition> = {
  text_lines: textLines,
  json_top_level: jsonTopLevel,
  jsonl_records: jsonlRecords,
  chrome_trace_events: chromeTraceEvents,
};

/** Lines with their own endings, byte for byte, so the full rebuild is the original and any encoding survives. */
function textLines(bytes: Uint8Array): Partition {
  const starts: number[] = [];
  const ends: number[] = [];
  let start = 0;
  for (let index = 0; index < bytes.length; index++) {
    if (bytes[index] !== 0x0a) continue;
    starts.push(start);
    ends.push(index + 1);
    start = index + 1;
  }
  if (start < bytes.length) {
    starts.push(start);
    ends.push(bytes.length);
  }
  return {
    partitioner: "text_lines",
    unitCount: starts.length,
    requires: noDependencies,
    rebuild(kept) {
      let length = 0;
      for (const unit of kept) length += ends[unit]! - starts[unit]!;
      const out = new Uint8Array(length);
      let offset = 0;
      for (const unit of kept) {
        out.set(bytes.subarray(starts[unit]!, ends[unit]!), offset);
        offset += ends[unit]! - starts[unit]!;
      }
      return out;
    },
  };
}

function parseJson(bytes: Uint8Array, what: string): unknown {
  try {
    return JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
  } catch (error) {
    throw artifactParseFailed(`The artifact is not ${what}: ${(error as Error).message.slice(0, 200)}`, {
      remediation: ["Choose the partitioner that matches the artifact's format (text_lines works for any text)."],
    });
  }
}

/** Elements of a top-level array, or members of a top-level object; the rebuild is compact JSON in the original order. */
function jsonTopLevel(bytes: Uint8Array): Partition {
  const document = parseJson(bytes, "JSON");
  if (Array.isArray(document)) {
    const texts = document.map((item) => JSON.stringify(item));
    return joined("json_top_level", texts, "[", "]");
  }
  if (document !== null && typeof document === "object") {
    const texts = Object.entries(document).map(([key, value]) => `${JSON.stringify(key)}:${JSON.stringify(value)}`);
    return joined("json_top_level", texts, "{", "}");
  }
  throw artifactParseFailed("The artifact's JSON is a single value, not an array or object to reduce.", {
    remediation: ["Use text_lines for this artifact."],
  });
}

/** Non-blank lines, each of which must be JSON; kept as written, one per line. */
function jsonlRecords(bytes: Uint8Array): Partition {
  const text = decodeUtf8(bytes, "JSON Lines");
  const records: string[] = [];
  text.split("\n").forEach((line, index) => {
    const record = line.endsWith("\r") ? line.slice(0, -1) : line;
    if (record.trim() === "") return;
    try {
      JSON.parse(record);
    } catch (error) {
      throw artifactParseFailed(`Line ${index + 1} is not a JSON record: ${(error as Error).message.slice(0, 200)}`, {
        details: { line: index + 1 },
        remediation: ["Use text_lines when not every line is JSON."],
      });
    }
    records.push(`${record}\n`);
  });
  return joined("jsonl_records", records, "", "");
}

function decodeUtf8(bytes: Uint8Array, what: string): string {
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw artifactParseFailed(`The artifact is not UTF-8 ${what}.`, { remediation: ["Use text_lines for this artifact."] });
  }
}

type TraceEvent = { ph?: unknown; pid?: unknown; tid?: unknown; id?: unknown; id2?: unknown; cat?: unknown };

/**
 * Events of a Chrome trace (the JSON object with traceEvents, or the bare array form py-spy writes).
 * An end event is only meaningful with its begin, so keeping one keeps the other: E needs the open B
 * of its thread, async e/n need their b, old-style async T/p/F need their S, flow t/f need their s.
 */
function chromeTraceEvents(bytes: Uint8Array): Partition {
  const document = parseJson(bytes, "a Chrome trace");
  let events: unknown[];
  let prefix = "[";
  let suffix = "]";
  if (Array.isArray(document)) events = document;
  else if (document !== null && typeof document === "object" && Array.isArray((document as { traceEvents?: unknown }).traceEvents)) {
    const entries = Object.entries(document);
    const at = entries.findIndex(([key]) => key === "traceEvents");
    const member = ([key, value]: [string, unknown]) => `${JSON.stringify(key)}:${JSON.stringify(value)}`;
    prefix = `{${entries
      .slice(0, at)
      .map((entry) => `${member(entry)},`)
      .join("")}"traceEvents":[`;
    suffix = `]${entries
      .slice(at + 1)
      .map((entry) => `,${member(entry)}`)
      .join("")}}`;
    events = (document as { traceEvents: unknown[] }).traceEvents;
  } else
    throw artifactParseFailed("The artifact is not a Chrome trace: no traceEvents array.", {
      remediation: ["Use json_top_level or text_lines for this artifact."],
    });
  const partition = joined(
    "chrome_trace_events",
    events.map((event) => JSON.stringify(event)),
    prefix,
    suffix,
    ",",
  );
  return { ...partition, requires: eventDependencies(events) };
}

const beginOf: Record<string, string> = { E: "B", e: "b", n: "b", T: "S", p: "S", F: "S", t: "s", f: "s" };

function eventDependencies(events: unknown[]): Map<number, number[]> {
  const requires = new Map<number, number[]>();
  const open = new Map<string, number[]>();
  const key = (begin: string, event: TraceEvent) =>
    begin === "B"
      ? `B|${String(event.pid)}|${String(event.tid)}`
      : `${begin}|${begin === "s" ? "" : String(event.pid)}|${String(event.cat)}|${String(event.id ?? event.id2)}`;
  events.forEach((raw, index) => {
    if (raw === null || typeof raw !== "object") return;
    const event = raw as TraceEvent;
    const phase = typeof event.ph === "string" ? event.ph : "";
    if (phase === "B" || phase === "b" || phase === "S" || phase === "s") {
      const stack = open.get(key(phase, event)) ?? [];
      stack.push(index);
      open.set(key(phase, event), stack);
      return;
    }
    const begin = beginOf[phase];
    if (!begin) return;
    const stack = open.get(key(begin, event));
    const matched = stack?.[stack.length - 1];
    if (matched === undefined) return;
    requires.set(index, [matched]);
    // Only the closing phases end a span; steps and instants leave it open for later events.
    if (phase === "E" || phase === "e" || phase === "F" || phase === "f") stack!.pop();
  });
  return requires;
}

/** Units as precomputed texts between a fixed prefix and suffix. */
function joined(partitioner: ReductionPartitioner, texts: string[], prefix: string, suffix: string, separator = ","): Partition {
  const glue = partitioner === "jsonl_records" ? "" : separator;
  return {
    partitioner,
    unitCount: texts.length,
    requires: noDependencies,
    rebuild: (kept) => encoder.encode(prefix + kept.map((unit) => texts[unit]!).join(glue) + suffix),
  };
}
