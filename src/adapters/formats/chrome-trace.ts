/**
 * Chrome trace JSON (a bare array, or `{traceEvents: [...]}`): Chrome, Perfetto JSON, torch.profiler
 * (kineto), py-spy chrometrace; gzip-compressed or not. Events are read by the text scanner
 * (chrome-event-reader.ts; `parseMode: "whole"` parses the file with JSON.parse instead, with the
 * same records), put in timestamp order per thread whatever their order in the file
 * (chrome-event-order.ts), and nested per pid/tid (chrome-slice-nesting.ts).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { EvidenceSink } from "../../domain/evidence.ts";
import { openByteSource, readAllBytes } from "./byte-source.ts";
import {
  type NumberSources,
  TraceClock,
  TraceEventRecord,
  boundedArgsJson,
  maxArgsBytes,
  recordFromObject,
  parseWithSources,
  torchTopLevelKeys,
} from "./chrome-event-record.ts";
import { EventOrderer, RestartInRuns, setOrderKey } from "./chrome-event-order.ts";
import { ChromeTraceReader, FastScanError, UnsupportedShape } from "./chrome-event-reader.ts";
import { TraceCpuProfiles } from "./chrome-cpu-profile.ts";
import { SliceNester } from "./chrome-slice-nesting.ts";
import { RowEmitter, fileParseFailed, boundStaging, canMergeStacks, type ExtractOptions, type ExtractResult } from "./common.ts";
import { inflateFailed, maxInflatedJsonBytes, readJsonWithVisitor, scanJsonFile, walkParsedJson } from "./json-file.ts";
import type { JsonVisitor } from "./json-stream.ts";

export { boundedArgsJson, maxArgsBytes };

export type ChromeTraceOptions = ExtractOptions & {
  /** Events held back to restore timestamp order when a large, nearly ordered trace streams. */
  reorderWindow?: number;
  /** Bytes of events ordered in memory before runs are sorted on disk. */
  orderMemoryBytes?: number;
  /** Distinct stacks held before they are flushed to a sink that merges repeats. */
  maxHeldStacks?: number;
};

type Restartable = { restart(): Promise<void> | void };

function restartable(sink: EvidenceSink): sink is EvidenceSink & Restartable {
  return typeof (sink as Partial<Restartable>).restart === "function";
}

export async function extractChromeTrace(path: string, sink: EvidenceSink, options: ChromeTraceOptions): Promise<ExtractResult> {
  boundStaging(sink, path);
  try {
    return await extractOnce(path, sink, options, restartable(sink));
  } catch (error) {
    if (!(error instanceof RestartInRuns) || !restartable(sink)) throw error;
    // A large trace that began in order turned out not to be: order it in runs from the start.
    await sink.restart();
    return extractOnce(path, sink, options, false);
  }
}

type Counters = { nonObjects: number; withoutPhase: number; outOfRange: number; events: number; unterminated: boolean };
type Hints = { torch: boolean; topLevelObject: boolean; sawTraceEvents: boolean };

