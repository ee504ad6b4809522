/**
 * pprof `profile.proto` (gzip-compressed or plain), decoded as a stream: the top-level fields are
 * read one at a time (protobuf.ts) and samples fold at once into one entry per distinct (locations,
 * labels), so memory is O(distinct stacks + the profile's tables), never the samples or the file.
 * Location ids in a sample are leaf first; a location's lines are innermost (inlined) first. The
 * sample type is chosen by option, else the profile's default_sample_type, else `cpu`, else the
 * last one. gzip output is capped in proportion to the input (a bomb is refused), and a value
 * that is negative or beyond 2^53 (2^64-1, say) is left out with a limitation.
 */
import { projectRelativePath, type EvidenceSink, type StackUnit } from "../../domain/evidence.ts";
import { openByteSource } from "./byte-source.ts";
import {
  FrameTable,
  RowEmitter,
  fileParseFailed,
  artifactTooLarge,
  boundStaging,
  languageForFile,
  stackUnitOf,
  type ExtractOptions,
  type ExtractResult,
} from "./common.ts";
import { inflateFailed } from "./json-file.ts";
import { ProtoError, ProtoFieldTooLarge, ProtoReader, ProtoStream } from "./protobuf.ts";
import { StackAggregator } from "./stack-aggregator.ts";

export type PprofOptions = ExtractOptions & {
  /** Name of the sample type to weight stacks by (`cpu`, `samples`, `alloc_space` …). */
  sampleType?: string;
};

type ValueType = { type: number; unit: number };
type Line = { functionId: number; line: number };
type Location = { id: number; mappingId: number; address: number; lines: Line[] };
type ProfileFunction = { id: number; name: number; systemName: number; filename: number };
type Mapping = { id: number; filename: number };
type Label = { key: number; str: number; num: number };
/** The samples of one distinct (locations, labels): value sums per sample type and which were out of range. */
type Folded = { locations: number[]; labels: Label[]; sums: number[]; invalid: number[]; samples: number };

export type PprofProfile = {
  sampleTypes: ValueType[];
  folded: Map<string, Folded>;
  locations: Map<number, Location>;
  functions: Map<number, ProfileFunction>;
  mappings: Map<number, Mapping>;
  strings: string[];
  defaultSampleType: number;
};

/** Inflated bytes per compressed byte a gzip profile may grow to (real profiles compress 2–10×). */
const maxInflationRatio = 100;
const minimumInflatedBytes = 16 << 20;
const maxFieldBytes = 64 << 20;
/**
 * Memory bounds on the decoded tables: an entry costs a few bytes of input but tens of bytes of
 * heap, so without a cap a 1 MB gzip of empty strings grew to 1.4 GB before its inflation cap hit.
 * Real profiles hold at most a few hundred thousand strings, locations and distinct stacks.
 */
export const pprofTableBounds = { entries: 4_000_000, stringBytes: 256 << 20, distinctStacks: 2_000_000 } as const;

/** Counts what the decoded tables hold and refuses (ARTIFACT_TOO_LARGE) past pprofTableBounds. */
class TableBudget {
  private entries = 0;
  private stringBytes = 0;

  constructor(private readonly path: string) {}

  entry(bytes = 0): void {
    this.entries++;
    this.stringBytes += bytes;
    if (this.entries > pprofTableBounds.entries)
      throw this.refuse(`its tables hold more than ${pprofTableBounds.entries} entries`, "entries");
    if (this.stringBytes > pprofTableBounds.stringBytes)
      throw this.refuse(`its string table holds more than ${pprofTableBounds.stringBytes} bytes`, "stringBytes");
  }

  stacks(count: number): void {
    if (count > pprofTableBounds.distinctStacks)
      throw this.refuse(`it has more than ${pprofTableBounds.distinctStacks} distinct stacks`, "distinctStacks");
  }

  private refuse(what: string, bound: keyof typeof pprofTableBounds) {
    return artifactTooLarge(this.path, `${what} (a bound on the memory decoding may use)`, { bound, limit: pprofTableBounds[bound] });
  }
}

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

function readLabel(bytes: Uint8Array): Label {
  const reader = new ProtoReader(bytes);
  const label: Label = { key: 0, str: 0, num: 0 };
  while (!reader.done) {
    const [field, wire] = reader.tag();
    if (field === 1 && wire === 0) label.key = reader.varint();
    else if (field === 2 && wire === 0) label.str = reader.varint();
    else if (field === 3 && wire === 0) label.num = reader.signedVarint();
    else reader.skip(wire);
  }
  return label;
}

