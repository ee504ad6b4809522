/**
 * The sampled profiles a Chrome trace can carry beside its slices: V8 CPU profiles (DevTools
 * recordings: a `Profile` event and its `ProfileChunk`s, or one `CpuProfile` event with the whole
 * profile) and the Trace Event Format's top-level `samples` + `stackFrames` (Hermes, Perfetto JSON).
 * When there are samples, they are the trace's stacks: hotspots then rank the JavaScript functions
 * rather than the `RunTask` slices around them (the slices stay trace events).
 */
import type { TraceEventRecord } from "./chrome-event-record.ts";
import { FrameTable, type RowEmitter } from "./common.ts";
import { StackAggregator, type StackGroup } from "./stack-aggregator.ts";
import type { ThreadLabels } from "./thread-labels.ts";
import { V8Profile } from "./v8-profile.ts";

type ProfileEntry = { pid: string | null; tid: string | null; profile: V8Profile };

function dataOf(record: TraceEventRecord): Record<string, unknown> | null {
  const data = record.argsObject()?.data;
  return data && typeof data === "object" && !Array.isArray(data) ? (data as Record<string, unknown>) : null;
}

function objectOf(value: unknown): Record<string, unknown> | null {
  return value && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
}

export class TraceCpuProfiles {
  private readonly v8 = new Map<string, ProfileEntry>();
  private stackFrames: Record<string, unknown> | null = null;
  private samples: unknown[] | null = null;
  private cpuProfiles = 0;
  /** Profile data that could not be read (kept as trace events, left out of stacks). */
  malformed = 0;

  /** The top-level keys a trace object may hold profile data under. */
  static topLevelKeys = new Set(["samples", "stackFrames"]);

  /** Takes the profile data of a `Profile`, `ProfileChunk` or `CpuProfile` event. */
  accept(record: TraceEventRecord): void {
    const name = record.nameString;
    if (name !== "Profile" && name !== "ProfileChunk" && name !== "CpuProfile") return;
    try {
      const data = dataOf(record);
      if (!data) return;
      if (name === "CpuProfile") {
        const cpuProfile = objectOf(data.cpuProfile);
        if (!cpuProfile) return;
        const entry = this.entry(`${record.pid ?? ""}\u0000${record.tid ?? ""}\u0000cpu${this.cpuProfiles++}`, record);
        this.fill(entry.profile, cpuProfile, data);
        if (typeof cpuProfile.startTime === "number") entry.profile.startTime = cpuProfile.startTime;
        if (typeof cpuProfile.endTime === "number") entry.profile.endTime = cpuProfile.endTime;
        return;
      }
      const entry = this.entry(`${record.pid ?? ""}\u0000${record.idText ?? ""}`, record);
      if (name === "Profile") {
        // The Profile event names the profiled thread; chunks may come from the sampler's.
        entry.tid = record.tid;
        if (typeof data.startTime === "number") entry.profile.startTime = data.startTime;
        return;
      }
      const cpuProfile = objectOf(data.cpuProfile);
      if (cpuProfile) this.fill(entry.profile, cpuProfile, data);
      if (typeof data.endTime === "number") entry.profile.endTime = data.endTime;
    } catch {
      this.malformed++;
    }
  }

  /** A top-level `samples` or `stackFrames` value. */
  topLevel(key: string, value: unknown): void {
    if (key === "stackFrames") this.stackFrames = objectOf(value);
    else if (key === "samples" && Array.isArray(value)) this.samples = value;
  }

  get hasSamples(): boolean {
    for (const entry of this.v8.values()) if (entry.profile.sampleCount > 0) return true;
    return this.samples !== null && this.samples.length > 0 && this.stackFrames !== null;
  }

