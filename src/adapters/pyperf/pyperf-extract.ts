/**
 * pyperf JSON (one benchmark or a suite, plain or gzip) → measurements: every warm-up and every
 * value, seconds kept at full precision as nanoseconds. The text is inflated as a stream with an
 * output bound, and values no benchmark can produce (negative times or sizes, beyond 2^53) are
 * left out and counted in a limitation rather than stored as numbers.
 */
import { statSync } from "node:fs";
import { artifactParseFailed, extractionBoundExceeded, type FlameoxError } from "../../domain/errors.ts";
import type { EvidenceSink } from "../../domain/evidence.ts";
import { DecompressedTooLarge, DecompressionFailed, readAllBytes } from "../formats/byte-source.ts";

/** pyperf files hold kilobytes to a few megabytes of JSON; a larger text (once inflated) is refused. */
export const maxPyperfTextBytes = 64 << 20;

/** Beyond 2^53 ns (104 days), bytes (8 PiB) or counts a value is not a measurement of one run. */
const largestPlausible = Number.MAX_SAFE_INTEGER;

function parseFailed(message: string): FlameoxError {
  return artifactParseFailed(`pyperf JSON: ${message}`, {
    remediation: ["Provide a file written by pyperf (`pyperf command|timeit … -o file.json`), complete and uncompressed or gzip."],
  });
}

type Metadata = Record<string, unknown>;
type PyperfRun = { metadata?: Metadata; warmups?: unknown; values?: unknown };
type PyperfBenchmark = { metadata?: Metadata; runs?: unknown };
type PyperfDocument = { version: string; metadata?: Metadata; benchmarks: PyperfBenchmark[] };

export type PyperfSummary = {
  benchmarks: { name: string; unit: string; values: number; warmups: number; runs: number }[];
  valueCount: number;
  warmupCount: number;
  limitations: string[];
};

function finite(value: unknown): value is number {
  return typeof value === "number" && Number.isFinite(value);
}

async function readPyperfText(path: string): Promise<string> {
  let size: number;
  try {
    size = statSync(path).size;
  } catch {
    throw parseFailed("the file cannot be read");
  }
  const refuse = () =>
    extractionBoundExceeded(`pyperf JSON: the text exceeds ${maxPyperfTextBytes} bytes; pyperf writes kilobytes to megabytes.`, {
      details: { max_text_bytes: maxPyperfTextBytes },
      remediation: ["Check that the file is a pyperf result (a compressed file that inflates without bound is refused)."],
    });
  if (size > maxPyperfTextBytes) throw refuse();
  try {
    return new TextDecoder().decode(await readAllBytes(path, { maxInflatedBytes: maxPyperfTextBytes }));
  } catch (error) {
    if (error instanceof DecompressedTooLarge) throw refuse();
    if (error instanceof DecompressionFailed) throw parseFailed("gzip data is corrupt or cut off");
    throw parseFailed("the file cannot be read");
  }
}

function parseDocument(text: string): PyperfDocument {
  let document: { version?: unknown; metadata?: Metadata; benchmarks?: unknown };
  try {
    document = JSON.parse(text);
  } catch {
    throw parseFailed("not JSON (truncated?)");
  }
  if (typeof document !== "object" || document === null || typeof document.version !== "string" || !document.version.startsWith("1.")) {
    throw parseFailed(
      `unsupported or missing format version ${JSON.stringify((document as { version?: unknown })?.version)?.slice(0, 40)}`,
    );
  }
  if (!Array.isArray(document.benchmarks) || document.benchmarks.length === 0) throw parseFailed("no benchmarks");
  return document as PyperfDocument;
}

/** Converts values to flameox units and keeps those a benchmark can produce; counts the rest by reason. */
class ValueScreen {
  negative = 0;
  absurd = 0;
  readonly affected = new Set<string>();

  accept(value: number, unit: string, benchmark: string): { value: number; unit: string } | null {
    const converted = convert(value, unit);
    if (converted.value < 0 && (unit === "second" || unit === "byte")) {
      this.negative++;
      this.affected.add(benchmark);
      return null;
    }
    if (Math.abs(converted.value) > largestPlausible) {
      this.absurd++;
      this.affected.add(benchmark);
      return null;
    }
    return converted;
  }

  limitations(): string[] {
    if (this.negative + this.absurd === 0) return [];
    const reasons = [
      this.negative > 0 ? `${this.negative} negative (a time or size cannot be)` : null,
      this.absurd > 0 ? `${this.absurd} beyond 2^53 ns, bytes or counts` : null,
    ].filter((reason) => reason !== null);
    const names = [...this.affected].slice(0, 5).join(", ");
    return [`${this.negative + this.absurd} pyperf value(s) were left out: ${reasons.join(", ")} (benchmark ${names}).`];
  }
}

/** Seconds become nanoseconds at full precision (no rounding: sub-nanosecond means of many loops are real). */
function convert(value: number, unit: string): { value: number; unit: string } {
  if (unit === "second") return { value: value * 1e9, unit: "ns" };
  if (unit === "byte") return { value, unit: "bytes" };
  if (unit === "integer") return { value, unit: "count" };
  return { value, unit };
}

type RunContext = { name: string; unit: string; runIndex: number; metadata: Metadata; sink: EvidenceSink; screen: ValueScreen };