/** Folds one Sample message into the profile. */
function foldSample(profile: PprofProfile, bytes: Uint8Array): void {
  const reader = new ProtoReader(bytes);
  const locations: number[] = [];
  const values: number[] = [];
  const labels: Label[] = [];
  while (!reader.done) {
    const [field, wire] = reader.tag();
    if (field === 1) reader.repeatedVarints(wire, locations);
    else if (field === 2) reader.repeatedVarints(wire, values);
    else if (field === 3 && wire === 2) labels.push(readLabel(reader.bytesField()));
    else reader.skip(wire);
  }
  let key = locations.join(",");
  for (const label of labels) key += `|${label.key}:${label.str}:${label.num}`;
  let entry = profile.folded.get(key);
  if (!entry) {
    entry = { locations, labels, sums: [], invalid: [], samples: 0 };
    profile.folded.set(key, entry);
  }
  entry.samples++;
  for (let index = 0; index < values.length; index++) {
    // int64 values: read unsigned, anything past 2^63 (2^64-1 included) is negative, and past 2^53 no longer exact.
    const value = values[index] as number;
    if (value > Number.MAX_SAFE_INTEGER) entry.invalid[index] = (entry.invalid[index] ?? 0) + 1;
    else entry.sums[index] = (entry.sums[index] ?? 0) + value;
  }
}

function readLocation(bytes: Uint8Array): Location {
  const inner = new ProtoReader(bytes);
  const location: Location = { id: 0, mappingId: 0, address: 0, lines: [] };
  while (!inner.done) {
    const [field, wire] = inner.tag();
    if (field === 1 && wire === 0) location.id = inner.varint();
    else if (field === 2 && wire === 0) location.mappingId = inner.varint();
    else if (field === 3 && wire === 0) location.address = inner.varint();
    else if (field === 4 && wire === 2) {
      const lineReader = new ProtoReader(inner.bytesField());
      const line: Line = { functionId: 0, line: 0 };
      while (!lineReader.done) {
        const [lineField, lineWire] = lineReader.tag();
        if (lineField === 1 && lineWire === 0) line.functionId = lineReader.varint();
        else if (lineField === 2 && lineWire === 0) line.line = lineReader.signedVarint();
        else lineReader.skip(lineWire);
      }
      location.lines.push(line);
    } else inner.skip(wire);
  }
  return location;
}

function readFunction(bytes: Uint8Array): ProfileFunction {
  const inner = new ProtoReader(bytes);
  const fn: ProfileFunction = { id: 0, name: 0, systemName: 0, filename: 0 };
  while (!inner.done) {
    const [field, wire] = inner.tag();
    if (field === 1 && wire === 0) fn.id = inner.varint();
    else if (field === 2 && wire === 0) fn.name = inner.varint();
    else if (field === 3 && wire === 0) fn.systemName = inner.varint();
    else if (field === 4 && wire === 0) fn.filename = inner.varint();
    else inner.skip(wire);
  }
  return fn;
}

function readMapping(bytes: Uint8Array): Mapping {
  const inner = new ProtoReader(bytes);
  const mapping: Mapping = { id: 0, filename: 0 };
  while (!inner.done) {
    const [field, wire] = inner.tag();
    if (field === 1 && wire === 0) mapping.id = inner.varint();
    else if (field === 5 && wire === 0) mapping.filename = inner.varint();
    else inner.skip(wire);
  }
  return mapping;
}

/** Decodes a profile.proto message from a file, field by field. */
async function decodePprof(path: string): Promise<PprofProfile> {
  const profile: PprofProfile = {
    sampleTypes: [],
    folded: new Map(),
    locations: new Map(),
    functions: new Map(),
    mappings: new Map(),
    strings: [],
    defaultSampleType: 0,
  };
  const decoder = new TextDecoder();
  const limit = Math.max(minimumInflatedBytes, Bun.file(path).size * maxInflationRatio);
  const source = await openByteSource(path, { maxInflatedBytes: limit });
  const stream = new ProtoStream(source, maxFieldBytes);
  const budget = new TableBudget(path);
  try {
    for (;;) {
      const field = stream.poll();
      if (field === undefined) {
        await stream.refill();
        continue;
      }
      if (field === null) break;
      const bytes = field.bytes;
      if (bytes) {
        if (field.field >= 1 && field.field <= 6 && field.field !== 2) budget.entry(field.field === 6 ? bytes.byteLength : 0);
        if (field.field === 1) profile.sampleTypes.push(readValueType(bytes));
        else if (field.field === 2) {
          foldSample(profile, bytes);
          budget.stacks(profile.folded.size);
        } else if (field.field === 3) {
          const mapping = readMapping(bytes);
          profile.mappings.set(mapping.id, mapping);
        } else if (field.field === 4) {
          const location = readLocation(bytes);
          profile.locations.set(location.id, location);
        } else if (field.field === 5) {
          const fn = readFunction(bytes);
          profile.functions.set(fn.id, fn);
        } else if (field.field === 6) profile.strings.push(decoder.decode(bytes));
      } else if (field.field === 14 && field.wire === 0) profile.defaultSampleType = field.value;
    }
  } catch (error) {
    if (error instanceof ProtoError) throw fileParseFailed(path, `malformed profile.proto: ${error.message}`);
    if (error instanceof ProtoFieldTooLarge) throw artifactTooLarge(path, `malformed profile.proto: ${error.message}`);
    throw inflateFailed(path, error);
  } finally {
    await source.close();
  }
  return profile;
}

