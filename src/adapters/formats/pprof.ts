/**
 * pprof `profile.proto` (gzip-compressed or plain) with a minimal protobuf reader. Location ids in
 * a sample are leaf first; a location's lines are innermost (inlined) first. The sample type is
 * chosen by option, else the profile's default_sample_type, else `cpu`, else the last one.
 */
import { gunzipSync } from "node:zlib";
import { projectRelativePath, type EvidenceSink, type StackUnit } from "../../domain/evidence.ts";
import {
  FrameTable,
  RowEmitter,
  artifactParseFailed,
  boundStaging,
  languageForFile,
  stackUnitOf,
  type ExtractOptions,
  type ExtractResult,
} from "./common.ts";
import { StackAggregator } from "./stack-aggregator.ts";

export type PprofOptions = ExtractOptions & {
  /** Name of the sample type to weight stacks by (`cpu`, `samples`, `alloc_space` …). */
  sampleType?: string;
};

class ProtoError extends Error {}

/** Reads protobuf wire format; int64 values beyond 2^53 lose precision (addresses only). */
export class ProtoReader {
  pos: number;
  readonly end: number;
  private readonly bytes: Uint8Array;

  constructor(bytes: Uint8Array, start = 0, end = bytes.length) {
    this.bytes = bytes;
    this.pos = start;
    this.end = end;
  }

  get done(): boolean {
    return this.pos >= this.end;
  }

  varint(): number {
    let result = 0;
    let factor = 1;
    for (let index = 0; index < 10; index++) {
      if (this.pos >= this.end) throw new ProtoError(`truncated varint at byte ${this.pos}`);
      const byte = this.bytes[this.pos++] as number;
      result += (byte & 0x7f) * factor;
      if (byte < 0x80) return result >= 2 ** 63 ? result - 2 ** 64 : result;
      factor *= 128;
    }
    throw new ProtoError(`varint longer than 10 bytes at byte ${this.pos}`);
  }

  /** Returns [field number, wire type]. */
  tag(): [number, number] {
    const tag = this.varint();
    return [Math.floor(tag / 8), tag & 7];
  }

  bytesField(): Uint8Array {
    const length = this.varint();
    const start = this.pos;
    if (length < 0 || start + length > this.end) throw new ProtoError(`length-delimited field overruns its message at byte ${start}`);
    this.pos = start + length;
    return this.bytes.subarray(start, start + length);
  }

  skip(wireType: number): void {
    switch (wireType) {
      case 0:
        this.varint();
        return;
      case 1:
        this.pos += 8;
        break;
      case 2:
        this.bytesField();
        return;
      case 5:
        this.pos += 4;
        break;
      default:
        throw new ProtoError(`unsupported wire type ${wireType} at byte ${this.pos}`);
    }
    if (this.pos > this.end) throw new ProtoError(`fixed-width field overruns its message at byte ${this.pos}`);
  }

  /** Repeated integer field: packed (wire type 2) or one value (wire type 0). */
  repeatedVarints(wireType: number, into: number[]): void {
    if (wireType === 0) {
      into.push(this.varint());
      return;
    }
    if (wireType !== 2) throw new ProtoError(`unexpected wire type ${wireType} for a repeated integer`);
    const length = this.varint();
    const start = this.pos;
    if (start + length > this.end) throw new ProtoError(`packed field overruns its message at byte ${start}`);
    const inner = new ProtoReader(this.bytes, start, start + length);
    while (!inner.done) into.push(inner.varint());
    this.pos = start + length;
  }
}

type ValueType = { type: number; unit: number };
type Sample = { locations: number[]; values: number[]; labels: { key: number; str: number; num: number }[] };
type Line = { functionId: number; line: number };
type Location = { id: number; mappingId: number; address: number; lines: Line[] };
type ProfileFunction = { id: number; name: number; systemName: number; filename: number };
type Mapping = { id: number; filename: number };

export type PprofProfile = {
  sampleTypes: ValueType[];
  samples: Sample[];
  locations: Map<number, Location>;
  functions: Map<number, ProfileFunction>;
  mappings: Map<number, Mapping>;
  strings: string[];
  defaultSampleType: number;
  periodType: ValueType | null;
  period: number;
};

function readValueType(bytes: Uint8Array): ValueType {
  const reader = new ProtoReader(bytes);
  const value: ValueType = { type: 0, unit: 0 };
  while (!reader.done) {
    const [field, wire] = reader.tag();
    if (field === 1 && wire === 0) value.type = reader.varint();
    else if (field === 2 && wire === 0) value.unit = reader.varint();
    else reader.skip(wire);
  }
  return value;
}

