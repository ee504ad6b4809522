/**
 * Firefox Profiler profiles: the Gecko profile Firefox writes (`meta`, `threads` with
 * `samples`/`stackTable`/`frameTable` rows and a `stringTable`, child processes under `processes`)
 * and the processed profile profiler.firefox.com saves and other tools write (Python's sampling
 * profiler, perf's gecko script): column tables with a `funcTable` and strings in the thread's
 * `stringArray` or in `shared.stringArray`. Every sample's stack (walked through `prefix`) is one
 * stack of the thread, weighted 1 or by the samples' `weight` column (`weightType` says samples,
 * `tracing-ms` or `bytes`).
 *
 * Threads are captured whole (each bounded by the JSON reader's value limit); the string array may
 * come after the threads, so threads fold once the whole file is read.
 */
import { projectRelativePath, type EvidenceSink } from "../../domain/evidence.ts";
import {
  FrameTable,
  RowEmitter,
  fileParseFailed,
  boundStaging,
  languageForFile,
  type ExtractOptions,
  type ExtractResult,
} from "./common.ts";
import { type GeckoFrame, geckoTable, indexOf, parseGeckoLocation, sampleWeightUnit } from "./gecko-tables.ts";
import { readJsonWithVisitor } from "./json-file.ts";
import type { JsonPathSegment } from "./json-stream.ts";
import { StackAggregator } from "./stack-aggregator.ts";
import { type LabelledGroup, disambiguateThreadLabels } from "./thread-labels.ts";

type CapturedThread = Record<string, unknown>;

/** Child processes nested deeper than this are not read. */
const maxProcessDepth = 32;

/** `threads`, `processes[i].threads`, … at any depth of child processes; the path of a thread's index. */
function threadDepth(path: readonly JsonPathSegment[]): number | null {
  let at = 0;
  while (path[at] === "processes" && typeof path[at + 1] === "number") at += 2;
  return path[at] === "threads" ? at + 1 : null;
}

export async function extractGeckoProfile(path: string, sink: EvidenceSink, options: ExtractOptions): Promise<ExtractResult> {
  boundStaging(sink, path);
  const threads: CapturedThread[] = [];
  let shared: string[] | null = null;
  let sawMeta = false;
  await readJsonWithVisitor(
    path,
    {
      select(path) {
        if (path.length === 0) return "enter";
        const at = unwrapped(path);
        if (at.length === 0) return "enter";
        if (at[0] === "meta") {
          sawMeta = true;
          return "skip";
        }
        if (at[0] === "shared") return at.length === 1 ? "enter" : at[1] === "stringArray" ? "capture" : "skip";
        const depth = threadDepth(at);
        if (depth === null) return at[0] === "processes" && isProcessPath(at) && at.length <= 2 * maxProcessDepth ? "enter" : "skip";
        if (at.length <= depth) return "enter";
        return at.length === depth + 1 && typeof at[depth] === "number" ? "capture" : "skip";
      },
      value(path, value) {
        const at = unwrapped(path);
        if (at[0] === "shared") {
          if (Array.isArray(value)) shared = value.map(String);
          return;
        }
        collectThreads(value, threads, 0);
      },
    },
    { mode: options.parseMode },
  );
  if (!sawMeta || threads.length === 0) throw fileParseFailed(path, "no `meta` and `threads`: this is not a Firefox Profiler profile");
  const frames = new FrameTable();
  const aggregator = new StackAggregator();
  const labelled: LabelledGroup[] = [];
  const limitations: string[] = [];
  for (const [index, thread] of threads.entries()) {
    const strings = stringsOf(thread, shared);
    const folded = foldThread(String(index), thread, strings, frames, aggregator, options);
    if (!folded) continue;
    labelled.push(folded.labelled);
    if (folded.missing > 0)
      limitations.push(`${folded.missing} samples of thread ${folded.labelled.thread} point at no stack and were left out.`);
  }
  disambiguateThreadLabels(labelled);
  const emitter = new RowEmitter(sink, options.maxRows);
  aggregator.emit(emitter, (frameId) => frames.rows[frameId] as (typeof frames.rows)[number]);
  if (emitter.counts.stacks === 0) limitations.push("The profile holds no samples with a stack.");
  return {
    rows: emitter.counts,
    producer: "firefox-profiler",
    limitations: [...limitations, ...aggregator.limitations(), ...emitter.limitations()],
  };
}

/** Serialized child-process profiles nest at most this deep. */
const maxSerializedDepth = 8;

/**
 * A thread as captured: an object, or (Gecko profiles before version 4) a child process's whole
 * profile serialized into a string, whose own threads are taken in turn.
 */
function collectThreads(value: unknown, threads: CapturedThread[], depth: number): void {
  if (value && typeof value === "object" && !Array.isArray(value)) {
    const thread = value as CapturedThread;
    // Markers are no stacks; they need not stay in memory while the rest is read.
    delete thread.markers;
    threads.push(thread);
    return;
  }
  if (typeof value !== "string" || depth >= maxSerializedDepth || !value.trimStart().startsWith("{")) return;
  let child: unknown;
  try {
    child = JSON.parse(value);
  } catch {
    return;
  }
  const nested = (child as { threads?: unknown }).threads;
  if (Array.isArray(nested)) for (const thread of nested) collectThreads(thread, threads, depth + 1);
}

