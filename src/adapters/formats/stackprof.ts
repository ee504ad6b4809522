/**
 * Ruby stackprof profiles dumped as JSON (`StackProf.run(raw: true) … .to_json`, `stackprof --json`):
 * `frames` maps a frame id to `{name, file, line, samples, total_samples, edges}`, and with `raw`
 * the samples themselves: `[stack height, frame id … (root first), sample count, …]`. Each raw
 * stack is one stack weighted by its count of samples (stackprof's own unit; in `object` mode a
 * sample is an allocation). Without `raw`, stacks are rebuilt from the frames' self counts and
 * caller→callee edges (call-graph-stacks.ts), with a limitation.
 */
import { projectRelativePath, type EvidenceSink } from "../../domain/evidence.ts";
import { type CallGraphFunction, expandCallGraph } from "./call-graph-stacks.ts";
import { FrameTable, RowEmitter, fileParseFailed, boundStaging, type ExtractOptions, type ExtractResult } from "./common.ts";
import { readJsonWithVisitor } from "./json-file.ts";
import { StackAggregator } from "./stack-aggregator.ts";

type StackprofFrame = { name?: unknown; file?: unknown; line?: unknown; samples?: unknown; total_samples?: unknown; edges?: unknown };

export async function extractStackprof(path: string, sink: EvidenceSink, options: ExtractOptions): Promise<ExtractResult> {
  boundStaging(sink, path);
  const described = new Map<string, StackprofFrame>();
  let raw: unknown[] | null = null;
  let mode: string | null = null;
  await readJsonWithVisitor(
    path,
    {
      select: (at) =>
        at.length === 0 || (at.length === 1 && at[0] === "frames")
          ? "enter"
          : at.length === 2 && at[0] === "frames"
            ? "capture"
            : at.length === 1 && (at[0] === "raw" || at[0] === "mode")
              ? "capture"
              : "skip",
      value(at, value) {
        if (at[0] === "frames" && value && typeof value === "object") described.set(String(at[1]), value as StackprofFrame);
        else if (at[0] === "raw" && Array.isArray(value)) raw = value;
        else if (at[0] === "mode" && typeof value === "string") mode = value;
      },
    },
    { mode: options.parseMode },
  );
  if (described.size === 0) throw fileParseFailed(path, "no `frames` object: this is not a stackprof JSON dump");
  const frames = new FrameTable();
  const frameIds = new Map<string, number>();
  const frameOf = (id: string): number => {
    let frameId = frameIds.get(id);
    if (frameId === undefined) {
      const frame = described.get(id);
      const file = typeof frame?.file === "string" && frame.file !== "" ? frame.file : null;
      frameId = frames.intern({
        function: typeof frame?.name === "string" && frame.name !== "" ? frame.name : `<frame ${id}>`,
        file: projectRelativePath(file, options.projectRoot),
        line: typeof frame?.line === "number" && frame.line > 0 ? frame.line : null,
        module: null,
        language: options.language ?? "ruby",
      });
      frameIds.set(id, frameId);
    }
    return frameId;
  };
  const aggregator = new StackAggregator();
  const group = aggregator.group("", { thread: null, process: null, unit: "samples", scale: 1 });
  const limitations: string[] = [];
  if (raw !== null) {
    const bad = foldRaw(raw, aggregator, group, frameOf);
    if (bad) limitations.push("The `raw` samples end in the middle of a stack; the rest was left out.");
  } else {
    limitations.push("The dump has no `raw` samples (profile with raw: true): stacks are rebuilt from the frames' caller→callee counts.");
    const ids = [...described.keys()];
    const position = new Map(ids.map((id, index) => [id, index]));
    const functions: CallGraphFunction[] = ids.map((id) => ({
      frame: frameOf(id),
      self: Math.max(0, Number((described.get(id) as StackprofFrame).samples) || 0),
      cumulative: Math.max(0, Number((described.get(id) as StackprofFrame).total_samples) || 0),
      callees: new Map(),
      called: false,
    }));
    ids.forEach((id, index) => {
      const edges = (described.get(id) as StackprofFrame).edges;
      if (!edges || typeof edges !== "object") return;
      for (const [callee, count] of Object.entries(edges as Record<string, unknown>)) {
        const at = position.get(callee);
        if (at === undefined || typeof count !== "number" || count <= 0) continue;
        (functions[index] as CallGraphFunction).callees.set(at, count);
        if (at !== index) (functions[at] as CallGraphFunction).called = true;
      }
    });
    const expanded = expandCallGraph(functions, aggregator, group);
    if (expanded.recursive > 0) limitations.push(`${expanded.recursive} frames are called recursively; their total share is approximate.`);
  }
  const emitter = new RowEmitter(sink, options.maxRows);
  aggregator.emit(emitter, (frameId) => frames.rows[frameId] as (typeof frames.rows)[number]);
  if (mode === "object") limitations.unshift("An object-mode profile: a sample is one allocation.");
  limitations.push(...aggregator.limitations(), ...emitter.limitations());
  return { rows: emitter.counts, producer: "stackprof", limitations };
}

/** Folds `[height, id…, count]` runs; true when the array ends mid-run or holds a non-number. */
function foldRaw(
  raw: unknown[],
  aggregator: StackAggregator,
  group: ReturnType<StackAggregator["group"]>,
  frameOf: (id: string) => number,
): boolean {
  let at = 0;
  while (at < raw.length) {
    const height = raw[at];
    if (typeof height !== "number" || height < 0 || at + height + 1 >= raw.length) return true;
    let node = 0;
    for (let index = at + 1; index <= at + height; index++) node = aggregator.child(node, frameOf(String(raw[index])));
    const count = raw[at + height + 1];
    if (typeof count !== "number" || !(count >= 0)) return true;
    aggregator.add(group, node, count, count);
    at += height + 2;
  }
  return false;
}
