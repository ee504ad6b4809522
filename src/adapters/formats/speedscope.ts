/**
 * speedscope JSON (any producer): sampled and evented profiles, one profile per thread. Samples,
 * weights and events are streamed and folded into a stack trie, so only per-sample node ids
 * (4 bytes) and weights (8 bytes) are kept while the file is read; frames may come before or after
 * the profiles (py-spy writes `shared` last).
 */
import { projectRelativePath, type EvidenceSink, type FrameRow } from "../../domain/evidence.ts";
import {
  GrowableFloat64,
  GrowableInt32,
  RowEmitter,
  artifactParseFailed,
  boundStaging,
  frameRow,
  languageForFile,
  splitExporter,
  stackUnitOf,
  type ExtractOptions,
  type ExtractResult,
} from "./common.ts";
import { StackAggregator, type StackGroup } from "./stack-aggregator.ts";
import { splitPySpyContext } from "./py-spy-raw.ts";
import { readJsonWithVisitor } from "./json-file.ts";
import { formatJsonPath, type JsonPathSegment, type JsonVisitor } from "./json-stream.ts";

type SpeedscopeFrame = { name: string; file: string | null; line: number | null; col: number | null };

type OpenFrame = { frame: number; node: number };

type ProfileState = {
  index: number;
  type: string | null;
  name: string | null;
  unit: string | null;
  startValue: number | null;
  endValue: number | null;
  sampleNodes: GrowableInt32;
  weights: GrowableFloat64;
  events: number;
  open: OpenFrame[];
  lastAt: number | null;
  /** Raw-unit weights of evented profiles, per trie node. */
  evented: Map<number, { weight: number; count: number }>;
  mismatchedCloses: number;
};

const profileScalarKeys = new Set(["type", "name", "unit", "startValue", "endValue"]);

function asNumber(value: unknown): number | null {
  return typeof value === "number" && Number.isFinite(value) ? value : null;
}

/** py-spy names its speedscope profiles `Thread <tid> "<name>"` or `Process <pid> Thread <tid> "<name>"`. */
export function parseSpeedscopeProfileName(name: string | null): { thread: string | null; process: string | null } {
  if (name === null) return { thread: null, process: null };
  const match = /^(?:Process (\d+) )?Thread (\S+)(?: "(.*)")?$/.exec(name);
  if (!match) return { thread: name, process: null };
  const threadName = match[3];
  return { thread: threadName ? threadName : (match[2] as string), process: match[1] ?? null };
}