/**
 * Firefox's devtools performance panel (Firefox 59–63) saved `{label, duration, …, profile: {…}}`
 * with a whole Gecko profile under `profile`: paths inside it are read as if at the top.
 */
function unwrapped(path: readonly JsonPathSegment[]): readonly JsonPathSegment[] {
  return path[0] === "profile" ? path.slice(1) : path;
}

/** `processes`, `processes/3`, `processes/3/processes`, …: the way down to a child process's threads. */
function isProcessPath(at: readonly JsonPathSegment[]): boolean {
  return at.every((segment, index) => (index % 2 === 0 ? segment === "processes" : typeof segment === "number"));
}

function stringsOf(thread: CapturedThread, shared: string[] | null): string[] {
  for (const key of ["stringArray", "stringTable"]) {
    const own = thread[key];
    if (Array.isArray(own)) return own.map(String);
  }
  return shared ?? [];
}

type FoldedThread = { labelled: LabelledGroup; missing: number };

function foldThread(
  key: string,
  thread: CapturedThread,
  strings: string[],
  frames: FrameTable,
  aggregator: StackAggregator,
  options: ExtractOptions,
): FoldedThread | null {
  const samples = thread.samples as Record<string, unknown> | undefined;
  if (!samples) return null;
  const sampleTable = geckoTable(samples);
  const stackTable = geckoTable(thread.stackTable);
  const frameTable = geckoTable(thread.frameTable);
  const funcTable = thread.funcTable ? geckoTable(thread.funcTable) : null;
  const resourceTable = geckoTable(thread.resourceTable);
  const text = (index: unknown): string | null => {
    const at = indexOf(index);
    return at === null ? null : (strings[at] ?? null);
  };
  const { unit, scale } = sampleWeightUnit(samples.weightType);
  const name = String(thread.name ?? thread.tid ?? "thread");
  const pid = thread.pid === undefined || thread.pid === null ? null : String(thread.pid);
  const tid = thread.tid === undefined || thread.tid === null ? null : String(thread.tid);
  const group = aggregator.group(key, {
    thread: name,
    process: pid,
    unit,
    scale,
  });
  const frameOf = new Map<number, number>();
  const frameId = (frameIndex: number): number => {
    const known = frameOf.get(frameIndex);
    if (known !== undefined) return known;
    const frame = funcTable
      ? processedFrame(frameTable, funcTable, resourceTable, frameIndex, text)
      : rawFrame(frameTable, frameIndex, text);
    const id = frames.intern({
      ...frame,
      file: projectRelativePath(frame.file, options.projectRoot),
      language: options.language ?? languageForFile(frame.file) ?? "unknown",
    });
    frameOf.set(frameIndex, id);
    return id;
  };
  const nodeOf = new Map<number, number>();
  const nodeFor = (stack: number): number => {
    const chain: number[] = [];
    let at: number | null = stack;
    while (at !== null && !nodeOf.has(at) && chain.length <= stackTable.length) {
      chain.push(at);
      at = indexOf(stackTable.get(at, "prefix"));
    }
    // A prefix chain longer than the table loops: what was walked hangs off the root.
    let node = at === null ? 0 : (nodeOf.get(at) ?? 0);
    for (let index = chain.length - 1; index >= 0; index--) {
      const stackIndex = chain[index] as number;
      const frameIndex = indexOf(stackTable.get(stackIndex, "frame"));
      if (frameIndex !== null) node = aggregator.child(node, frameId(frameIndex));
      nodeOf.set(stackIndex, node);
    }
    return node;
  };
  let missing = 0;
  for (let row = 0; row < sampleTable.length; row++) {
    const stack = indexOf(sampleTable.get(row, "stack"));
    if (stack === null || stack >= stackTable.length) {
      missing++;
      continue;
    }
    const raw = sampleTable.get(row, "weight");
    const weight = typeof raw === "number" && Number.isFinite(raw) && raw >= 0 ? raw : 1;
    aggregator.add(group, nodeFor(stack), weight, 1);
  }
  return { labelled: { thread: name, process: pid, tid, group, fallback: "" }, missing };
}

function rawFrame(frameTable: ReturnType<typeof geckoTable>, frameIndex: number, text: (index: unknown) => string | null): GeckoFrame {
  const parsed = parseGeckoLocation(text(frameTable.get(frameIndex, "location")) ?? `<frame ${frameIndex}>`);
  const line = frameTable.get(frameIndex, "line");
  return typeof line === "number" && parsed.line === null ? { ...parsed, line } : parsed;
}

function processedFrame(
  frameTable: ReturnType<typeof geckoTable>,
  funcTable: ReturnType<typeof geckoTable>,
  resourceTable: ReturnType<typeof geckoTable>,
  frameIndex: number,
  text: (index: unknown) => string | null,
): GeckoFrame {
  const func = indexOf(frameTable.get(frameIndex, "func"));
  if (func === null) return { function: `<frame ${frameIndex}>`, file: null, line: null, module: null };
  const file = text(funcTable.get(func, "fileName"));
  const frameLine = frameTable.get(frameIndex, "line");
  const funcLine = funcTable.get(func, "lineNumber");
  const line = typeof frameLine === "number" ? frameLine : typeof funcLine === "number" ? funcLine : null;
  const resource = indexOf(funcTable.get(func, "resource"));
  const module = file === null && resource !== null ? text(resourceTable.get(resource, "name")) : null;
  return { function: text(funcTable.get(func, "name")) ?? `<function ${func}>`, file, line, module };
}
