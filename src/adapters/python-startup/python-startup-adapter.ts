import { readFileSync } from "node:fs";
import { basename, join } from "node:path";
import { sha256Hex } from "../../domain/canonical-json.ts";
import { artifactParseFailed, type FlameoxError, planRefused } from "../../domain/errors.ts";
import type { EvidenceSink, MeasurementRow } from "../../domain/evidence.ts";
import collectorSource from "./flameox_python_startup.py" with { type: "text" };
import type { PythonWorkloadInvocation, CaptureCommand, CommandRunner, ProbeResult } from "../capture-adapter.ts";
import { writeCollectorFiles } from "../adapter-support.ts";

export const pythonStartupOutputFileName = "python-startup.json";
export const pythonStartupExtractorVersion = "flameox.python-startup@1";

export type PythonStartupCollectorFiles = { directory: string; collector: string };

export function writePythonStartupCollectors(baseDirectory: string): PythonStartupCollectorFiles {
  const directory = join(baseDirectory, `python-startup-${sha256Hex(collectorSource).slice(0, 16)}`);
  writeCollectorFiles(directory, { "flameox_python_startup.py": collectorSource });
  return { directory, collector: join(directory, "flameox_python_startup.py") };
}

export function pythonStartupCaptureCommand(input: {
  workload: PythonWorkloadInvocation;
  artifactDirectory: string;
  collectors: PythonStartupCollectorFiles;
  samples?: number;
}): CaptureCommand {
  const { workload } = input;
  if (!basename(workload.argv[0] ?? "").startsWith("python") || workload.argv.length < 2) {
    throw planRefused("capture", "Python startup samples a `python …` command line (script, -m module or -c code).", {
      remediation: ["Declare the workload as `python <script>`, `python -m <module>` or `python -c 'import <module>'`."],
    });
  }
  const samples = input.samples ?? 5;
  if (!Number.isInteger(samples) || samples < 1 || samples > 1000) {
    throw planRefused("capture", `samples must be 1..1000, got ${samples}.`, { remediation: ["Choose 1..1000 samples."] });
  }
  const output = join(input.artifactDirectory, pythonStartupOutputFileName);
  return {
    argv: [workload.python, input.collectors.collector, "--output", output, "--samples", String(samples), "--", ...workload.argv],
    cwd: workload.cwd,
    environment: {},
    artifacts: [{ name: pythonStartupOutputFileName, path: output, role: "primary", mediaType: "application/json" }],
  };
}

/** Bundled collector: it needs only the interpreter itself, so the probe checks that it starts. */
export async function probePythonStartup(python: string, run: CommandRunner): Promise<ProbeResult> {
  try {
    const result = await run([python, "-I", "-c", "import platform; print(platform.python_version())"], { timeoutMs: 15_000 });
    if (result.exitCode === 0) {
      return {
        status: "available",
        version: `python ${result.stdout.trim()}`,
        remediation: [],
        limitations: ["File-system caches are not dropped between samples."],
        details: { python },
      };
    }
    return {
      status: "unavailable",
      version: null,
      remediation: [`The interpreter ${python} exited ${result.exitCode}; fix the workload's python path.`],
      limitations: [],
      details: { stderr: result.stderr.slice(-500) },
    };
  } catch (error) {
    return {
      status: "unavailable",
      version: null,
      remediation: [`The interpreter ${python} could not be started (${String(error)}); fix the workload's python path.`],
      limitations: [],
      details: {},
    };
  }
}

export type ImportTimeModule = { module: string; package: string; selfUs: number; cumulativeUs: number };
export type ImportTimePackage = { package: string; moduleCount: number; selfUs: number; maxCumulativeUs: number };
export type ImportTimeParse = { modules: ImportTimeModule[]; packages: ImportTimePackage[]; unparsedLines: number };

const importLine = /^import time:\s*(\d+)\s*\|\s*(\d+)\s*\|(\s*)(\S.*?)\s*$/;

/**
 * `-X importtime` lines: "import time: self | cumulative | module" (module indented by nesting).
 * Packages sum self time (exclusive) and keep the largest cumulative, since cumulatives nest.
 */
export function parseImportTime(lines: string[]): ImportTimeParse {
  const byModule = new Map<string, ImportTimeModule>();
  let unparsed = 0;
  for (const line of lines) {
    if (!line.startsWith("import time:")) continue;
    if (/self \[us\]/.test(line)) continue;
    const match = importLine.exec(line);
    if (!match) {
      unparsed += 1;
      continue;
    }
    const module = match[4]!;
    const packageName = module.replace(/^\.+/, "").split(".")[0] ?? module;
    const existing = byModule.get(module);
    const selfUs = Number(match[1]);
    const cumulativeUs = Number(match[2]);
    if (existing) {
      existing.selfUs += selfUs;
      existing.cumulativeUs = Math.max(existing.cumulativeUs, cumulativeUs);
    } else {
      byModule.set(module, { module, package: packageName, selfUs, cumulativeUs });
    }
  }
  const packages = new Map<string, ImportTimePackage>();
  for (const module of byModule.values()) {
    const entry = packages.get(module.package) ?? { package: module.package, moduleCount: 0, selfUs: 0, maxCumulativeUs: 0 };
    entry.moduleCount += 1;
    entry.selfUs += module.selfUs;
    entry.maxCumulativeUs = Math.max(entry.maxCumulativeUs, module.cumulativeUs);
    packages.set(module.package, entry);
  }
  return {
    modules: [...byModule.values()],
    packages: [...packages.values()].sort((left, right) => right.selfUs - left.selfUs || left.package.localeCompare(right.package)),
    unparsedLines: unparsed,
  };
}

