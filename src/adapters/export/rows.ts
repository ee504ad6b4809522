/**
 * What every exporter needs from evidence rows: a frame lookup, stacks merged per
 * (process, thread, unit) so output scales with distinct stacks, and streaming file output that
 * appears under its final name only when complete.
 */
import { createWriteStream } from "node:fs";
import { rename, rm, stat } from "node:fs/promises";
import type { Transform } from "node:stream";
import type { FrameRow, StackRow, StackUnit } from "../../domain/evidence.ts";
import { invalidArguments } from "../../domain/errors.ts";

export type ExportFrames = ReadonlyMap<string, FrameRow> | Iterable<FrameRow>;
export type ExportStacks = Iterable<StackRow> | AsyncIterable<StackRow>;

export type MergedStack = { frame_keys: string[]; weight: number; sample_count: number };

export type StackGroup = { process: string | null; thread: string | null; unit: StackUnit; stacks: MergedStack[]; total: number };

export type ExportSummary = { path: string; bytes: number; format: string };

export function frameMap(frames: ExportFrames): ReadonlyMap<string, FrameRow> {
  if (frames instanceof Map) return frames;
  const map = new Map<string, FrameRow>();
  for (const frame of frames as Iterable<FrameRow>) if (!map.has(frame.frame_key)) map.set(frame.frame_key, frame);
  return map;
}

/** A frame that the frames table lacks still gets a name: its key. */
export function frameOf(frames: ReadonlyMap<string, FrameRow>, key: string): FrameRow {
  return frames.get(key) ?? { frame_key: key, function: key, file: null, line: null, module: null, language: "unknown" };
}

class GroupBuilder {
  private readonly groups = new Map<string, { group: StackGroup; byPath: Map<string, MergedStack> }>();
  constructor(private readonly mergeThreads: boolean) {}

  add(row: StackRow): void {
    if (!(row.weight > 0) || row.frame_keys.length === 0) return;
    const process = this.mergeThreads ? null : row.process;
    const thread = this.mergeThreads ? null : row.thread;
    const key = `${process ?? ""}\u0000${thread ?? ""}\u0000${row.unit}`;
    let entry = this.groups.get(key);
    if (!entry) {
      entry = { group: { process, thread, unit: row.unit, stacks: [], total: 0 }, byPath: new Map() };
      this.groups.set(key, entry);
    }
    const path = row.frame_keys.join("\u0001");
    const existing = entry.byPath.get(path);
    if (existing) {
      existing.weight += row.weight;
      existing.sample_count += row.sample_count;
    } else {
      const merged = { frame_keys: row.frame_keys, weight: row.weight, sample_count: row.sample_count };
      entry.byPath.set(path, merged);
      entry.group.stacks.push(merged);
    }
    entry.group.total += row.weight;
  }

  result(): StackGroup[] {
    return [...this.groups.values()].map((entry) => entry.group);
  }
}

/** Merges identical stacks per (process, thread, unit), or per unit alone with `mergeThreads`. */
export function groupStacks(stacks: Iterable<StackRow>, options: { mergeThreads?: boolean } = {}): StackGroup[] {
  const builder = new GroupBuilder(options.mergeThreads ?? false);
  for (const row of stacks) builder.add(row);
  return builder.result();
}

export async function groupStacksAsync(stacks: ExportStacks, options: { mergeThreads?: boolean } = {}): Promise<StackGroup[]> {
  const builder = new GroupBuilder(options.mergeThreads ?? false);
  for await (const row of stacks) builder.add(row);
  return builder.result();
}

/** Formats with one unit per file: keep the chosen unit, or refuse a mix. */
export function singleUnit(groups: StackGroup[], unit: StackUnit | undefined, format: string): { unit: StackUnit; groups: StackGroup[] } {
  if (unit !== undefined) return { unit, groups: groups.filter((group) => group.unit === unit) };
  const units = [...new Set(groups.map((group) => group.unit))];
  if (units.length > 1) {
    throw invalidArguments(
      `${format} export`,
      [{ field: "unit", message: `the stacks mix ${units.join(" and ")}; a ${format} file holds one unit`, type: "mixed_units" }],
      [`Pass the unit to export (${units.join(", ")}).`],
    );
  }
  return { unit: units[0] ?? "samples", groups };
}

/** Joins small pieces into chunks of about `size` characters, so streams see few large writes. */
export function* batchText(pieces: Iterable<string>, size = 1 << 16): Generator<string> {
  let buffer: string[] = [];
  let length = 0;
  for (const piece of pieces) {
    buffer.push(piece);
    length += piece.length;
    if (length >= size) {
      yield buffer.join("");
      buffer = [];
      length = 0;
    }
  }
  if (length > 0) yield buffer.join("");
}

/**
 * Streams chunks to `path` through optional transforms (gzip). Written beside the target and
 * renamed at the end, so a reader never sees half a file.
 */
export async function writeChunks(
  path: string,
  chunks: Iterable<string | Uint8Array> | AsyncIterable<string | Uint8Array>,
  format: string,
  transforms: Transform[] = [],
): Promise<ExportSummary> {
  const partial = `${path}.partial-${process.pid}`;
  try {
    // node:stream loads only when an export is written: at start it would cost every flameox process several ms.
    const [{ Readable }, { pipeline }] = await Promise.all([import("node:stream"), import("node:stream/promises")]);
    await pipeline([Readable.from(chunks), ...transforms, createWriteStream(partial)]);
    await rename(partial, path);
  } catch (error) {
    await rm(partial, { force: true });
    throw error;
  }
  return { path, bytes: (await stat(path)).size, format };
}
