/**
 * V8 `.cpuprofile` (node --cpu-prof, Chrome DevTools): `nodes` (flat, with callFrame and children
 * ids), `samples` (node ids) and `timeDeltas` (µs before each sample); the pre-2016 format nests
 * nodes under `head` and times each sample by absolute `timestamps` (µs) between `startTime` and
 * `endTime` in seconds. The profile itself is read by v8-profile.ts.
 */
import type { EvidenceSink } from "../../domain/evidence.ts";
import { FrameTable, RowEmitter, fileParseFailed, boundStaging, type ExtractOptions, type ExtractResult } from "./common.ts";
import { readJsonWithVisitor } from "./json-file.ts";
import type { JsonVisitor } from "./json-stream.ts";
import { StackAggregator } from "./stack-aggregator.ts";
import { V8Profile, V8ProfileError } from "./v8-profile.ts";

export async function extractV8CpuProfile(path: string, sink: EvidenceSink, options: ExtractOptions): Promise<ExtractResult> {
  boundStaging(sink, path);
  const profile = new V8Profile();
  const times: { start: number | null; end: number | null; timestamps: boolean } = { start: null, end: null, timestamps: false };
  const visitor: JsonVisitor = {
    select(p) {
      if (p.length === 0) return "enter";
      const key = p[0];
      if (p.length === 1) {
        if (key === "nodes") return "enter";
        // Numeric arrays are captured whole (a few MB even for 1M samples) so their type can be checked.
        if (key === "samples" || key === "timeDeltas" || key === "timestamps" || key === "head") return "capture";
        return key === "startTime" || key === "endTime" ? "capture" : "skip";
      }
      return p.length === 2 && key === "nodes" ? "capture" : "skip";
    },
    value(p, value) {
      const key = p[0];
      if (p.length === 1 && key === "nodes") throw new V8ProfileError("`nodes` is not an array");
      if (key === "nodes" || key === "head") profile.addNode(value);
      else if (key === "samples") profile.addSamples(value);
      else if (key === "timeDeltas") profile.addTimeDeltas(value);
      else if (key === "timestamps") {
        times.timestamps = true;
        profile.addTimestamps(value);
      } else if (key === "startTime" && typeof value === "number") times.start = value;
      else if (key === "endTime" && typeof value === "number") times.end = value;
    },
  };
  try {
    await readJsonWithVisitor(path, visitor, { mode: options.parseMode });
  } catch (error) {
    if (error instanceof V8ProfileError) throw fileParseFailed(path, error.message);
    throw error;
  }
  if (!profile.sawNodes) throw fileParseFailed(path, "no `nodes` array: this is not a V8 .cpuprofile");
  // Before 2016, startTime and endTime were seconds while timestamps were µs.
  const scale = times.timestamps ? 1e6 : 1;
  profile.startTime = times.start === null ? null : times.start * scale;
  profile.endTime = times.end === null ? null : times.end * scale;

  const frames = new FrameTable();
  const aggregator = new StackAggregator();
  const group = aggregator.group("", { thread: null, process: null, unit: "ns", scale: 1000 });
  const limitations = profile.fold(aggregator, frames, group, {
    language: options.language ?? "javascript",
    projectRoot: options.projectRoot,
  });
  const emitter = new RowEmitter(sink, options.maxRows);
  aggregator.emit(emitter, (frameId) => frames.rows[frameId] as (typeof frames.rows)[number]);
  limitations.push(...aggregator.limitations(), ...emitter.limitations());
  return { rows: emitter.counts, producer: "v8", limitations };
}
