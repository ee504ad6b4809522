/**
 * Collapsed ("folded") stacks: `root;caller;leaf weight` per line, frames written as
 * `function (file:line)` the way py-spy does and `function [module]` the way perf's collapsers do, so
 * flamegraph.pl, inferno, speedscope and flameox's own importer read the place back. One unit per
 * file; integer weights.
 */
import type { FrameRow, StackRow, StackUnit } from "../../domain/evidence.ts";
import { readsAsDecorated } from "../formats/collapsed.ts";
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
  singleUnit,
  writeChunks,
} from "./rows.ts";

export type CollapsedExportOptions = { unit?: StackUnit };

/** Separators and line breaks inside names would split the stack or the line. */
function clean(text: string): string {
  return text.replace(/[;\r\n]/g, ":");
}

/**
 * One folded frame as flameox's importer reads it back: `name (file:line) [module]`, each
 * decoration only when the frame has it. A bare name that would itself read as decorated
 * (`name [x]`, `f (a.py:3)`) gets an empty ` []`, which reads back as "this name, literally".
 */
export function collapsedFrameText(frame: FrameRow): string {
  const name = clean(frame.function);
  const place = frame.file && frame.line !== null ? ` (${clean(frame.file)}:${frame.line})` : "";
  const module = frame.module ? ` [${clean(frame.module).replace(/\[/g, "(").replace(/\]/g, ")")}]` : "";
  const plain = place === "" && module === "";
  return `${name}${place}${module}${plain && readsAsDecorated(name) ? " []" : ""}`;
}

function* lines(frames: ReadonlyMap<string, FrameRow>, groups: StackGroup[]): Generator<string> {
  const textByKey = new Map<string, string>();
  const textOf = (key: string): string => {
    let text = textByKey.get(key);
    if (text === undefined) {
      text = collapsedFrameText(frameOf(frames, key));
      textByKey.set(key, text);
    }
    return text;
  };
  for (const group of groups) {
    for (const stack of group.stacks) {
      const weight = Math.round(stack.weight);
      if (weight <= 0) continue;
      yield `${stack.frame_keys.map(textOf).join(";")} ${weight}\n`;
    }
  }
}

/** The folded text (small inputs). */
export function toCollapsed(frames: ExportFrames, stacks: Iterable<StackRow>, options: CollapsedExportOptions = {}): string {
  const { groups } = singleUnit(groupStacks(stacks, { mergeThreads: true }), options.unit, "collapsed");
  return [...lines(frameMap(frames), groups)].join("");
}

/** Streams folded stacks to `path`; returns the unit the weights are in. */
export async function writeCollapsed(
  path: string,
  frames: ExportFrames,
  stacks: ExportStacks,
  options: CollapsedExportOptions = {},
): Promise<ExportSummary & { unit: StackUnit }> {
  const { unit, groups } = singleUnit(await groupStacksAsync(stacks, { mergeThreads: true }), options.unit, "collapsed");
  const summary = await writeChunks(path, batchText(lines(frameMap(frames), groups)), "collapsed");
  return { ...summary, unit };
}
