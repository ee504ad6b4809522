/**
 * speedscope's file format: `shared.frames` plus one sampled profile per (process, thread, unit),
 * each sample a root→leaf list of frame indices with a weight. The document is produced as a
 * stream of text pieces; profiles come first and the frame table last (JSON key order is free).
 */
import type { FrameRow, StackRow, StackUnit } from "../../domain/evidence.ts";
import {
  type ExportFrames,
  type ExportStacks,
  type ExportSummary,
  type StackGroup,
  batchText,
  frameMap,
  frameOf,
  groupStacks,
  groupStacksAsync,
  writeChunks,
} from "./rows.ts";

/** The format's identifier; speedscope recognizes its files by this value. */
export const speedscopeSchemaUrl = "https://www.speedscope.app/file-format-schema.json";

export type SpeedscopeUnit = "none" | "nanoseconds" | "microseconds" | "milliseconds" | "seconds" | "bytes";

export type SpeedscopeFrame = { name: string; file?: string; line?: number; col?: number };

export type SpeedscopeSampledProfile = {
  type: "sampled";
  name: string;
  unit: SpeedscopeUnit;
  startValue: number;
  endValue: number;
  samples: number[][];
  weights: number[];
};

export type SpeedscopeFile = {
  $schema: typeof speedscopeSchemaUrl;
  shared: { frames: SpeedscopeFrame[] };
  profiles: SpeedscopeSampledProfile[];
  name?: string;
  activeProfileIndex?: number;
  exporter?: string;
};

export type SpeedscopeOptions = { name?: string };

const unitNames: Record<StackUnit, SpeedscopeUnit> = { ns: "nanoseconds", samples: "none", bytes: "bytes", retained_bytes: "bytes" };

function profileName(group: StackGroup, groups: StackGroup[]): string {
  const base = group.thread ?? (group.process !== null ? `process ${group.process}` : "all threads");
  const sameName = groups.filter((other) => (other.thread ?? "") === (group.thread ?? "")).length > 1;
  const withProcess = sameName && group.process !== null && group.thread !== null ? `${base} (process ${group.process})` : base;
  const units = new Set(groups.map((other) => other.unit));
  return units.size > 1 ? `${withProcess} [${group.unit}]` : withProcess;
}

function speedscopeFrame(frame: FrameRow): SpeedscopeFrame {
  const result: SpeedscopeFrame = { name: frame.function };
  if (frame.file) result.file = frame.file;
  if (frame.line !== null) result.line = frame.line;
  return result;
}

function* pieces(frames: ReadonlyMap<string, FrameRow>, groups: StackGroup[], options: SpeedscopeOptions): Generator<string> {
  const indexByKey = new Map<string, number>();
  const order: string[] = [];
  const indexOf = (key: string): number => {
    let index = indexByKey.get(key);
    if (index === undefined) {
      index = order.length;
      indexByKey.set(key, index);
      order.push(key);
    }
    return index;
  };
  yield `{"$schema":${JSON.stringify(speedscopeSchemaUrl)},"exporter":"flameox","name":${JSON.stringify(options.name ?? "flameox export")},"activeProfileIndex":0,"profiles":[`;
  for (let groupIndex = 0; groupIndex < groups.length; groupIndex += 1) {
    const group = groups[groupIndex] as StackGroup;
    yield `${groupIndex > 0 ? "," : ""}{"type":"sampled","name":${JSON.stringify(profileName(group, groups))},"unit":"${unitNames[group.unit]}","startValue":0,"endValue":${group.total},"samples":[`;
    for (let stackIndex = 0; stackIndex < group.stacks.length; stackIndex += 1) {
      const stack = group.stacks[stackIndex] as { frame_keys: string[] };
      yield `${stackIndex > 0 ? "," : ""}[${stack.frame_keys.map(indexOf).join(",")}]`;
    }
    yield `],"weights":[`;
    for (let stackIndex = 0; stackIndex < group.stacks.length; stackIndex += 1) {
      yield `${stackIndex > 0 ? "," : ""}${(group.stacks[stackIndex] as { weight: number }).weight}`;
    }
    yield "]}";
  }
  yield `],"shared":{"frames":[`;
  for (let index = 0; index < order.length; index += 1) {
    yield `${index > 0 ? "," : ""}${JSON.stringify(speedscopeFrame(frameOf(frames, order[index] as string)))}`;
  }
  yield "]}}\n";
}

/** The whole speedscope document as an object (small inputs; use writeSpeedscope for large ones). */
export function toSpeedscope(frames: ExportFrames, stacks: Iterable<StackRow>, options: SpeedscopeOptions = {}): SpeedscopeFile {
  return JSON.parse([...pieces(frameMap(frames), groupStacks(stacks), options)].join("")) as SpeedscopeFile;
}

/** Streams the speedscope document to `path`. */
export async function writeSpeedscope(
  path: string,
  frames: ExportFrames,
  stacks: ExportStacks,
  options: SpeedscopeOptions = {},
): Promise<ExportSummary> {
  const groups = await groupStacksAsync(stacks);
  return writeChunks(path, batchText(pieces(frameMap(frames), groups, options)), "speedscope");
}
