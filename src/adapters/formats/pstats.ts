/**
 * cProfile / profile `.pstats` files (`cProfile.Profile.dump_stats`, `python -m cProfile -o`): a
 * marshal-serialized dict `{(file, line, name): (primitive calls, calls, self seconds, cumulative
 * seconds, {caller (file, line, name): (…, …, self, cumulative)})}`. cProfile records no stacks,
 * so stacks are rebuilt from the caller edges (call-graph-stacks.ts): self time per function is
 * exactly cProfile's, cumulative time too where there is no recursion. Built-ins (`~`, line 0)
 * have no file. Weights are in ns.
 */
import { projectRelativePath, type EvidenceSink } from "../../domain/evidence.ts";
import { readAllBytes } from "./byte-source.ts";
import { type CallGraphFunction, expandCallGraph } from "./call-graph-stacks.ts";
import { FrameTable, RowEmitter, fileParseFailed, boundStaging, type ExtractOptions, type ExtractResult } from "./common.ts";
import { inflateFailed } from "./json-file.ts";
import { type MarshalDict, MarshalError, MarshalReader, type MarshalValue, isMarshalDict } from "./marshal.ts";
import { StackAggregator } from "./stack-aggregator.ts";

/** A .pstats file over this (inflated) is refused: they are a few MB even for large programs. */
const maxPstatsBytes = 512 << 20;

type FunctionKey = { file: string; line: number; name: string };

function functionKey(value: MarshalValue): FunctionKey | null {
  if (!Array.isArray(value) || value.length !== 3) return null;
  const [file, line, name] = value;
  if (typeof file !== "string" || typeof line !== "number" || typeof name !== "string") return null;
  return { file, line, name };
}

function numbers(value: MarshalValue, count: number): number[] | null {
  if (!Array.isArray(value) || value.length < count) return null;
  const result = value.slice(0, count);
  return result.every((item) => typeof item === "number" && Number.isFinite(item)) ? (result as number[]) : null;
}

type CallGraph = { functions: CallGraphFunction[]; malformed: number; negative: number };

/** The statistics dict as a call graph: one function per (file, line, name), edges from its callers. */
function readCallGraph(root: MarshalDict, frames: FrameTable, options: ExtractOptions): CallGraph {
  const graph: CallGraph = { functions: [], malformed: 0, negative: 0 };
  const indexByKey = new Map<string, number>();
  const indexOf = (key: FunctionKey): number => {
    const text = `${key.file}\u0000${key.line}\u0000${key.name}`;
    let index = indexByKey.get(text);
    if (index === undefined) {
      index = graph.functions.length;
      indexByKey.set(text, index);
      const builtin = key.file === "~" && key.line === 0;
      const file = builtin ? null : projectRelativePath(key.file, options.projectRoot);
      const language = options.language ?? "python";
      const frame = frames.intern({ function: key.name, file, line: builtin ? null : key.line, module: null, language });
      graph.functions.push({ frame, self: 0, cumulative: 0, callees: new Map(), called: false });
    }
    return index;
  };
  for (const [keyValue, statsValue] of root.pairs) {
    const key = functionKey(keyValue);
    const stats = numbers(statsValue, 4);
    const callers = Array.isArray(statsValue) ? statsValue[4] : undefined;
    if (!key || !stats || (callers !== undefined && !isMarshalDict(callers))) {
      graph.malformed++;
      continue;
    }
    const index = indexOf(key);
    const entry = graph.functions[index] as CallGraphFunction;
    const [, , self, cumulative] = stats as [number, number, number, number];
    if (self < 0 || cumulative < 0) graph.negative++;
    entry.self = Math.max(0, self) * 1e9;
    entry.cumulative = Math.max(0, cumulative) * 1e9;
    for (const [callerValue, edgeValue] of (callers as MarshalDict | undefined)?.pairs ?? []) {
      const caller = functionKey(callerValue);
      const edge = numbers(edgeValue, 4);
      if (!caller || !edge) {
        graph.malformed++;
        continue;
      }
      (graph.functions[indexOf(caller)] as CallGraphFunction).callees.set(index, Math.max(0, edge[3] as number) * 1e9);
      entry.called = true;
    }
  }
  return graph;
}

export async function extractPstats(path: string, sink: EvidenceSink, options: ExtractOptions): Promise<ExtractResult> {
  boundStaging(sink, path);
  let root: MarshalValue;
  try {
    root = new MarshalReader(await readAllBytes(path, { maxInflatedBytes: maxPstatsBytes })).read();
  } catch (error) {
    if (error instanceof MarshalError) throw fileParseFailed(path, `not a readable marshal stream: ${error.message}`);
    throw inflateFailed(path, error);
  }
  if (!isMarshalDict(root)) throw fileParseFailed(path, "the marshal data is not a dict of function statistics");
  const frames = new FrameTable();
  const graph = readCallGraph(root, frames, options);
  if (graph.functions.length === 0) throw fileParseFailed(path, "the statistics dict holds no (file, line, name) entries");
  const aggregator = new StackAggregator();
  const group = aggregator.group("", { thread: null, process: null, unit: "ns", scale: 1 });
  const expanded = expandCallGraph(graph.functions, aggregator, group);
  const emitter = new RowEmitter(sink, options.maxRows);
  aggregator.emit(emitter, (frameId) => frames.rows[frameId] as (typeof frames.rows)[number]);
  const limitations = [
    "cProfile records no stacks: they are rebuilt from its caller→callee times (self time per function is exact; cumulative time is exact where there is no recursion).",
  ];
  if (expanded.recursive > 0)
    limitations.push(`${expanded.recursive} functions are called recursively; their total share is approximate (self share stays exact).`);
  if (expanded.unreached > 0)
    limitations.push(`${expanded.unreached} functions are reached from no root; their self time stands as a stack of its own.`);
  if (expanded.truncated)
    limitations.push(
      "The call graph has too many paths to expand them all; deep callers' self time stays with the node where expansion stopped.",
    );
  if (graph.malformed > 0)
    limitations.push(
      `${graph.malformed} entries were not (file, line, name) → (calls, calls, self, cumulative, callers) and were left out.`,
    );
  if (graph.negative > 0) limitations.push(`${graph.negative} functions had a negative time, taken as 0.`);
  limitations.push(...aggregator.limitations(), ...emitter.limitations());
  return { rows: emitter.counts, producer: "cProfile", limitations };
}
