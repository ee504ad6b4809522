import { readFileSync } from "node:fs";
import { gunzipSync } from "node:zlib";
import { join } from "node:path";
import { artifactParseFailed, FlameoxError, planRefused } from "../../domain/errors.ts";
import type { EvidenceSink } from "../../domain/evidence.ts";
import type { PythonWorkloadInvocation, CaptureCommand, CommandRunner, ProbeResult } from "../capture-adapter.ts";
import { probePythonPackage } from "../adapter-support.ts";
export type {
  PythonWorkloadInvocation,
  CaptureArtifact,
  CaptureCommand,
  CommandResult,
  CommandRunner,
  ProbeResult,
} from "../capture-adapter.ts";

export const pyperfRequirement = "pyperf==2.11.0";
export const pyperfOutputFileName = "benchmark.json";
export const pyperfExtractorVersion = "flameox.pyperf@1";

export type PyperfOptions = { processes?: number; values?: number; warmups?: number; loops?: number | null; name?: string };

/**
 * `pyperf command` times the whole workload command as a subprocess, so any workload works;
 * pyperf itself runs in the workload's interpreter (or the tools venv when the workload is not Python).
 */
export function pyperfCaptureCommand(input: {
  workload: PythonWorkloadInvocation;
  artifactDirectory: string;
  options?: PyperfOptions;
}): CaptureCommand {
  const options = { processes: 3, values: 3, warmups: 1, loops: null, name: "workload", ...input.options };
  for (const [key, value] of Object.entries({ processes: options.processes, values: options.values, warmups: options.warmups })) {
    if (!Number.isInteger(value) || value < (key === "warmups" ? 0 : 1) || value > 10_000) {
      throw planRefused("capture", `pyperf ${key} must be an integer in range, got ${value}.`, {
        remediation: ["Use small positive integers."],
      });
    }
  }
  if (!/^[A-Za-z0-9][A-Za-z0-9._:/-]{0,199}$/.test(options.name)) {
    throw planRefused("capture", `Benchmark name '${options.name}' is not allowed.`, { remediation: ["Use letters, digits and ._:/-."] });
  }
  const output = join(input.artifactDirectory, pyperfOutputFileName);
  const argv = [
    input.workload.python,
    "-m",
    "pyperf",
    "command",
    "--quiet",
    "--output",
    output,
    "--processes",
    String(options.processes),
    "--values",
    String(options.values),
    "--warmups",
    String(options.warmups),
    "--name",
    options.name,
  ];
  if (options.loops !== null && options.loops !== undefined) argv.push("--loops", String(options.loops));
  return {
    argv: [...argv, "--", ...input.workload.argv],
    cwd: input.workload.cwd,
    environment: {},
    artifacts: [{ name: pyperfOutputFileName, path: output, role: "primary", mediaType: "application/json" }],
  };
}

export async function probePyperf(python: string, run: CommandRunner): Promise<ProbeResult> {
  return probePythonPackage(python, run, {
    script: "import pyperf, importlib.metadata as m; print(m.version('pyperf'))",
    timeoutMs: 15_000,
    requirement: pyperfRequirement,
    installAdvice: "Install pyperf into the interpreter that runs it",
    recognize: (version) => (version ? { version: `pyperf ${version}` } : null),
  });
}

function parseFailed(message: string): FlameoxError {
  return artifactParseFailed(`pyperf JSON: ${message}`, {
    remediation: ["Provide a file written by pyperf (`pyperf command|timeit … -o file.json`), complete and uncompressed or gzip."],
  });
}

type Metadata = Record<string, unknown>;
type PyperfRun = { metadata?: Metadata; warmups?: unknown; values?: unknown };
type PyperfBenchmark = { metadata?: Metadata; runs?: unknown };

export type PyperfSummary = {
  benchmarks: { name: string; unit: string; values: number; warmups: number; runs: number }[];
  valueCount: number;
  warmupCount: number;
  limitations: string[];
};

function convert(value: number, unit: string): { value: number; unit: string } {
  if (unit === "second") return { value: Math.round(value * 1e9), unit: "ns" };
  if (unit === "byte") return { value: Math.round(value), unit: "bytes" };
  if (unit === "integer") return { value: Math.round(value), unit: "count" };
  return { value, unit };
}

function finite(value: unknown): value is number {
  return typeof value === "number" && Number.isFinite(value);
}

/** A gzip pyperf file inflates at most this far (a 1 MB bomb reached 2.2 GB of memory unbounded). */
const maxPyperfInflatedBytes = 64 << 20;