async function extractOnce(path: string, sink: EvidenceSink, options: ChromeTraceOptions, mayStream: boolean): Promise<ExtractResult> {
  const clock = new TraceClock();
  const pause = pauseFor(sink);
  const { emitter, nester, orderer, scratch, ownsScratch } = pipeline(sink, options, clock, mayStream, pause);
  const profiles = new TraceCpuProfiles();
  const counters: Counters = { nonObjects: 0, withoutPhase: 0, outOfRange: 0, events: 0, unterminated: false };
  const hints: Hints = { torch: false, topLevelObject: false, sawTraceEvents: false };

  let seq = 0;
  const acceptRecord = (record: TraceEventRecord): void => {
    counters.events++;
    record.seq = seq++;
    const ph = record.ph;
    if (ph === null) {
      counters.withoutPhase++;
      return;
    }
    if (clock.outOfRange > 0) {
      // Its ts or dur is no clock's (1e300 µs): there is no place on the timeline to put it.
      clock.outOfRange = 0;
      counters.outOfRange++;
      return;
    }
    setOrderKey(record);
    // Profile data is read before ordering: a record spilled to disk keeps only bounded args.
    if (ph === "P" || ph === "I" || ph === "i") profiles.accept(record);
    orderer.accept(record);
  };
  const acceptValue = (value: unknown, sources?: NumberSources): void => {
    if (!value || typeof value !== "object" || Array.isArray(value)) {
      counters.events++;
      counters.nonObjects++;
      return;
    }
    const record = new TraceEventRecord();
    recordFromObject(value as Record<string, unknown>, record, clock, sources);
    acceptRecord(record);
  };

  try {
    await readEvents(path, options, {
      pause,
      clock,
      counters,
      hints,
      acceptRecord,
      acceptValue,
      topLevelValue: (key, value) => profiles.topLevel(key, value),
    });
    if (hints.topLevelObject && !hints.sawTraceEvents) {
      throw fileParseFailed(path, "the JSON object has no `traceEvents` array: this is not a Chrome trace");
    }
    await orderer.finish();
    nester.finish(!profiles.hasSamples);
  } finally {
    orderer.cleanup();
    if (ownsScratch) rmSync(scratch, { recursive: true, force: true });
  }

  const limitations = readNotes(counters);
  if (profiles.hasSamples) {
    limitations.push(
      ...profiles.emit(emitter, nester.threadLabels, {
        projectRoot: options.projectRoot,
        language: options.language,
        slices: nester.slices,
      }),
    );
  }
  limitations.push(...nester.limitations(), ...emitter.limitations());
  const result: ExtractResult = { rows: emitter.counts, limitations };
  if (hints.torch || nester.hints.torch) result.producer = "torch.profiler";
  else if (nester.hints.pySpy > 0 && nester.hints.other === 0) result.producer = "py-spy";
  return result;
}

/**
 * What the extraction does after each 8 MiB it reads or merges: a full collection every 64 MiB
 * (otherwise the GC lets dead rows and text chunks pile up far past what is live, and RSS doubles on
 * a 1 GiB trace, as it does not see their storage), and a wait for a sink that streams its rows (the
 * evidence bundle writer) and asks the extractor to wait for it.
 */
function pauseFor(sink: EvidenceSink): () => Promise<void> {
  const drain = (sink as { drain?: () => Promise<void> }).drain;
  let pauses = 0;
  return async () => {
    if (++pauses % 8 === 0) Bun.gc(true);
    if (typeof drain === "function") await drain.call(sink);
  };
}

/** The stages events go through: ordering (with its scratch folder), nesting, the row budget. */
function pipeline(sink: EvidenceSink, options: ChromeTraceOptions, clock: TraceClock, mayStream: boolean, pause: () => Promise<void>) {
  const emitter = new RowEmitter(sink, options.maxRows);
  const nester = new SliceNester(emitter, {
    projectRoot: options.projectRoot,
    language: options.language,
    clock,
    maxHeldStacks: canMergeStacks(sink) ? (options.maxHeldStacks ?? 250_000) : 0,
  });
  const scratchOwner = (sink as { scratchDirectory?: () => string }).scratchDirectory;
  const ownsScratch = typeof scratchOwner !== "function";
  const scratch = ownsScratch ? mkdtempSync(join(tmpdir(), "flameox-trace-")) : scratchOwner.call(sink);
  const orderer = new EventOrderer(
    {
      memoryBytes: options.orderMemoryBytes ?? 8 << 20,
      window: Math.max(1, options.reorderWindow ?? 20_000),
      restartable: mayStream,
      scratch,
      pause,
    },
    (record) => nester.process(record),
  );
  return { emitter, nester, orderer, scratch, ownsScratch };
}

/** What reading the file skipped or accepted beyond the strict format. */
function readNotes(counters: Counters): string[] {
  const notes: string[] = [];
  if (counters.unterminated) {
    notes.push("The event array ends without its closing `]` (allowed by the Trace Event Format); every complete event was read.");
  }
  if (counters.nonObjects > 0) notes.push(`${counters.nonObjects} trace entries were not objects and were skipped.`);
  if (counters.withoutPhase > 0) notes.push(`${counters.withoutPhase} events had no "ph" and were skipped.`);
  if (counters.outOfRange > 0)
    notes.push(`${counters.outOfRange} events had a ts or dur beyond 4e15 µs (no clock's value) and were left out.`);
  return notes;
}

