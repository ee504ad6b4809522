import { statfsSync } from "node:fs";
import type { MeasurementRow } from "../domain/evidence.ts";
import { nanosecondsPerClockTick, procAvailable, readMemoryStatus } from "./proc.ts";
import { ProcessTreeTracker } from "./process-tree.ts";

/** Names of the runtime measurements a run publishes; the values are the `measurements.name` column. */
export const runtimeMeasurementNames = {
  wallTimeNs: "runtime.wall_time_ns",
  cpuUserNs: "runtime.cpu_user_ns",
  cpuSystemNs: "runtime.cpu_system_ns",
  peakRssBytes: "runtime.peak_rss_bytes",
  minimumFreeBytes: "runtime.minimum_free_bytes",
} as const;

export type RuntimeMeasurementName = (typeof runtimeMeasurementNames)[keyof typeof runtimeMeasurementNames];

export type ResourceMeasurement = {
  name: RuntimeMeasurementName;
  value: number;
  unit: "ns" | "bytes";
  aggregation: "total" | "max" | "min";
  /** Where the value came from; see `notes` for what each source covers. */
  source: string;
};

export type UnavailableMetric = { name: RuntimeMeasurementName; reason: string };

export type ResourceSummary = {
  interval_ms: number;
  sample_count: number;
  /** How the process tree was followed: `proc_stat_scan` on Linux, `none` elsewhere. */
  tree_backend: "proc_stat_scan" | "none";
  measurements: ResourceMeasurement[];
  /** Metrics that could not be observed. They are never reported as 0. */
  unavailable: UnavailableMetric[];
  /** What the observed values do and do not cover. */
  notes: string[];
};

/**
 * The kernel's CPU accounting for the reaped root process (wait4 rusage). Its `ru_maxrss` is left
 * out on purpose: a child started by posix_spawn/vfork inherits the *parent's* RSS high-water mark
 * at exec, so it reports flameox's own memory, not the workload's.
 */
export type ChildResourceUsage = {
  userCpuNs: number;
  systemCpuNs: number;
};

/** One live process of the sampled tree, as the tracker last saw it. */
export type TreeMember = { pid: number; startTime: string; userTimeTicks: number; systemTimeTicks: number };

export type ResourceSamplerOptions = {
  /** Milliseconds between samples; default 250. */
  intervalMs?: number;
  /** Filesystem whose free space is watched (the workspace); unset ⇒ `minimum_free_bytes` unavailable. */
  diskPath?: string | null;
  /** Live members of the tree at call time. Give this or `rootPid`. */
  tree?: () => readonly TreeMember[];
  /** Root of a tree for the sampler to follow itself when no `tree` is given. */
  rootPid?: number;
};

export type ResourceSamplerStop = {
  /** Wall time measured by the caller (the broker's spawn→exit); else the sampler's own span. */
  wallTimeNs?: number;
  childUsage?: ChildResourceUsage | null;
};

const defaultIntervalMs = 250;

function disk(path: string): { free: number } | { error: string } {
  try {
    const stats = statfsSync(path);
    return { free: Number(stats.bavail) * Number(stats.bsize) };
  } catch (error) {
    return { error: error instanceof Error ? error.message : String(error) };
  }
}

/**
 * Samples a process tree at an interval: summed RSS (observed peak), CPU times of live members,
 * and free disk space of one path. Sampling is polling, so a descendant that lives less than one
 * interval can be missed; that is said in `notes`, and the reaped root's rusage is folded in.
 */
export class ResourceSampler {
  readonly intervalMs: number;
  private readonly diskPath: string | null;
  private readonly tree: () => readonly TreeMember[];
  private readonly treeBackend: ResourceSummary["tree_backend"];
  private readonly startedNs = process.hrtime.bigint();
  private timer: ReturnType<typeof setInterval> | null = null;
  private sampleCount = 0;
  private rssSampleCount = 0;
  private peakRssBytes = 0;
  private peakSingleHighWaterBytes = 0;
  private minimumFreeBytes: number | null = null;
  private diskError: string | null = null;
  private readonly cpuByProcess = new Map<string, { user: number; system: number }>();

  constructor(options: ResourceSamplerOptions) {
    this.intervalMs = Math.max(10, Math.floor(options.intervalMs ?? defaultIntervalMs));
    this.diskPath = options.diskPath ?? null;
    if (options.tree) {
      this.tree = options.tree;
    } else if (options.rootPid !== undefined) {
      const tracker = new ProcessTreeTracker(options.rootPid);
      this.tree = () => tracker.refresh();
    } else {
      this.tree = () => [];
    }
    this.treeBackend = procAvailable() ? "proc_stat_scan" : "none";
  }

  start(): this {
    if (this.timer === null) {
      this.sampleNow();
      this.timer = setInterval(() => this.sampleNow(), this.intervalMs);
    }
    return this;
  }

  sampleNow(): void {
    this.sampleCount += 1;
    if (this.diskPath !== null) {
      const observed = disk(this.diskPath);
      if ("free" in observed) this.minimumFreeBytes = Math.min(this.minimumFreeBytes ?? Number.POSITIVE_INFINITY, observed.free);
      else this.diskError = observed.error;
    }
    if (this.treeBackend === "none") return;
    let rss = 0;
    let readable = 0;
    for (const member of this.tree()) {
      const key = `${member.pid}:${member.startTime}`;
      const prior = this.cpuByProcess.get(key);
      this.cpuByProcess.set(key, {
        user: Math.max(prior?.user ?? 0, member.userTimeTicks),
        system: Math.max(prior?.system ?? 0, member.systemTimeTicks),
      });
      const memory = readMemoryStatus(member.pid);
      if (memory !== null) {
        rss += memory.residentBytes;
        readable += 1;
        if (memory.highWaterBytes !== null) this.peakSingleHighWaterBytes = Math.max(this.peakSingleHighWaterBytes, memory.highWaterBytes);
      }
    }
    if (readable > 0) {
      this.rssSampleCount += 1;
      this.peakRssBytes = Math.max(this.peakRssBytes, rss);
    }
  }