const threadLabelKeys = new Set(["thread", "thread_name", "threadname", "thread name", "goroutine"]);
const processLabelKeys = new Set(["process", "process_name", "pid"]);

type Chosen = { index: number; countIndex: number; unit: StackUnit; scale: number; limitations: string[] };

function chooseSampleType(path: string, profile: PprofProfile, requested: string | undefined): Chosen {
  const text = (index: number): string => profile.strings[index] ?? "";
  const typeNames = profile.sampleTypes.map((type) => text(type.type));
  let chosen: number;
  if (requested !== undefined) {
    chosen = typeNames.indexOf(requested);
    if (chosen === -1) throw fileParseFailed(path, `sample type "${requested}" is not in the profile (has: ${typeNames.join(", ")})`);
  } else if (profile.defaultSampleType !== 0 && typeNames.includes(text(profile.defaultSampleType))) {
    chosen = typeNames.indexOf(text(profile.defaultSampleType));
  } else if (typeNames.includes("cpu")) {
    chosen = typeNames.indexOf("cpu");
  } else {
    chosen = typeNames.length - 1;
  }
  const unitName = text((profile.sampleTypes[chosen] as ValueType).unit);
  const limitations: string[] = [];
  const mapped = stackUnitOf(unitName);
  if (!mapped) limitations.push(`sample type ${typeNames[chosen]} has unit "${unitName}"; weights kept as samples.`);
  // A count-valued sample type besides the chosen one gives sample_count: the one of the same family
  // first (inuse_space counts inuse_objects, alloc_space alloc_objects), else the first.
  const isCount = (type: ValueType, index: number) => index !== chosen && (text(type.unit) === "count" || text(type.type) === "samples");
  const family = /^([a-z]+)_/.exec(typeNames[chosen] ?? "")?.[1];
  const sameFamily = family
    ? profile.sampleTypes.findIndex((type, index) => isCount(type, index) && text(type.type).startsWith(`${family}_`))
    : -1;
  const countIndex = sameFamily >= 0 ? sameFamily : profile.sampleTypes.findIndex(isCount);
  if (profile.sampleTypes.length > 1) {
    limitations.push(
      `weighted by sample type "${typeNames[chosen]}" (${unitName}); the profile also has ${typeNames.filter((_, index) => index !== chosen).join(", ")}.`,
    );
  }
  return { index: chosen, countIndex, unit: mapped?.unit ?? "samples", scale: mapped?.scale ?? 1, limitations };
}

export async function extractPprof(path: string, sink: EvidenceSink, options: PprofOptions): Promise<ExtractResult> {
  boundStaging(sink, path);
  const profile = await decodePprof(path);
  const text = (index: number): string => profile.strings[index] ?? "";
  if (profile.sampleTypes.length === 0 || profile.strings[0] !== "") {
    throw fileParseFailed(path, "no sample types or string table: this is not a pprof profile");
  }
  const chosen = chooseSampleType(path, profile, options.sampleType);
  const limitations = chosen.limitations;
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
      const language = options.language ?? "native";
      result.push(frames.intern({ function: `0x${location.address.toString(16)}`, file: null, line: null, module, language }));
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

  let invalid = 0;
  for (const entry of profile.folded.values()) {
    invalid += entry.invalid[chosen.index] ?? 0;
    const leafFirst: number[] = [];
    for (const locationId of entry.locations) leafFirst.push(...framesOfLocation(locationId));
    const node = aggregator.path(leafFirst.reverse());
    let thread: string | null = null;
    let process: string | null = null;
    for (const label of entry.labels) {
      const key = text(label.key).toLowerCase();
      const value = label.str !== 0 ? text(label.str) : String(label.num);
      if (threadLabelKeys.has(key)) thread = value;
      else if (processLabelKeys.has(key)) process = value;
    }
    const group = aggregator.group(`${process ?? ""}\u0000${thread ?? ""}`, { thread, process, unit: chosen.unit, scale: chosen.scale });
    const weight = entry.sums[chosen.index] ?? 0;
    const count = chosen.countIndex >= 0 ? (entry.sums[chosen.countIndex] ?? entry.samples) : entry.samples;
    aggregator.add(group, node, weight, count);
  }

  const emitter = new RowEmitter(sink, options.maxRows);
  aggregator.emit(emitter, (frameId) => frames.rows[frameId] as (typeof frames.rows)[number]);
  if (invalid > 0)
    limitations.push(`${invalid} samples had a negative value or one beyond 2^53 for the chosen sample type and were left out.`);
  if (missingLocations > 0) limitations.push(`${missingLocations} location ids had no location entry.`);
  limitations.push(...aggregator.limitations(), ...emitter.limitations());
  return { rows: emitter.counts, limitations };
}