function parseFailed(message: string): FlameoxError {
  return artifactParseFailed(`python startup artifact: ${message}`, {
    remediation: ["Capture again with the python-startup adapter; the file is written by flameox's own collector."],
  });
}

type Sample = {
  index: number;
  cache_semantics: string;
  duration_ns: number;
  peak_rss_bytes: number | null;
  peak_rss_backend: string | null;
  exit_code: number;
};

export type PythonStartupSummary = {
  samples: { index: number; durationNs: number; peakRssBytes: number | null; exitCode: number }[];
  packages: ImportTimePackage[];
  topPackage: string | null;
  unparsedLines: number;
  limitations: string[];
};

const nonNegativeInteger = (value: unknown) => typeof value === "number" && Number.isInteger(value) && value >= 0;

type StartupDocument = {
  samples: Sample[];
  lines: string[];
  linesTruncated: boolean;
};

/** The collector's JSON, checked: a schema, timed samples, and the -X importtime lines. */
function readStartupDocument(path: string): StartupDocument {
  let document: {
    schema?: unknown;
    samples?: unknown;
    import_trace?: { importtime_lines?: unknown; exit_code?: unknown; lines_truncated?: unknown };
  };
  try {
    document = JSON.parse(readFileSync(path, "utf8"));
  } catch (error) {
    throw parseFailed(`not readable JSON (${String(error).slice(0, 200)})`);
  }
  if (document?.schema !== "flameox.python-startup.v1") throw parseFailed("schema is not flameox.python-startup.v1");
  if (!Array.isArray(document.samples) || document.samples.length === 0) throw parseFailed("no samples");
  const samples = document.samples as Sample[];
  for (const sample of samples) {
    if (
      !nonNegativeInteger(sample?.index) ||
      !nonNegativeInteger(sample.duration_ns) ||
      (sample.peak_rss_bytes !== null && !nonNegativeInteger(sample.peak_rss_bytes))
    ) {
      throw parseFailed("a sample lacks index/duration_ns or has a bad peak_rss_bytes");
    }
  }
  const lines = document.import_trace?.importtime_lines;
  if (!Array.isArray(lines) || !lines.every((line) => typeof line === "string"))
    throw parseFailed("import_trace.importtime_lines is missing");
  return { samples, lines: lines as string[], linesTruncated: document.import_trace?.lines_truncated === true };
}

function measurement(sink: EvidenceSink, row: Omit<MeasurementRow, "is_warmup" | "worker" | "run_index">): void {
  sink.measurement({ ...row, is_warmup: false, worker: null, run_index: null });
}

function emitSamples(sink: EvidenceSink, samples: Sample[]): void {
  for (const sample of samples) {
    const dimensions = JSON.stringify({ cache_semantics: sample.cache_semantics, exit_code: sample.exit_code });
    measurement(sink, {
      name: "startup.wall_ns",
      value: sample.duration_ns,
      unit: "ns",
      aggregation: "sample",
      value_index: sample.index,
      phase: "startup",
      dimensions,
    });
    if (sample.peak_rss_bytes === null) continue;
    measurement(sink, {
      name: "startup.peak_rss_bytes",
      value: sample.peak_rss_bytes,
      unit: "bytes",
      aggregation: "peak",
      value_index: sample.index,
      phase: "startup",
      dimensions: JSON.stringify({ rss_backend: sample.peak_rss_backend }),
    });
  }
}

function emitImports(sink: EvidenceSink, parsed: ReturnType<typeof parseImportTime>): void {
  parsed.modules.forEach((module, index) => {
    const dimensions = JSON.stringify({ module: module.module, package: module.package });
    measurement(sink, {
      name: "import.self_us",
      value: module.selfUs,
      unit: "us",
      aggregation: "sum",
      value_index: index,
      phase: "import",
      dimensions,
    });
    measurement(sink, {
      name: "import.cumulative_us",
      value: module.cumulativeUs,
      unit: "us",
      aggregation: "max",
      value_index: index,
      phase: "import",
      dimensions,
    });
  });
  for (const entry of parsed.packages) {
    measurement(sink, {
      name: "import.package_self_us",
      value: entry.selfUs,
      unit: "us",
      aggregation: "sum",
      value_index: null,
      phase: "import",
      dimensions: JSON.stringify({ package: entry.package, module_count: entry.moduleCount, max_cumulative_us: entry.maxCumulativeUs }),
    });
  }
}

export function extractPythonStartup(path: string, sink: EvidenceSink): PythonStartupSummary {
  const { samples, lines, linesTruncated } = readStartupDocument(path);
  emitSamples(sink, samples);
  const parsed = parseImportTime(lines);
  emitImports(sink, parsed);
  const limitations = [
    "Caches are not controlled: sample 0 may pay cold-cache costs the others do not.",
    "Import times come from one separate -X importtime run, not from the timed samples.",
  ];
  if (samples.some((sample) => sample.peak_rss_bytes === null)) limitations.push("Peak RSS was not observable for some samples.");
  if (parsed.unparsedLines > 0) limitations.push(`${parsed.unparsedLines} importtime line(s) could not be parsed.`);
  if (linesTruncated) limitations.push("The importtime trace was cut at the collector's line limit.");
  return {
    samples: samples.map((sample) => ({
      index: sample.index,
      durationNs: sample.duration_ns,
      peakRssBytes: sample.peak_rss_bytes,
      exitCode: sample.exit_code,
    })),
    packages: parsed.packages,
    topPackage: parsed.packages[0]?.package ?? null,
    unparsedLines: parsed.unparsedLines,
    limitations,
  };
}