/** Any pyperf JSON (one benchmark or a suite): every warm-up and every value becomes a measurement. */
export function extractPyperf(path: string, sink: EvidenceSink): PyperfSummary {
  let bytes: Uint8Array;
  try {
    bytes = readFileSync(path);
  } catch (error) {
    throw parseFailed(`cannot read ${path}: ${String(error)}`);
  }
  let text: string;
  try {
    text =
      bytes[0] === 0x1f && bytes[1] === 0x8b
        ? new TextDecoder().decode(gunzipSync(bytes, { maxOutputLength: maxPyperfInflatedBytes }))
        : new TextDecoder().decode(bytes);
  } catch (error) {
    if ((error as { code?: string }).code === "ERR_BUFFER_TOO_LARGE") {
      throw new FlameoxError({
        code: "ARTIFACT_TOO_LARGE",
        message: `pyperf JSON: the gzip data inflates beyond ${maxPyperfInflatedBytes} bytes.`,
        details: { limit_bytes: maxPyperfInflatedBytes },
        remediation: ["A pyperf result is a few MB at most: check that the file is what it claims to be."],
      });
    }
    throw parseFailed("gzip data is corrupt");
  }
  let document: { version?: unknown; metadata?: Metadata; benchmarks?: unknown };
  try {
    document = JSON.parse(text);
  } catch {
    throw parseFailed("not JSON (truncated?)");
  }
  if (typeof document !== "object" || document === null || typeof document.version !== "string" || !document.version.startsWith("1.")) {
    throw parseFailed(`unsupported or missing format version ${JSON.stringify((document as { version?: unknown })?.version)}`);
  }
  if (!Array.isArray(document.benchmarks) || document.benchmarks.length === 0) throw parseFailed("no benchmarks");
  const common = (document.metadata ?? {}) as Metadata;
  const summary: PyperfSummary = { benchmarks: [], valueCount: 0, warmupCount: 0, limitations: [] };
  (document.benchmarks as PyperfBenchmark[]).forEach((benchmark, benchmarkIndex) => {
    const metadata = { ...common, ...(benchmark?.metadata ?? {}) };
    const name = typeof metadata.name === "string" ? metadata.name : `benchmark_${benchmarkIndex}`;
    const unit = typeof metadata.unit === "string" ? metadata.unit : "second";
    if (!Array.isArray(benchmark?.runs)) throw parseFailed(`benchmark '${name}' has no runs`);
    let values = 0;
    let warmups = 0;
    (benchmark.runs as PyperfRun[]).forEach((run, runIndex) => {
      const runMetadata = { ...metadata, ...(run?.metadata ?? {}) };
      const loops = finite(runMetadata.loops) ? runMetadata.loops : null;
      const calibration = !Array.isArray(run?.values) || run.values.length === 0;
      const dimensions = (extra: Record<string, unknown>) => JSON.stringify({ benchmark: name, pyperf_unit: unit, ...extra });
      const warmupList = run?.warmups === undefined ? [] : run.warmups;
      if (!Array.isArray(warmupList)) throw parseFailed(`run ${runIndex} of '${name}' has malformed warmups`);
      warmupList.forEach((entry, valueIndex) => {
        if (!Array.isArray(entry) || entry.length !== 2 || !finite(entry[0]) || !finite(entry[1]))
          throw parseFailed(`run ${runIndex} of '${name}': warm-up ${valueIndex} is not [loops, value]`);
        const converted = convert(entry[1], unit);
        sink.measurement({
          name: `pyperf.${name}`,
          value: converted.value,
          unit: converted.unit,
          aggregation: "sample",
          is_warmup: true,
          worker: null,
          run_index: runIndex,
          value_index: valueIndex,
          phase: "warmup",
          dimensions: dimensions({ loops: entry[0], calibration }),
        });
        warmups += 1;
      });
      const valueList = run?.values === undefined ? [] : run.values;
      if (!Array.isArray(valueList)) throw parseFailed(`run ${runIndex} of '${name}' has malformed values`);
      valueList.forEach((value, valueIndex) => {
        if (!finite(value)) throw parseFailed(`run ${runIndex} of '${name}': value ${valueIndex} is not a number`);
        const converted = convert(value, unit);
        sink.measurement({
          name: `pyperf.${name}`,
          value: converted.value,
          unit: converted.unit,
          aggregation: "sample",
          is_warmup: false,
          worker: null,
          run_index: runIndex,
          value_index: valueIndex,
          phase: "steady_state",
          dimensions: dimensions({ loops, inner_loops: finite(runMetadata.inner_loops) ? runMetadata.inner_loops : null }),
        });
        values += 1;
      });
      if (finite(runMetadata.command_max_rss)) {
        sink.measurement({
          name: `pyperf.${name}.command_max_rss`,
          value: Math.round(runMetadata.command_max_rss),
          unit: "bytes",
          aggregation: "peak",
          is_warmup: calibration,
          worker: null,
          run_index: runIndex,
          value_index: null,
          phase: null,
          dimensions: dimensions({}),
        });
      }
    });
    summary.benchmarks.push({ name, unit, values, warmups, runs: (benchmark.runs as unknown[]).length });
    summary.valueCount += values;
    summary.warmupCount += warmups;
  });
  if (summary.valueCount === 0) summary.limitations.push("The file holds only warm-ups/calibration, no measured values.");
  return summary;
}
