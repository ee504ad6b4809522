import { sha256Hex } from "./canonical-json.ts";

/**
 * The normalized evidence model (docs/architecture.md). Extractors emit these rows into an `EvidenceSink`;
 * the store writes them as Parquet bundles. Field names are the Parquet column names.
 */
/**
 * What a stack's weight measures: time, samples, bytes allocated (memray: alive at the high-water
 * mark), or bytes still allocated when the program ended (memray's leaks). A ranking never mixes them.
 */
export type StackUnit = "ns" | "samples" | "bytes" | "retained_bytes";
export const stackUnitNames: readonly StackUnit[] = ["ns", "samples", "bytes", "retained_bytes"];

export type FrameRow = {
  frame_key: string;
  function: string;
  /** Project-relative when the file lies inside the project root, else as the producer wrote it. */
  file: string | null;
  line: number | null;
  module: string | null;
  language: string;
};

export type StackRow = {
  thread: string | null;
  process: string | null;
  /** Root first, leaf last. */
  frame_keys: string[];
  weight: number;
  unit: StackUnit;
  sample_count: number;
};

export type TraceEventRow = {
  event_id: number;
  parent_id: number | null;
  depth: number;
  name: string;
  category: string | null;
  ts_ns: number;
  dur_ns: number | null;
  pid: string | null;
  tid: string | null;
  /** Bounded JSON text of the event's args. */
  args: string | null;
  correlation: string | null;
  device: string | null;
  stream: string | null;
  phase: string;
};

export type MeasurementRow = {
  name: string;
  value: number;
  unit: string;
  aggregation: string | null;
  is_warmup: boolean;
  worker: string | null;
  run_index: number | null;
  value_index: number | null;
  phase: string | null;
  /** Bounded JSON text of extra dimensions (test id, benchmark name, package …). */
  dimensions: string | null;
};

/**
 * failure_report: one failure read from a log (a sanitizer report, a Python traceback) with its kind, message and frames.
 * statement: one executable line as coverage.py's report classifies it (value executed, missed or excluded);
 * branch_missed: a branch arc that never ran (lines "from->to").
 */
export type ObservationKind =
  | "line_hit"
  | "branch_arc"
  | "statement"
  | "branch_missed"
  | "annotation"
  | "configuration"
  | "test_outcome"
  | "failure_report";

export type ObservationRow = {
  kind: ObservationKind;
  name: string;
  file: string | null;
  lines: string | null;
  context: string | null;
  value: string | null;
};

export type EvidenceTable = "frames" | "stacks" | "trace_events" | "measurements" | "observations";

export interface EvidenceSink {
  frame(row: FrameRow): void;
  stack(row: StackRow): void;
  traceEvent(row: TraceEventRow): void;
  measurement(row: MeasurementRow): void;
  observation(row: ObservationRow): void;
}

export type FrameIdentity = {
  language: string;
  function: string;
  file: string | null;
  line: number | null;
};

/**
 * Frame keys are stable across runs and formats: the same function at the same project-relative
 * place gets the same key whether py-spy, speedscope or collapsed stacks produced it.
 */
export function frameKey(identity: FrameIdentity): string {
  const text = `${identity.language}\u0000${identity.function}\u0000${identity.file ?? ""}\u0000${identity.line ?? ""}`;
  return `f_${sha256Hex(text).slice(0, 24)}`;
}

/** Makes a path project-relative when it lies under the root; other paths are kept as written. */
export function projectRelativePath(path: string | null | undefined, projectRoot: string | null): string | null {
  if (!path) return null;
  const normalized = path.replaceAll("\\", "/");
  if (projectRoot) {
    const root = projectRoot.replaceAll("\\", "/").replace(/\/+$/, "");
    if (normalized.startsWith(`${root}/`)) return normalized.slice(root.length + 1);
  }
  return normalized;
}

/** A sink that keeps everything in memory; for tests and small artifacts. */
export class MemoryEvidenceSink implements EvidenceSink {
  readonly frames = new Map<string, FrameRow>();
  readonly stacks: StackRow[] = [];
  readonly traceEvents: TraceEventRow[] = [];
  readonly measurements: MeasurementRow[] = [];
  readonly observations: ObservationRow[] = [];
  frame(row: FrameRow): void {
    if (!this.frames.has(row.frame_key)) this.frames.set(row.frame_key, row);
  }
  stack(row: StackRow): void {
    this.stacks.push(row);
  }
  traceEvent(row: TraceEventRow): void {
    this.traceEvents.push(row);
  }
  measurement(row: MeasurementRow): void {
    this.measurements.push(row);
  }
  observation(row: ObservationRow): void {
    this.observations.push(row);
  }
}