/** One timed value, a warm-up or a steady-state one, as a measurement; false when the screen leaves it out. */
function emitSample(
  context: RunContext,
  sample: { value: number; valueIndex: number; warmup: boolean; dimensions: Record<string, unknown> },
): boolean {
  const converted = context.screen.accept(sample.value, context.unit, context.name);
  if (!converted) return false;
  context.sink.measurement({
    name: `pyperf.${context.name}`,
    value: converted.value,
    unit: converted.unit,
    aggregation: "sample",
    is_warmup: sample.warmup,
    worker: null,
    run_index: context.runIndex,
    value_index: sample.valueIndex,
    phase: sample.warmup ? "warmup" : "steady_state",
    dimensions: JSON.stringify(sample.dimensions),
  });
  return true;
}

function emitWarmups(run: PyperfRun, context: RunContext, calibration: boolean): number {
  const { name, unit, runIndex } = context;
  const warmupList = run?.warmups === undefined ? [] : run.warmups;
  if (!Array.isArray(warmupList)) throw parseFailed(`run ${runIndex} of '${name}' has malformed warmups`);
  let emitted = 0;
  warmupList.forEach((entry, valueIndex) => {
    if (!Array.isArray(entry) || entry.length !== 2 || !finite(entry[0]) || !finite(entry[1]))
      throw parseFailed(`run ${runIndex} of '${name}': warm-up ${valueIndex} is not [loops, value]`);
    const dimensions = { benchmark: name, pyperf_unit: unit, loops: entry[0], calibration };
    if (emitSample(context, { value: entry[1], valueIndex, warmup: true, dimensions })) emitted++;
  });
  return emitted;
}

function emitValues(run: PyperfRun, context: RunContext): number {
  const { name, unit, runIndex, metadata } = context;
  const valueList = run?.values === undefined ? [] : run.values;
  if (!Array.isArray(valueList)) throw parseFailed(`run ${runIndex} of '${name}' has malformed values`);
  const loops = finite(metadata.loops) ? metadata.loops : null;
  const innerLoops = finite(metadata.inner_loops) ? metadata.inner_loops : null;
  let emitted = 0;
  valueList.forEach((value, valueIndex) => {
    if (!finite(value)) throw parseFailed(`run ${runIndex} of '${name}': value ${valueIndex} is not a number`);
    const dimensions = { benchmark: name, pyperf_unit: unit, loops, inner_loops: innerLoops };
    if (emitSample(context, { value, valueIndex, warmup: false, dimensions })) emitted++;
  });
  return emitted;
}

/** pyperf command's peak RSS of the run's process, when it recorded one. */
function emitMaxRss(context: RunContext, calibration: boolean): void {
  const { name, unit, runIndex, metadata, sink, screen } = context;
  if (!finite(metadata.command_max_rss)) return;
  const converted = screen.accept(metadata.command_max_rss, "byte", name);
  if (!converted) return;
  sink.measurement({
    name: `pyperf.${name}.command_max_rss`,
    value: Math.round(converted.value),
    unit: "bytes",
    aggregation: "peak",
    is_warmup: calibration,
    worker: null,
    run_index: runIndex,
    value_index: null,
    phase: null,
    dimensions: JSON.stringify({ benchmark: name, pyperf_unit: unit }),
  });
}

function extractBenchmark(
  benchmark: PyperfBenchmark,
  benchmarkIndex: number,
  common: Metadata,
  output: { sink: EvidenceSink; screen: ValueScreen },
): PyperfSummary["benchmarks"][number] {
  const metadata = { ...common, ...(benchmark?.metadata ?? {}) };
  const name = typeof metadata.name === "string" ? metadata.name : `benchmark_${benchmarkIndex}`;
  const unit = typeof metadata.unit === "string" ? metadata.unit : "second";
  if (!Array.isArray(benchmark?.runs)) throw parseFailed(`benchmark '${name}' has no runs`);
  let values = 0;
  let warmups = 0;
  (benchmark.runs as PyperfRun[]).forEach((run, runIndex) => {
    const context: RunContext = { name, unit, runIndex, metadata: { ...metadata, ...(run?.metadata ?? {}) }, ...output };
    const calibration = !Array.isArray(run?.values) || run.values.length === 0;
    warmups += emitWarmups(run, context, calibration);
    values += emitValues(run, context);
    emitMaxRss(context, calibration);
  });
  return { name, unit, values, warmups, runs: (benchmark.runs as unknown[]).length };
}

/** Any pyperf JSON (one benchmark or a suite): every warm-up and every value becomes a measurement. */
export async function extractPyperf(path: string, sink: EvidenceSink): Promise<PyperfSummary> {
  const document = parseDocument(await readPyperfText(path));
  const common = (document.metadata ?? {}) as Metadata;
  const screen = new ValueScreen();
  const benchmarks = document.benchmarks.map((benchmark, index) => extractBenchmark(benchmark, index, common, { sink, screen }));
  const valueCount = benchmarks.reduce((sum, entry) => sum + entry.values, 0);
  const warmupCount = benchmarks.reduce((sum, entry) => sum + entry.warmups, 0);
  const limitations = screen.limitations();
  if (valueCount === 0)
    limitations.push(
      screen.negative + screen.absurd > 0
        ? "No measured value remained once impossible values were left out."
        : "The file holds only warm-ups/calibration, no measured values.",
    );
  return { benchmarks, valueCount, warmupCount, limitations };
}