/** Decodes an uncompressed profile.proto message. */
export function decodePprof(bytes: Uint8Array): PprofProfile {
  const profile: PprofProfile = {
    sampleTypes: [],
    samples: [],
    locations: new Map(),
    functions: new Map(),
    mappings: new Map(),
    strings: [],
    defaultSampleType: 0,
    periodType: null,
    period: 0,
  };
  const decoder = new TextDecoder();
  const reader = new ProtoReader(bytes);
  while (!reader.done) {
    const [field, wire] = reader.tag();
    if (wire === 2 && field >= 1 && field <= 6) {
      const body = reader.bytesField();
      const inner = new ProtoReader(body);
      switch (field) {
        case 1:
          profile.sampleTypes.push(readValueType(body));
          break;
        case 2: {
          const sample: Sample = { locations: [], values: [], labels: [] };
          while (!inner.done) {
            const [sampleField, sampleWire] = inner.tag();
            if (sampleField === 1) inner.repeatedVarints(sampleWire, sample.locations);
            else if (sampleField === 2) inner.repeatedVarints(sampleWire, sample.values);
            else if (sampleField === 3 && sampleWire === 2) {
              const label = new ProtoReader(inner.bytesField());
              const parsed = { key: 0, str: 0, num: 0 };
              while (!label.done) {
                const [labelField, labelWire] = label.tag();
                if (labelField === 1 && labelWire === 0) parsed.key = label.varint();
                else if (labelField === 2 && labelWire === 0) parsed.str = label.varint();
                else if (labelField === 3 && labelWire === 0) parsed.num = label.varint();
                else label.skip(labelWire);
              }
              sample.labels.push(parsed);
            } else inner.skip(sampleWire);
          }
          profile.samples.push(sample);
          break;
        }
        case 3: {
          const mapping: Mapping = { id: 0, filename: 0 };
          while (!inner.done) {
            const [mappingField, mappingWire] = inner.tag();
            if (mappingField === 1 && mappingWire === 0) mapping.id = inner.varint();
            else if (mappingField === 5 && mappingWire === 0) mapping.filename = inner.varint();
            else inner.skip(mappingWire);
          }
          profile.mappings.set(mapping.id, mapping);
          break;
        }
        case 4: {
          const location: Location = { id: 0, mappingId: 0, address: 0, lines: [] };
          while (!inner.done) {
            const [locationField, locationWire] = inner.tag();
            if (locationField === 1 && locationWire === 0) location.id = inner.varint();
            else if (locationField === 2 && locationWire === 0) location.mappingId = inner.varint();
            else if (locationField === 3 && locationWire === 0) location.address = inner.varint();
            else if (locationField === 4 && locationWire === 2) {
              const lineReader = new ProtoReader(inner.bytesField());
              const line: Line = { functionId: 0, line: 0 };
              while (!lineReader.done) {
                const [lineField, lineWire] = lineReader.tag();
                if (lineField === 1 && lineWire === 0) line.functionId = lineReader.varint();
                else if (lineField === 2 && lineWire === 0) line.line = lineReader.varint();
                else lineReader.skip(lineWire);
              }
              location.lines.push(line);
            } else inner.skip(locationWire);
          }
          profile.locations.set(location.id, location);
          break;
        }
        case 5: {
          const fn: ProfileFunction = { id: 0, name: 0, systemName: 0, filename: 0 };
          while (!inner.done) {
            const [fnField, fnWire] = inner.tag();
            if (fnField === 1 && fnWire === 0) fn.id = inner.varint();
            else if (fnField === 2 && fnWire === 0) fn.name = inner.varint();
            else if (fnField === 3 && fnWire === 0) fn.systemName = inner.varint();
            else if (fnField === 4 && fnWire === 0) fn.filename = inner.varint();
            else inner.skip(fnWire);
          }
          profile.functions.set(fn.id, fn);
          break;
        }
        case 6:
          profile.strings.push(decoder.decode(body));
          break;
      }
    } else if (field === 11 && wire === 2) {
      profile.periodType = readValueType(reader.bytesField());
    } else if (field === 12 && wire === 0) {
      profile.period = reader.varint();
    } else if (field === 14 && wire === 0) {
      profile.defaultSampleType = reader.varint();
    } else {
      reader.skip(wire);
    }
  }
  return profile;
}

const threadLabelKeys = new Set(["thread", "thread_name", "threadname", "thread name", "goroutine"]);
const processLabelKeys = new Set(["process", "process_name", "pid"]);