type ReadContext = {
  pause(): Promise<void>;
  clock: TraceClock;
  topLevelValue(key: string, value: unknown): void;
  counters: Counters;
  hints: Hints;
  acceptRecord(record: TraceEventRecord): void;
  acceptValue(value: unknown, sources?: NumberSources): void;
};

/** Feeds every event of the file to the context: the fast reader, else the generic readers. */
async function readEvents(path: string, options: ChromeTraceOptions, context: ReadContext): Promise<void> {
  const { hints } = context;
  if (options.parseMode === "whole") return readWhole(path, context);
  const source = await openByteSource(path, { maxInflatedBytes: maxInflatedJsonBytes });
  const reader = new ChromeTraceReader(
    source,
    {
      topLevelKey(key) {
        hints.topLevelObject = true;
        if (torchTopLevelKeys.has(key)) hints.torch = true;
        return TraceCpuProfiles.topLevelKeys.has(key);
      },
      topLevelValue: context.topLevelValue,
      sawTraceEvents() {
        hints.topLevelObject = true;
        hints.sawTraceEvents = true;
      },
      event: context.acceptRecord,
      other: (value) => context.acceptValue(value),
      chunk: context.pause,
      unterminated() {
        context.counters.unterminated = true;
      },
    },
    context.clock,
  );
  try {
    await reader.read();
  } catch (error) {
    if (error instanceof UnsupportedShape) {
      await readJsonWithVisitor(path, genericVisitor(context), { mode: options.parseMode });
      return;
    }
    if (error instanceof FastScanError) {
      // The generic scanner names the exact place; it throws ARTIFACT_PARSE_FAILED.
      await scanJsonFile(path, { select: selectTraceEvents(hints), value: () => {} });
      throw fileParseFailed(path, error.message);
    }
    throw inflateFailed(path, error);
  } finally {
    await source.close();
  }
}

function selectTraceEvents(hints: Hints): JsonVisitor["select"] {
  return (p) => {
    if (p.length === 0) return "enter";
    const first = p[0];
    if (p.length === 1) {
      if (typeof first === "number") return "capture";
      hints.topLevelObject = true;
      if (first === "traceEvents") {
        hints.sawTraceEvents = true;
        return "enter";
      }
      if (torchTopLevelKeys.has(first as string)) hints.torch = true;
      return TraceCpuProfiles.topLevelKeys.has(first as string) ? "capture" : "skip";
    }
    return p.length === 2 && first === "traceEvents" ? "capture" : "skip";
  };
}

function genericVisitor(context: ReadContext, sources?: WeakMap<object, NumberSources>): JsonVisitor {
  return {
    select: selectTraceEvents(context.hints),
    value(p, value) {
      if (p.length === 1 && typeof p[0] === "string") context.topLevelValue(p[0], value);
      else context.acceptValue(value, value && typeof value === "object" ? sources?.get(value) : undefined);
    },
  };
}

/** JSON.parse of the whole file, keeping each number's text for exact timestamps. */
async function readWhole(path: string, context: ReadContext): Promise<void> {
  let bytes: Uint8Array;
  try {
    bytes = await readAllBytes(path, { maxInflatedBytes: maxInflatedJsonBytes });
  } catch (error) {
    throw inflateFailed(path, error);
  }
  const text = new TextDecoder().decode(bytes);
  const sources = new WeakMap<object, NumberSources>();
  let parsed: unknown;
  try {
    parsed = parseWithSources(text, sources);
  } catch (error) {
    const unterminated = withClosingBracket(text);
    try {
      if (unterminated === null) throw error;
      parsed = parseWithSources(unterminated, sources);
      context.counters.unterminated = true;
    } catch {
      // The scanner says where the JSON breaks.
      await scanJsonFile(path, { select: selectTraceEvents(context.hints), value: () => {} });
      throw fileParseFailed(path, error instanceof Error ? error.message : String(error));
    }
  }
  walkParsedJson(parsed, genericVisitor(context, sources));
}

/** A bare event array that lacks its closing `]`, closed; null for anything else. */
function withClosingBracket(text: string): string | null {
  const trimmed = text.replace(/^\uFEFF/, "").trim();
  if (!trimmed.startsWith("[") || trimmed.endsWith("]")) return null;
  return `${trimmed.replace(/,\s*$/, "")}]`;
}
