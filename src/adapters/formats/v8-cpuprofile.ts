/**
 * V8 `.cpuprofile` (node --cpu-prof, Chrome DevTools): `nodes` (flat, with callFrame and children
 * ids), `samples` (node ids) and `timeDeltas` (µs before each sample). Each sample lasts until the
 * next one (the last until `endTime`), as DevTools draws it. `(root)` is dropped; `(program)`,
 * `(idle)` and `(garbage collector)` stay frames.
 */
import { fileURLToPath } from "node:url";
import { projectRelativePath, type EvidenceSink } from "../../domain/evidence.ts";
import {
  FrameTable,
  GrowableFloat64,
  GrowableInt32,
  RowEmitter,
  artifactParseFailed,
  boundStaging,
  type ExtractOptions,
  type ExtractResult,
} from "./common.ts";
import { StackAggregator } from "./stack-aggregator.ts";
import { readJsonWithVisitor } from "./json-file.ts";
import type { JsonVisitor } from "./json-stream.ts";

type CallFrame = { functionName?: unknown; url?: unknown; lineNumber?: unknown; columnNumber?: unknown };
type ProfileNode = { id: number; callFrame: CallFrame; children: number[]; parent: number | null };

function scriptPath(url: string): string | null {
  if (url === "") return null;
  if (url.startsWith("file://")) {
    try {
      return fileURLToPath(url);
    } catch {
      return url;
    }
  }
  return url;
}