export async function extractPprof(path: string, sink: EvidenceSink, options: PprofOptions): Promise<ExtractResult> {
  boundStaging(sink, path);
  let bytes = new Uint8Array(await Bun.file(path).arrayBuffer());
  if (bytes.length >= 2 && bytes[0] === 0x1f && bytes[1] === 0x8b) {
    try {
      bytes = new Uint8Array(gunzipSync(bytes));
    } catch (error) {
      throw artifactParseFailed(path, `gzip data is damaged or cut off: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  let profile: PprofProfile;
  try {
    profile = decodePprof(bytes);
  } catch (error) {
    if (error instanceof ProtoError) throw artifactParseFailed(path, `malformed profile.proto: ${error.message}`);
    throw error;
  }
  const text = (index: number): string => profile.strings[index] ?? "";
  if (profile.sampleTypes.length === 0 || profile.strings[0] !== "") {
    throw artifactParseFailed(path, "no sample types or string table: this is not a pprof profile");
  }
  const typeNames = profile.sampleTypes.map((type) => text(type.type));
  let chosen = -1;
  if (options.sampleType !== undefined) {
    chosen = typeNames.indexOf(options.sampleType);
    if (chosen === -1) {
      throw artifactParseFailed(path, `sample type "${options.sampleType}" is not in the profile (has: ${typeNames.join(", ")})`);
    }
  } else if (profile.defaultSampleType !== 0 && typeNames.includes(text(profile.defaultSampleType))) {
    chosen = typeNames.indexOf(text(profile.defaultSampleType));
  } else if (typeNames.includes("cpu")) {
    chosen = typeNames.indexOf("cpu");
  } else {
    chosen = typeNames.length - 1;
  }
  const chosenType = profile.sampleTypes[chosen] as ValueType;
  const unitName = text(chosenType.unit);
  const limitations: string[] = [];
  const mapped = stackUnitOf(unitName);
  if (!mapped) limitations.push(`sample type ${typeNames[chosen]} has unit "${unitName}"; weights kept as samples.`);
  const unit: StackUnit = mapped?.unit ?? "samples";
  const scale = mapped?.scale ?? 1;
  // A count-valued sample type, when there is one besides the chosen type, gives sample_count.
  const countIndex = profile.sampleTypes.findIndex(
    (type, index) => index !== chosen && (text(type.unit) === "count" || text(type.type) === "samples"),
  );
  if (profile.sampleTypes.length > 1) {
    limitations.push(
      `weighted by sample type "${typeNames[chosen]}" (${unitName}); the profile also has ${typeNames.filter((_, index) => index !== chosen).join(", ")}.`,
    );
  }

  const frames = new FrameTable();
  const aggregator = new StackAggregator();
  const locationFrames = new Map<number, number[]>();
  let missingLocations = 0;
  const framesOfLocation = (id: number): number[] => {
    const known = locationFrames.get(id);
    if (known) return known;
    const location = profile.locations.get(id);
    const result: number[] = [];
    if (!location) {
      missingLocations++;
      return result;
    }
    const mapping = profile.mappings.get(location.mappingId);
    const module = mapping?.filename ? (text(mapping.filename).split("/").pop() ?? null) : null;
    if (location.lines.length === 0) {
      result.push(
        frames.intern({
          function: `0x${location.address.toString(16)}`,
          file: null,
          line: null,
          module,
          language: options.language ?? "native",
        }),
      );
    }
    // lines are innermost first; callers come later
    for (const line of location.lines) {
      const fn = profile.functions.get(line.functionId);
      const file = fn ? text(fn.filename) || null : null;
      result.push(
        frames.intern({
          function: (fn ? text(fn.name) || text(fn.systemName) : "") || "<unknown>",
          file: projectRelativePath(file, options.projectRoot),
          line: line.line > 0 ? line.line : null,
          module,
          language: options.language ?? languageForFile(file) ?? "native",
        }),
      );
    }
    locationFrames.set(id, result);
    return result;
  };

  for (const sample of profile.samples) {
    const leafFirst: number[] = [];
    for (const locationId of sample.locations) leafFirst.push(...framesOfLocation(locationId));
    const node = aggregator.path(leafFirst.reverse());
    let thread: string | null = null;
    let process: string | null = null;
    for (const label of sample.labels) {
      const key = text(label.key).toLowerCase();
      const value = label.str !== 0 ? text(label.str) : String(label.num);
      if (threadLabelKeys.has(key)) thread = value;
      else if (processLabelKeys.has(key)) process = value;
    }
    const group = aggregator.group(`${process ?? ""}\u0000${thread ?? ""}`, { thread, process, unit, scale });
    const weight = sample.values[chosen] ?? 0;
    const count = countIndex >= 0 ? (sample.values[countIndex] ?? 1) : 1;
    aggregator.add(group, node, weight, count);
  }

  const emitter = new RowEmitter(sink, options.maxRows);
  aggregator.emit(emitter, (frameId) => frames.rows[frameId] as (typeof frames.rows)[number]);
  if (missingLocations > 0) limitations.push(`${missingLocations} location ids had no location entry.`);
  limitations.push(...emitter.limitations());
  return { rows: emitter.counts, limitations };
}
