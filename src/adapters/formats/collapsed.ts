/**
 * Brendan Gregg's collapsed ("folded") stacks: one `root;caller;leaf <weight>` per line. Frames may
 * carry ` (file:line)` (py-spy, many exporters) or ` [module]` decorations. Read line by line.
 */
import { projectRelativePath, type EvidenceSink, type StackUnit } from "../../domain/evidence.ts";
import {
  FrameTable,
  RowEmitter,
  fileParseFailed,
  boundStaging,
  languageForFile,
  type ExtractOptions,
  type ExtractResult,
} from "./common.ts";
import { readArtifactLines } from "./artifact-lines.ts";
import { StackAggregator } from "./stack-aggregator.ts";
import { type LabelledGroup, disambiguateThreadLabels } from "./thread-labels.ts";

export type CollapsedOptions = ExtractOptions & {
  /** Unit of the trailing weights; samples unless the producer wrote time or bytes. */
  unit?: StackUnit;
};

export type ParsedCollapsedFrame = { function: string; file: string | null; line: number | null; module: string | null };

const fileLinePattern = /^(.*) \(([^()]*):(\d+)\)$/;
const fileOnlyPattern = /^(.*) \(([^()\s]+\.[A-Za-z0-9]+)\)$/;
/** ` [module]` at the end; an empty ` []` says the name before it is literal (flameox's export writes it after a name that would read as decorated). */
const modulePattern = /^(.+) \[([^[\]]*)\]$/;

/** Splits one folded frame into function and its decorations: ` (file:line)`, then ` [module]` after it. */
export function parseCollapsedFrame(text: string, options: { allowFileOnly?: boolean } = {}): ParsedCollapsedFrame {
  const withModule = modulePattern.exec(text);
  const rest = withModule ? (withModule[1] as string) : text;
  // An empty ` []` marks the name before it as literal: no module, no place.
  if (withModule && withModule[2] === "") return { function: rest, file: null, line: null, module: null };
  const module = withModule?.[2] ? withModule[2] : null;
  const withLine = fileLinePattern.exec(rest);
  if (withLine) return { function: withLine[1] as string, file: withLine[2] as string, line: Number(withLine[3]), module };
  if (options.allowFileOnly) {
    const fileOnly = fileOnlyPattern.exec(rest);
    if (fileOnly) return { function: fileOnly[1] as string, file: fileOnly[2] as string, line: null, module };
  }
  return { function: rest, file: null, line: null, module };
}

/** Whether a bare name would be read back with a decoration it does not have. */
export function readsAsDecorated(name: string): boolean {
  return modulePattern.test(name) || fileLinePattern.test(name) || fileOnlyPattern.test(name);
}

export type CollapsedDialect = {
  /** Default language of frames when neither the options nor the file extension say. */
  language: string | null;
  allowFileOnly: boolean;
  /** Strips leading context frames (process/thread) off a line; returns the rest. */
  splitContext?: (stack: string) => { thread: string | null; process: string | null; tid: string | null; stack: string };
};

function noContext(stack: string): { thread: null; process: null; tid: null; stack: string } {
  return { thread: null, process: null, tid: null, stack };
}

/** Shared by collapsed and py-spy raw. */
export async function extractFolded(
  path: string,
  sink: EvidenceSink,
  options: CollapsedOptions,
  dialect: CollapsedDialect,
): Promise<ExtractResult> {
  boundStaging(sink, path);
  const frames = new FrameTable();
  const aggregator = new StackAggregator();
  const unit = options.unit ?? "samples";
  const labelled = new Map<string, LabelledGroup>();
  let emptyStacks = 0;
  let absurd = 0;
  // Lines that do not end with a weight are skipped (as flamegraph.pl does) while they are few.
  let badLines = 0;
  let firstBad: { line: number; byte_offset: number } | null = null;
  let lines = 0;
  for await (const { line, offset, number } of readArtifactLines(path)) {
    const text = line.trimEnd();
    if (text.trim() === "" || text.startsWith("#")) continue;
    const space = text.lastIndexOf(" ");
    const weightText = space === -1 ? "" : text.slice(space + 1);
    const weight = Number(weightText);
    if (space === -1 || weightText === "" || Number.isNaN(weight)) {
      badLines++;
      firstBad ??= { line: number, byte_offset: offset };
      continue;
    }
    lines++;
    if (!(weight >= 0 && weight <= Number.MAX_SAFE_INTEGER)) {
      absurd++;
      continue;
    }
    const { thread, process, tid, stack } = dialect.splitContext?.(text.slice(0, space)) ?? noContext(text.slice(0, space));
    // The group is known even for an idle sample: its thread name may be the only one given.
    const key = `${process ?? ""}\u0000${tid ?? ""}\u0000${thread ?? ""}`;
    let group = labelled.get(key);
    if (!group) {
      group = { thread, process, tid, fallback: "", group: aggregator.group(key, { thread, process, unit, scale: 1 }) };
      labelled.set(key, group);
    }
    if (stack.trim() === "") {
      emptyStacks++;
      continue;
    }
    let node = 0;
    for (const part of stack.split(";")) {
      const parsed = parseCollapsedFrame(part, { allowFileOnly: dialect.allowFileOnly });
      const frameId = frames.intern({
        function: parsed.function,
        file: projectRelativePath(parsed.file, options.projectRoot),
        line: parsed.line,
        module: parsed.module,
        language: options.language ?? dialect.language ?? languageForFile(parsed.file) ?? "unknown",
      });
      node = aggregator.child(node, frameId);
    }
    aggregator.add(group.group, node, weight, unit === "samples" ? weight : 1);
  }
  if (firstBad && badLines * 2 > lines) {
    throw fileParseFailed(path, `line ${firstBad.line} (byte ${firstBad.byte_offset}) does not end with a numeric weight`, firstBad);
  }
  if (lines === 0) throw fileParseFailed(path, "no folded stack lines (`frame;frame weight`) were found");
  if (absurd === lines)
    throw fileParseFailed(path, `every one of its ${lines} lines has a negative, infinite or absurd weight (past 2^53)`);
  disambiguateThreadLabels([...labelled.values()]);
  const emitter = new RowEmitter(sink, options.maxRows);
  aggregator.emit(emitter, (frameId) => frames.rows[frameId] as (typeof frames.rows)[number]);
  const limitations = [...aggregator.limitations(), ...emitter.limitations()];
  if (absurd > 0) limitations.unshift(`${absurd} lines had a negative, infinite or absurd weight (past 2^53) and were left out.`);
  if (emptyStacks > 0) limitations.unshift(`${emptyStacks} lines had an empty stack (idle samples) and carry no frames.`);
  if (firstBad) {
    limitations.unshift(
      `${badLines} lines did not end with a numeric weight and were left out (the first: line ${firstBad.line}, byte ${firstBad.byte_offset}).`,
    );
  }
  return { rows: emitter.counts, limitations };
}

export async function extractCollapsed(path: string, sink: EvidenceSink, options: CollapsedOptions): Promise<ExtractResult> {
  return extractFolded(path, sink, options, { language: null, allowFileOnly: false });
}