export async function extractV8CpuProfile(path: string, sink: EvidenceSink, options: ExtractOptions): Promise<ExtractResult> {
  boundStaging(sink, path);
  const nodes = new Map<number, ProfileNode>();
  const samples = new GrowableInt32();
  const deltas = new GrowableFloat64();
  const times: { start: number | null; end: number | null } = { start: null, end: null };
  let sawNodes = false;

  const addNode = (value: unknown, parent: number | null): void => {
    const record = value as Record<string, unknown> | null;
    if (!record || typeof record !== "object" || typeof record.id !== "number") {
      throw artifactParseFailed(path, "a profile node has no numeric id");
    }
    if (record.callFrame !== undefined && (record.callFrame === null || typeof record.callFrame !== "object")) {
      throw artifactParseFailed(path, `profile node ${record.id} has a callFrame that is not an object`);
    }
    const children: number[] = [];
    const rawChildren = Array.isArray(record.children) ? (record.children as unknown[]) : [];
    for (const child of rawChildren) {
      // The pre-2016 format nests child objects under `head`.
      if (child && typeof child === "object") {
        addNode(child, record.id);
        children.push((child as { id: number }).id);
      } else if (typeof child === "number") children.push(child);
    }
    const node: ProfileNode = {
      id: record.id,
      callFrame: (record.callFrame && typeof record.callFrame === "object" ? record.callFrame : record) as CallFrame,
      children,
      parent: typeof record.parent === "number" ? record.parent : parent,
    };
    nodes.set(node.id, node);
  };

  const visitor: JsonVisitor = {
    select(p) {
      if (p.length === 0) return "enter";
      const key = p[0];
      if (p.length === 1) {
        if (key === "nodes") return "enter";
        // Numeric arrays are captured whole (a few MB even for 1M samples) so their type can be checked.
        if (key === "samples" || key === "timeDeltas") return "capture";
        if (key === "head") return "capture";
        return key === "startTime" || key === "endTime" ? "capture" : "skip";
      }
      return p.length === 2 ? "capture" : "skip";
    },
    value(p, value) {
      const key = p[0];
      if (p.length === 1 && (key === "nodes" || key === "samples" || key === "timeDeltas") && !Array.isArray(value)) {
        throw artifactParseFailed(path, `\`${String(key)}\` is not an array`);
      }
      if (key === "nodes" || key === "head") {
        sawNodes = true;
        addNode(value, null);
      } else if (key === "samples") {
        for (const [index, id] of (value as unknown[]).entries()) {
          if (typeof id !== "number") throw artifactParseFailed(path, `samples[${index}] is not a node id`);
          samples.push(id);
        }
      } else if (key === "timeDeltas") {
        for (const delta of value as unknown[]) deltas.push(typeof delta === "number" ? delta : 0);
      } else if (key === "startTime" && typeof value === "number") times.start = value;
      else if (key === "endTime" && typeof value === "number") times.end = value;
    },
  };
  await readJsonWithVisitor(path, visitor, { mode: options.parseMode });
  if (!sawNodes) throw artifactParseFailed(path, "no `nodes` array: this is not a V8 .cpuprofile");

  for (const node of nodes.values()) {
    for (const child of node.children) {
      const childNode = nodes.get(child);
      if (childNode && childNode.parent === null) childNode.parent = node.id;
    }
  }

  const frames = new FrameTable();
  const aggregator = new StackAggregator();
  const trieNodeOf = new Map<number, number>();
  const language = options.language ?? "javascript";
  const resolve = (id: number): number => {
    const known = trieNodeOf.get(id);
    if (known !== undefined) return known;
    // Walk up to the first resolved ancestor, then build down (no recursion on deep stacks).
    const chain: ProfileNode[] = [];
    let base = 0;
    const seen = new Set<number>();
    for (let at: number | null = id; at !== null; ) {
      const cached = trieNodeOf.get(at);
      if (cached !== undefined) {
        base = cached;
        break;
      }
      const node = nodes.get(at);
      if (!node || seen.has(at)) break;
      seen.add(at);
      chain.push(node);
      at = node.parent;
    }
    for (let index = chain.length - 1; index >= 0; index--) {
      const node = chain[index] as ProfileNode;
      const frame = node.callFrame;
      const functionName = typeof frame.functionName === "string" ? frame.functionName : "";
      if (node.parent === null && functionName === "(root)") {
        trieNodeOf.set(node.id, base);
        continue;
      }
      const url = typeof frame.url === "string" ? frame.url : "";
      const line = typeof frame.lineNumber === "number" && frame.lineNumber >= 0 ? frame.lineNumber + 1 : null;
      const frameId = frames.intern({
        function: functionName === "" ? "(anonymous)" : functionName,
        file: projectRelativePath(scriptPath(url), options.projectRoot),
        line,
        module: null,
        language,
      });
      base = aggregator.child(base, frameId);
      trieNodeOf.set(node.id, base);
    }
    return base;
  };

  const group = aggregator.group("", { thread: null, process: null, unit: "ns", scale: 1000 });
  const count = samples.length;
  let negativeDeltas = 0;
  let unknownNodes = 0;
  const deltaAt = (index: number): number => {
    if (index >= deltas.length) return 0;
    const delta = deltas.get(index);
    if (delta < 0) {
      negativeDeltas++;
      return 0;
    }
    return delta;
  };
  let timestamp = times.start ?? 0;
  for (let index = 0; index < count; index++) {
    timestamp += index < deltas.length ? deltas.get(index) : 0;
    let duration: number;
    if (index + 1 < count) duration = deltaAt(index + 1);
    else duration = times.end !== null ? Math.max(0, times.end - timestamp) : 0;
    const id = samples.get(index);
    if (!nodes.has(id)) {
      unknownNodes++;
      continue;
    }
    aggregator.add(group, resolve(id), duration, 1);
  }

  const emitter = new RowEmitter(sink, options.maxRows);
  aggregator.emit(emitter, (frameId) => frames.rows[frameId] as (typeof frames.rows)[number]);
  const limitations: string[] = [];
  if (deltas.length !== count) limitations.push(`${count} samples but ${deltas.length} timeDeltas.`);
  if (negativeDeltas > 0) limitations.push(`${negativeDeltas} negative timeDeltas were counted as zero.`);
  if (unknownNodes > 0) limitations.push(`${unknownNodes} samples named unknown node ids and were skipped.`);
  limitations.push(...emitter.limitations());
  return { rows: emitter.counts, producer: "v8", limitations };
}
