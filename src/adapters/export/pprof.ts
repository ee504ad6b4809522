/**
 * pprof (gzip-compressed profile.proto), as `go tool pprof` and Perfetto read it. One Location per
 * frame, one Function per (name, file); sample location ids leaf first; thread and process as
 * string labels. Messages are streamed: samples first, then the tables, since protobuf field order
 * is free and string_table is appended in index order at the end.
 */
import type { FrameRow, StackRow, StackUnit } from "../../domain/evidence.ts";
import { ProtoWriter } from "./protobuf-writer.ts";
import {
  type ExportFrames,
  type ExportStacks,
  type ExportSummary,
  type StackGroup,
  frameMap,
  frameOf,
  groupStacks,
  groupStacksAsync,
  singleUnit,
  writeChunks,
} from "./rows.ts";

export type PprofExportOptions = { unit?: StackUnit /** Sampling period in the weight unit, when known. */; period?: number };

type SampleTypes = { types: Array<[string, string]>; weightIndex: number };

/** Memory in use: live allocations and their bytes. */
const inUse: SampleTypes = {
  types: [
    ["inuse_objects", "count"],
    ["inuse_space", "bytes"],
  ],
  weightIndex: 1,
};

const sampleTypesByUnit: Record<StackUnit, SampleTypes> = {
  ns: {
    types: [
      ["samples", "count"],
      ["cpu", "nanoseconds"],
    ],
    weightIndex: 1,
  },
  samples: { types: [["samples", "count"]], weightIndex: 0 },
  // flameox's byte-weighted stacks are memory in use at one moment (memray's high-water mark, a heap
  // profile's inuse_space), and their sample_count is the number of live allocations.
  bytes: inUse,
  // Still allocated when the program ended: what pprof calls in use.
  retained_bytes: inUse,
};

/** profile.proto's string table: index 0 is "", every other text once, in the order first used. */
class StringTable {
  readonly strings: string[] = [""];
  private readonly indexOf = new Map<string, number>([["", 0]]);

  intern(text: string): number {
    let index = this.indexOf.get(text);
    if (index === undefined) {
      index = this.strings.length;
      this.strings.push(text);
      this.indexOf.set(text, index);
    }
    return index;
  }
}

/** One Location per frame key and one Function per (name, file), each written when first met. */
class LocationTable {
  readonly locations = new ProtoWriter();
  readonly functions = new ProtoWriter();
  private readonly locationByKey = new Map<string, number>();
  private readonly functionByIdentity = new Map<string, number>();

  constructor(
    private readonly frames: ReadonlyMap<string, FrameRow>,
    private readonly strings: StringTable,
  ) {}

  locationOf(key: string): number {
    let id = this.locationByKey.get(key);
    if (id !== undefined) return id;
    const frame = frameOf(this.frames, key);
    const identity = `${frame.function}\u0000${frame.file ?? ""}`;
    let functionId = this.functionByIdentity.get(identity);
    if (functionId === undefined) {
      functionId = this.functionByIdentity.size + 1;
      this.functionByIdentity.set(identity, functionId);
      const name = this.strings.intern(frame.function);
      this.functions.message(
        5,
        new ProtoWriter()
          .uint(1, functionId)
          .uint(2, name)
          .uint(3, name)
          .uint(4, this.strings.intern(frame.file ?? "")),
      );
    }
    id = this.locationByKey.size + 1;
    this.locationByKey.set(key, id);
    this.locations.message(4, new ProtoWriter().uint(1, id).message(4, new ProtoWriter().uint(1, functionId).uint(2, frame.line ?? 0)));
    return id;
  }
}

/** The sample types, the period and the default sample type of a profile in `unit`. */
function writeSampleTypes(out: ProtoWriter, strings: StringTable, unit: StackUnit, options: PprofExportOptions): void {
  const layout = sampleTypesByUnit[unit];
  for (const [type, typeUnit] of layout.types) {
    out.message(1, new ProtoWriter().uint(1, strings.intern(type)).uint(2, strings.intern(typeUnit)));
  }
  const [weightType, weightUnit] = layout.types[layout.weightIndex] as [string, string];
  out.message(11, new ProtoWriter().uint(1, strings.intern(weightType)).uint(2, strings.intern(weightUnit)));
  if (options.period !== undefined && options.period > 0) out.uint(12, Math.round(options.period));
  out.uint(14, strings.intern(weightType));
}

function* messages(
  frames: ReadonlyMap<string, FrameRow>,
  unit: StackUnit,
  groups: StackGroup[],
  options: PprofExportOptions,
): Generator<Uint8Array> {
  const strings = new StringTable();
  const out = new ProtoWriter();
  writeSampleTypes(out, strings, unit, options);
  const threadKey = strings.intern("thread");
  const processKey = strings.intern("process");
  const table = new LocationTable(frames, strings);
  for (const group of groups) {
    const labels: ProtoWriter[] = [];
    if (group.thread !== null) labels.push(new ProtoWriter().uint(1, threadKey).uint(2, strings.intern(group.thread)));
    if (group.process !== null) labels.push(new ProtoWriter().uint(1, processKey).uint(2, strings.intern(group.process)));
    for (const stack of group.stacks) {
      const weight = Math.round(stack.weight);
      if (weight <= 0) continue;
      const locationIds: number[] = [];
      for (let position = stack.frame_keys.length - 1; position >= 0; position -= 1)
        locationIds.push(table.locationOf(stack.frame_keys[position] as string));
      const values = unit === "samples" ? [weight] : [Math.max(Math.round(stack.sample_count), 0), weight];
      const sample = new ProtoWriter().packed(1, locationIds).packed(2, values);
      for (const label of labels) sample.message(3, label);
      out.message(2, sample);
      if (out.length >= 1 << 16) yield out.take();
    }
  }
  yield out.take();
  yield table.locations.take();
  yield table.functions.take();
  const stringMessages = new ProtoWriter();
  for (const text of strings.strings) {
    stringMessages.string(6, text);
    if (stringMessages.length >= 1 << 16) yield stringMessages.take();
  }
  yield stringMessages.take();
}

function prepare(groups: StackGroup[], options: PprofExportOptions): { unit: StackUnit; groups: StackGroup[] } {
  return singleUnit(groups, options.unit, "pprof");
}

/** The gzip-compressed profile.proto bytes (small inputs). */
export function toPprof(frames: ExportFrames, stacks: Iterable<StackRow>, options: PprofExportOptions = {}): Uint8Array {
  const { unit, groups } = prepare(groupStacks(stacks), options);
  const parts = [...messages(frameMap(frames), unit, groups, options)];
  const whole = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
  let offset = 0;
  for (const part of parts) {
    whole.set(part, offset);
    offset += part.length;
  }
  return new Uint8Array(Bun.gzipSync(whole));
}

/** Streams the gzip-compressed profile to `path`. */
export async function writePprof(
  path: string,
  frames: ExportFrames,
  stacks: ExportStacks,
  options: PprofExportOptions = {},
): Promise<ExportSummary & { unit: StackUnit }> {
  const { unit, groups } = prepare(await groupStacksAsync(stacks), options);
  // node:zlib loads only when a profile is written: at start it would cost every flameox process several ms.
  const { createGzip } = await import("node:zlib");
  const summary = await writeChunks(path, messages(frameMap(frames), unit, groups, options), "pprof", [createGzip()]);
  return { ...summary, unit };
}