  /** Emits the samples as stacks, labelled like the trace's threads; returns the limitations. */
  emit(emitter: RowEmitter, labels: ThreadLabels, options: { projectRoot: string | null; language?: string; slices: number }): string[] {
    const frames = new FrameTable();
    const aggregator = new StackAggregator();
    const threads = new Map<string, { key: string; pid: string | null; tid: string | null; group: StackGroup }>();
    const groupOf = (pid: string | null, tid: string | null, unit: "ns" | "samples", scale: number): StackGroup => {
      const key = `${pid ?? ""}\u0000${tid ?? ""}`;
      const known = threads.get(`${key}\u0000${unit}`);
      if (known) return known.group;
      const group = aggregator.group(`${key}\u0000${unit}`, { thread: tid, process: pid, unit, scale });
      threads.set(`${key}\u0000${unit}`, { key, pid, tid, group });
      return group;
    };
    const limitations: string[] = [];
    let samples = 0;
    for (const entry of this.v8.values()) {
      if (entry.profile.sampleCount === 0) continue;
      samples += entry.profile.sampleCount;
      const group = groupOf(entry.pid, entry.tid, "ns", 1000);
      const notes = entry.profile.fold(aggregator, frames, group, {
        language: options.language ?? "javascript",
        projectRoot: options.projectRoot,
      });
      limitations.push(...notes.map((note) => `V8 CPU profile of thread ${entry.tid ?? "?"}: ${note}`));
    }
    samples += this.foldStackSamples(aggregator, frames, groupOf);
    labels.apply([...threads.values()]);
    aggregator.emit(emitter, (frameId) => frames.rows[frameId] as (typeof frames.rows)[number]);
    limitations.unshift(
      `This trace carries ${samples} CPU profile samples: they are its stacks (the functions hotspots rank); its ${options.slices} slices stay trace events and add no stack weight, so time is not counted twice.`,
    );
    if (this.malformed > 0) limitations.push(`${this.malformed} CPU profile events could not be read and were left out of the stacks.`);
    limitations.push(...aggregator.limitations());
    return limitations;
  }

  private entry(key: string, record: TraceEventRecord): ProfileEntry {
    let entry = this.v8.get(key);
    if (!entry) {
      entry = { pid: record.pid, tid: record.tid, profile: new V8Profile() };
      this.v8.set(key, entry);
    }
    return entry;
  }

  private fill(profile: V8Profile, cpuProfile: Record<string, unknown>, data: Record<string, unknown>): void {
    if (Array.isArray(cpuProfile.nodes)) for (const node of cpuProfile.nodes) profile.addNode(node);
    if (cpuProfile.samples !== undefined) profile.addSamples(cpuProfile.samples);
    const deltas = cpuProfile.timeDeltas ?? data.timeDeltas;
    if (deltas !== undefined) profile.addTimeDeltas(deltas);
  }

  /** Top-level samples: each weighs its `weight` (1 by default), its stack the `sf` chain of stackFrames. */
  private foldStackSamples(
    aggregator: StackAggregator,
    frames: FrameTable,
    groupOf: (pid: string | null, tid: string | null, unit: "ns" | "samples", scale: number) => StackGroup,
  ): number {
    const stackFrames = this.stackFrames;
    if (!stackFrames || !this.samples) return 0;
    const nodes = new Map<string, number>();
    const nodeOf = (id: string): number => {
      const known = nodes.get(id);
      if (known !== undefined) return known;
      const chain: { id: string; frame: Record<string, unknown> }[] = [];
      const seen = new Set<string>();
      let base = 0;
      for (let at: string | null = id; at !== null && !seen.has(at); ) {
        const cached = nodes.get(at);
        if (cached !== undefined) {
          base = cached;
          break;
        }
        seen.add(at);
        const frame = objectOf(stackFrames[at]);
        if (!frame) break;
        chain.push({ id: at, frame });
        at = frame.parent === undefined || frame.parent === null ? null : String(frame.parent);
      }
      for (let index = chain.length - 1; index >= 0; index--) {
        const { id: frameId, frame } = chain[index] as (typeof chain)[number];
        const category = typeof frame.category === "string" ? frame.category : null;
        const frameIndex = frames.intern({
          function: typeof frame.name === "string" && frame.name !== "" ? frame.name : "<unnamed>",
          file: null,
          line: null,
          module: category,
          language: category === "JavaScript" ? "javascript" : "trace",
        });
        base = aggregator.child(base, frameIndex);
        nodes.set(frameId, base);
      }
      return base;
    };
    let counted = 0;
    for (const value of this.samples) {
      const sample = objectOf(value);
      if (!sample || sample.sf === undefined) continue;
      const weight = Number(sample.weight ?? 1);
      const pid = sample.pid === undefined ? null : String(sample.pid);
      const tid = sample.tid === undefined ? null : String(sample.tid);
      counted++;
      aggregator.add(groupOf(pid, tid, "samples", 1), nodeOf(String(sample.sf)), Number.isFinite(weight) && weight >= 0 ? weight : 1, 1);
    }
    return counted;
  }
}