  stop(final: ResourceSamplerStop = {}): ResourceSummary {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
    const measurements: ResourceMeasurement[] = [
      {
        name: runtimeMeasurementNames.wallTimeNs,
        value: final.wallTimeNs ?? Number(process.hrtime.bigint() - this.startedNs),
        unit: "ns",
        aggregation: "total",
        source: "monotonic_clock",
      },
    ];
    const unavailable: UnavailableMetric[] = [];
    const notes: string[] = [];
    for (const outcome of [this.cpuMeasurements(final.childUsage ?? null), [this.rssMeasurement()], [this.diskMeasurement()]].flat()) {
      if ("value" in outcome) measurements.push(outcome);
      else unavailable.push(outcome);
    }
    notes.push(
      "CPU times are lower bounds: the larger of the reaped root's rusage (the root plus descendants it waited for) and the sum of the last /proc times seen for each tracked process; CPU of descendants that outlived polling and were never waited for by the root is only counted up to the last sample.",
      `Peak RSS is an observed lower bound: the larger of the largest sum of VmRSS over the live tree (sampled every ${this.intervalMs} ms) and the largest VmHWM of any single sampled process; tree peaks between samples and processes that lived less than one interval can be missed.`,
    );
    return {
      interval_ms: this.intervalMs,
      sample_count: this.sampleCount,
      tree_backend: this.treeBackend,
      measurements,
      unavailable,
      notes,
    };
  }

  /** User and system CPU: the larger of the reaped root's rusage and the polled /proc times. */
  private cpuMeasurements(usage: ChildResourceUsage | null): Array<ResourceMeasurement | UnavailableMetric> {
    const polled = { user: 0, system: 0 };
    for (const cpu of this.cpuByProcess.values()) {
      polled.user += cpu.user * nanosecondsPerClockTick;
      polled.system += cpu.system * nanosecondsPerClockTick;
    }
    const havePolledCpu = this.cpuByProcess.size > 0;
    const cpu = (name: RuntimeMeasurementName, polledNs: number, usageNs: number | undefined): ResourceMeasurement | UnavailableMetric => {
      if (!havePolledCpu && usageNs === undefined) {
        return {
          name,
          reason:
            this.treeBackend === "none"
              ? "no process-tree sampling on this platform and no exit resource usage"
              : "the process exited before the first sample and no exit resource usage was available",
        };
      }
      const fromUsage = usageNs ?? -1;
      if (fromUsage >= polledNs) return { name, value: fromUsage, unit: "ns", aggregation: "total", source: "wait4_rusage" };
      return { name, value: polledNs, unit: "ns", aggregation: "total", source: "proc_stat_polling" };
    };
    return [
      cpu(runtimeMeasurementNames.cpuUserNs, polled.user, usage?.userCpuNs),
      cpu(runtimeMeasurementNames.cpuSystemNs, polled.system, usage?.systemCpuNs),
    ];
  }

  private rssMeasurement(): ResourceMeasurement | UnavailableMetric {
    const name = runtimeMeasurementNames.peakRssBytes;
    if (this.rssSampleCount === 0) {
      return {
        name,
        reason:
          this.treeBackend === "none"
            ? "no process-tree memory sampling on this platform"
            : "the process tree exited before the first memory sample",
      };
    }
    if (this.peakSingleHighWaterBytes > this.peakRssBytes) {
      return {
        name,
        value: this.peakSingleHighWaterBytes,
        unit: "bytes",
        aggregation: "max",
        source: "proc_status_single_process_high_water",
      };
    }
    return { name, value: this.peakRssBytes, unit: "bytes", aggregation: "max", source: "proc_status_tree_sum" };
  }

  private diskMeasurement(): ResourceMeasurement | UnavailableMetric {
    const name = runtimeMeasurementNames.minimumFreeBytes;
    if (this.diskPath === null) return { name, reason: "no disk path was configured for sampling" };
    if (this.minimumFreeBytes === null) return { name, reason: `statfs failed: ${this.diskError ?? "no sample taken"}` };
    return { name, value: this.minimumFreeBytes, unit: "bytes", aggregation: "min", source: "statfs" };
  }
}

export function startResourceSampler(options: ResourceSamplerOptions): ResourceSampler {
  return new ResourceSampler(options).start();
}

/** The summary as `measurements` evidence rows; unavailable metrics produce no row. */
export function resourceMeasurementRows(summary: ResourceSummary, phase: string | null = "run"): MeasurementRow[] {
  return summary.measurements.map((measurement) => ({
    name: measurement.name,
    value: measurement.value,
    unit: measurement.unit,
    aggregation: measurement.aggregation,
    is_warmup: false,
    worker: null,
    run_index: null,
    value_index: null,
    phase,
    dimensions: JSON.stringify({ source: measurement.source }),
  }));
}

export function measurementValue(summary: ResourceSummary, name: RuntimeMeasurementName): number | null {
  return summary.measurements.find((measurement) => measurement.name === name)?.value ?? null;
}
