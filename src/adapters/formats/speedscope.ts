/**
 * speedscope JSON (any producer): sampled and evented profiles, one profile per thread. Samples,
 * weights and events fold into a stack trie as they are read (speedscope-fold.ts), by the fast
 * text reader or, with `parseMode: "whole"`, from JSON.parse of the file (speedscope-reader.ts);
 * frames may come before or after the profiles (py-spy writes `shared` last).
 */
import { projectRelativePath, type EvidenceSink, type FrameRow } from "../../domain/evidence.ts";
import { openByteSource, readAllBytes } from "./byte-source.ts";
import {
  RowEmitter,
  fileParseFailed,
  boundStaging,
  frameRow,
  languageForFile,
  splitExporter,
  type ExtractOptions,
  type ExtractResult,
} from "./common.ts";
import { inflateFailed, maxInflatedJsonBytes, scanJsonFile } from "./json-file.ts";
import { FastScanError } from "./json-text-reader.ts";
import { splitPySpyContext } from "./py-spy-raw.ts";
import { SpeedscopeFold } from "./speedscope-fold.ts";
import { SpeedscopeReader, SpeedscopeShapeError, foldParsedSpeedscope } from "./speedscope-reader.ts";
import { StackAggregator } from "./stack-aggregator.ts";
import { type LabelledGroup, disambiguateThreadLabels } from "./thread-labels.ts";

/** py-spy names its speedscope profiles `Thread <tid> "<name>"` or `Process <pid> Thread <tid> "<name>"`. */
export function parseSpeedscopeProfileName(name: string | null): { thread: string | null; process: string | null } {
  const parsed = parseProfileName(name);
  return { thread: parsed.thread, process: parsed.process };
}

function parseProfileName(name: string | null): { thread: string | null; process: string | null; tid: string | null } {
  if (name === null) return { thread: null, process: null, tid: null };
  const match = /^(?:Process (\d+) )?Thread (\S+)(?: "(.*)")?$/.exec(name);
  if (!match) return { thread: name, process: null, tid: null };
  const threadName = match[3];
  return { thread: threadName ? threadName : (match[2] as string), process: match[1] ?? null, tid: match[2] as string };
}

async function readInto(path: string, fold: SpeedscopeFold, options: ExtractOptions): Promise<void> {
  try {
    if (options.parseMode === "whole") {
      let text: string;
      try {
        text = new TextDecoder().decode(await readAllBytes(path, { maxInflatedBytes: maxInflatedJsonBytes }));
      } catch (error) {
        throw inflateFailed(path, error);
      }
      let document: unknown;
      try {
        document = JSON.parse(text);
      } catch (error) {
        await scanJsonFile(path, { select: () => "enter", value: () => {} });
        throw fileParseFailed(path, error instanceof Error ? error.message : String(error));
      }
      foldParsedSpeedscope(document, fold);
      return;
    }
    const source = await openByteSource(path, { maxInflatedBytes: maxInflatedJsonBytes });
    try {
      await new SpeedscopeReader(source, fold).read();
    } catch (error) {
      if (!(error instanceof FastScanError)) throw inflateFailed(path, error);
      // The generic scanner names the exact place; it throws ARTIFACT_PARSE_FAILED.
      await scanJsonFile(path, { select: () => "enter", value: () => {} });
      throw fileParseFailed(path, error.message);
    } finally {
      await source.close();
    }
  } catch (error) {
    if (error instanceof SpeedscopeShapeError) throw fileParseFailed(path, error.message);
    throw error;
  }
}

export async function extractSpeedscope(path: string, sink: EvidenceSink, options: ExtractOptions): Promise<ExtractResult> {
  boundStaging(sink, path);
  const fold = new SpeedscopeFold();
  await readInto(path, fold, options);
  if (!fold.meta.sawProfiles) throw fileParseFailed(path, "no `profiles` array: this is not a speedscope file");

  const exporter = fold.meta.exporter ? splitExporter(fold.meta.exporter) : null;
  const producer = exporter?.producer;
  const producerLanguage = producer === "py-spy" ? "python" : null;
  const limitations: string[] = [];
  const { groups, emptySamples } = fold.finish(limitations);
  if (emptySamples > 0) limitations.push(`${emptySamples} samples had an empty stack (idle) and carry no frames.`);

  const frames = fold.frames;
  let unknownFrames = 0;
  const rows = new Map<number, FrameRow>();
  const resolveFrame = (frameId: number): FrameRow => {
    const cached = rows.get(frameId);
    if (cached) return cached;
    const frame = frames[frameId];
    if (!frame) unknownFrames++;
    const row = frameRow({
      function: frame?.name ?? `<unknown frame ${frameId}>`,
      file: projectRelativePath(frame?.file ?? null, options.projectRoot),
      line: frame?.line && frame.line > 0 ? frame.line : null,
      module: null,
      language: options.language ?? producerLanguage ?? languageForFile(frame?.file) ?? "unknown",
    });
    rows.set(frameId, row);
    return row;
  };
  // py-spy --threads/--subprocesses put `process …`/`thread (…)` pseudo-frames at the root of each
  // sample; they name the thread and process instead of being frames.
  const aggregator = fold.aggregator;
  const final = new StackAggregator();
  const finalGroups = new Map<string, LabelledGroup>();
  for (const { state, group } of groups) {
    const named = parseProfileName(state.name ?? (groups.length > 1 ? `profile ${state.index}` : null));
    for (const [node, totals] of group.totals) {
      let ids = aggregator.frameIdsOf(node);
      let thread = named.thread;
      let process = named.process;
      let tid = named.tid;
      if (producer === "py-spy") {
        const context = splitPySpyContext(ids.map((id) => frames[id]?.name ?? "").join(";"));
        const stripped = context.frames;
        if (stripped > 0 && ids.slice(0, stripped).every((id) => !frames[id]?.file)) {
          ids = ids.slice(stripped);
          thread = context.thread ?? thread;
          process = context.process ?? process;
          tid = context.tid ?? tid;
        }
      }
      const key = `${state.index}\u0000${process ?? ""}\u0000${thread ?? ""}`;
      let target = finalGroups.get(key);
      if (!target) {
        target = {
          thread,
          process,
          tid,
          fallback: `profile ${state.index}`,
          group: final.group(key, { thread, process, unit: group.unit, scale: group.scale }),
        };
        finalGroups.set(key, target);
      }
      final.add(target.group, final.path(ids), totals.weight, totals.count);
    }
  }
  disambiguateThreadLabels([...finalGroups.values()]);
  const emitter = new RowEmitter(sink, options.maxRows);
  final.emit(emitter, resolveFrame);
  if (unknownFrames > 0) limitations.push(`${unknownFrames} frame indexes had no entry in shared.frames.`);

  const result: ExtractResult = { rows: emitter.counts, limitations: [...limitations, ...final.limitations(), ...emitter.limitations()] };
  if (producer) result.producer = producer;
  if (exporter?.version) result.producer_version = exporter.version;
  return result;
}