export async function extractSpeedscope(path: string, sink: EvidenceSink, options: ExtractOptions): Promise<ExtractResult> {
  boundStaging(sink, path);
  const frames: SpeedscopeFrame[] = [];
  const profiles = new Map<number, ProfileState>();
  const aggregator = new StackAggregator();
  const meta: { exporter: string | null; schema: string | null } = { exporter: null, schema: null };
  let sawProfiles = false;

  const profile = (index: number): ProfileState => {
    let state = profiles.get(index);
    if (!state) {
      state = {
        index,
        type: null,
        name: null,
        unit: null,
        startValue: null,
        endValue: null,
        sampleNodes: new GrowableInt32(),
        weights: new GrowableFloat64(),
        events: 0,
        open: [],
        lastAt: null,
        evented: new Map(),
        mismatchedCloses: 0,
      };
      profiles.set(index, state);
    }
    return state;
  };

  const badValue = (at: readonly JsonPathSegment[], what: string): never => {
    throw artifactParseFailed(path, `${what} (at ${formatJsonPath(at)})`);
  };

  const addEvented = (state: ProfileState, node: number, weight: number): void => {
    if (node === 0 || !(weight > 0)) return;
    const totals = state.evented.get(node);
    if (totals) {
      totals.weight += weight;
      totals.count += 1;
    } else state.evented.set(node, { weight, count: 1 });
  };

  const visitor: JsonVisitor = {
    select(p) {
      const depth = p.length;
      if (depth === 0) return "enter";
      const first = p[0];
      if (depth === 1) {
        if (first === "profiles") sawProfiles = true;
        if (first === "shared" || first === "profiles") return "enter";
        if (first === "exporter" || first === "$schema") return "capture";
        return "skip";
      }
      if (first === "shared") {
        if (depth === 2) return p[1] === "frames" ? "enter" : "skip";
        return depth === 3 ? "capture" : "skip";
      }
      if (first === "profiles") {
        if (depth === 2) return "enter";
        const key = p[2];
        if (depth === 3) {
          if (key === "samples" || key === "weights" || key === "events") return "enter";
          return typeof key === "string" && profileScalarKeys.has(key) ? "capture" : "skip";
        }
        if (depth === 4) return "capture";
      }
      return "skip";
    },
    value(p, value) {
      const first = p[0];
      if (p.length === 1) {
        if (first === "exporter" && typeof value === "string") meta.exporter = value;
        if (first === "$schema" && typeof value === "string") meta.schema = value;
        return;
      }
      if (first === "shared") {
        const frame = value as Record<string, unknown> | null;
        if (!frame || typeof frame !== "object") badValue(p, `shared.frames[${String(p[2])}] is not an object`);
        const record = frame as Record<string, unknown>;
        frames[p[2] as number] = {
          name: typeof record.name === "string" ? record.name : String(record.name ?? "<unnamed>"),
          file: typeof record.file === "string" ? record.file : null,
          line: asNumber(record.line),
          col: asNumber(record.col),
        };
        return;
      }
      const state = profile(p[1] as number);
      const key = p[2];
      if (p.length === 3) {
        if (key === "type" && typeof value === "string") state.type = value;
        else if (key === "name" && typeof value === "string") state.name = value;
        else if (key === "unit" && typeof value === "string") state.unit = value;
        else if (key === "startValue") state.startValue = asNumber(value);
        else if (key === "endValue") state.endValue = asNumber(value);
        return;
      }
      if (key === "samples") {
        if (!Array.isArray(value)) badValue(p, `profiles[${String(p[1])}].samples[${String(p[3])}] is not an array`);
        let node = 0;
        for (const frameIndex of value as unknown[]) {
          if (typeof frameIndex !== "number") badValue(p, "a sample holds a non-numeric frame index");
          node = aggregator.child(node, frameIndex as number);
        }
        state.sampleNodes.push(node);
        return;
      }
      if (key === "weights") {
        const weight = asNumber(value);
        if (weight === null) badValue(p, "a weight is not a number");
        state.weights.push(weight as number);
        return;
      }
      if (key === "events") {
        const event = value as Record<string, unknown> | null;
        const at = asNumber(event?.at);
        const frame = asNumber(event?.frame);
        if (!event || at === null || frame === null || (event.type !== "O" && event.type !== "C")) {
          badValue(p, `profiles[${String(p[1])}].events[${String(p[3])}] is not an open/close event`);
        }
        state.events++;
        const top = state.open[state.open.length - 1];
        if (top && state.lastAt !== null) addEvented(state, top.node, (at as number) - state.lastAt);
        state.lastAt = at;
        if (event?.type === "O") {
          state.open.push({ frame: frame as number, node: aggregator.child(top?.node ?? 0, frame as number) });
        } else {
          let found = -1;
          for (let at2 = state.open.length - 1; at2 >= 0; at2--) {
            if (state.open[at2]?.frame === frame) {
              found = at2;
              break;
            }
          }
          if (found === -1 || found !== state.open.length - 1) state.mismatchedCloses++;
          if (found !== -1) state.open.length = found;
        }
      }
    },
  };

  await readJsonWithVisitor(path, visitor, { mode: options.parseMode });
  if (!sawProfiles) throw artifactParseFailed(path, "no `profiles` array: this is not a speedscope file");

  const exporter = meta.exporter ? splitExporter(meta.exporter) : null;
  const producer = exporter?.producer;
  const producerLanguage = producer === "py-spy" ? "python" : null;
  const limitations: string[] = [];
  let emptySamples = 0;
  let unknownFrames = 0;

  const ordered = [...profiles.values()].sort((left, right) => left.index - right.index);
  for (const state of ordered) {
    const unit = stackUnitOf(state.unit);
    if (!unit) limitations.push(`profile ${state.index}: unknown unit "${state.unit}"; weights kept as samples.`);
    const names = parseSpeedscopeProfileName(state.name ?? (ordered.length > 1 ? `profile ${state.index}` : null));
    const group: StackGroup = aggregator.group(String(state.index), {
      thread: names.thread,
      process: names.process,
      unit: unit?.unit ?? "samples",
      scale: unit?.scale ?? 1,
    });
    if (state.type === "evented") {
      const top = state.open[state.open.length - 1];
      if (top && state.lastAt !== null && state.endValue !== null) addEvented(state, top.node, state.endValue - state.lastAt);
      if (state.open.length > 0) {
        limitations.push(`profile ${state.index}: ${state.open.length} frames were still open at the end.`);
      }
      if (state.mismatchedCloses > 0) {
        limitations.push(`profile ${state.index}: ${state.mismatchedCloses} close events did not match the innermost open frame.`);
      }
      for (const [node, totals] of state.evented) aggregator.add(group, node, totals.weight, totals.count);
      continue;
    }
    const samples = state.sampleNodes.length;
    const weights = state.weights.length;
    if (weights > 0 && weights !== samples) {
      limitations.push(`profile ${state.index}: ${samples} samples but ${weights} weights; unmatched entries ignored.`);
    }
    for (let index = 0; index < samples; index++) {
      const node = state.sampleNodes.get(index);
      if (node === 0) {
        emptySamples++;
        continue;
      }
      if (weights > 0 && index >= weights) break;
      aggregator.add(group, node, weights > 0 ? state.weights.get(index) : 1, 1);
    }
  }
  if (emptySamples > 0) limitations.push(`${emptySamples} samples had an empty stack (idle) and carry no frames.`);

  const rows = new Map<number, FrameRow>();
  const resolveFrame = (frameId: number): FrameRow => {
    const cached = rows.get(frameId);
    if (cached) return cached;
    const frame = frames[frameId];
    if (!frame) unknownFrames++;
    const file = projectRelativePath(frame?.file ?? null, options.projectRoot);
    const row = frameRow({
      function: frame?.name ?? `<unknown frame ${frameId}>`,
      file,
      line: frame?.line && frame.line > 0 ? frame.line : null,
      module: null,
      language: options.language ?? producerLanguage ?? languageForFile(frame?.file) ?? "unknown",
    });
    rows.set(frameId, row);
    return row;
  };
  // py-spy --threads/--subprocesses put `process …`/`thread (…)` pseudo-frames at the root of each
  // sample; they name the thread and process instead of being frames.
  const emitter = new RowEmitter(sink, options.maxRows);
  const final = new StackAggregator();
  for (const state of ordered) {
    const group = aggregator.group(String(state.index), { thread: null, process: null, unit: "samples", scale: 1 });
    for (const [node, totals] of group.totals) {
      let ids = aggregator.frameIdsOf(node);
      let thread = group.thread;
      let process = group.process;
      if (producer === "py-spy") {
        const context = splitPySpyContext(ids.map((id) => frames[id]?.name ?? "").join(";"));
        const stripped = (context.process !== null ? 1 : 0) + (context.thread !== null ? 1 : 0);
        if (stripped > 0 && ids.slice(0, stripped).every((id) => !frames[id]?.file)) {
          ids = ids.slice(stripped);
          thread = context.thread ?? thread;
          process = context.process ?? process;
        }
      }
      const target = final.group(`${state.index}\u0000${process ?? ""}\u0000${thread ?? ""}`, {
        thread,
        process,
        unit: group.unit,
        scale: group.scale,
      });
      final.add(target, final.path(ids), totals.weight, totals.count);
    }
  }
  final.emit(emitter, resolveFrame);
  if (unknownFrames > 0) limitations.push(`${unknownFrames} frame indexes had no entry in shared.frames.`);

  const result: ExtractResult = { rows: emitter.counts, limitations: [...limitations, ...emitter.limitations()] };
  if (producer) result.producer = producer;
  if (exporter?.version) result.producer_version = exporter.version;
  return result;
}
