import { existsSync, readFileSync, rmSync } from "node:fs";
import { basename, join } from "node:path";
import { sha256Hex } from "../../domain/canonical-json.ts";
import { artifactParseFailed, capabilityUnavailable, type FlameoxError, planRefused } from "../../domain/errors.ts";
import { frameKey, projectRelativePath, type EvidenceSink } from "../../domain/evidence.ts";
import exporterSource from "./flameox_memray_export.py" with { type: "text" };
import type { PythonWorkloadInvocation, CaptureCommand, CommandRunner, ProbeResult } from "../capture-adapter.ts";
import { probePythonPackage, writeCollectorFiles } from "../adapter-support.ts";

export const memrayRequirement = "memray==1.20.0";
export const memrayOutputFileName = "memory.bin";
export const memrayExtractorVersion = "flameox.memray@1";

function pythonTarget(argv: string[]): string[] {
  const rest = argv.slice(1);
  if (!basename(argv[0] ?? "").startsWith("python") || rest.length === 0 || rest[0] === "-c" || (rest[0] === "-m" && rest.length < 2)) {
    throw planRefused("capture", "memray runs a Python script or module (`python <script> …` / `python -m <module> …`).", {
      remediation: ["Declare the workload as `python <script> …` or `python -m <module> …`; inline -c code is not supported."],
    });
  }
  return rest;
}

export function memrayCaptureCommand(input: { workload: PythonWorkloadInvocation; artifactDirectory: string }): CaptureCommand {
  const target = pythonTarget(input.workload.argv);
  const output = join(input.artifactDirectory, memrayOutputFileName);
  return {
    // --force: a retried attempt in the same staging folder must not fail on the previous file.
    argv: [input.workload.python, "-m", "memray", "run", "--quiet", "--force", "--output", output, ...target],
    cwd: input.workload.cwd,
    environment: {},
    artifacts: [{ name: memrayOutputFileName, path: output, role: "primary", mediaType: "application/octet-stream" }],
  };
}

export async function probeMemray(python: string, run: CommandRunner): Promise<ProbeResult> {
  return probePythonPackage(python, run, {
    script: "import memray, importlib.metadata as m; print(m.version('memray'))",
    timeoutMs: 15_000,
    requirement: memrayRequirement,
    installAdvice: "Install memray into the workload's interpreter",
    recognize: (version) =>
      version
        ? { version: `memray ${version}`, limitations: ["Only the main process is tracked (no --follow-fork); no native frames."] }
        : null,
  });
}

export type MemrayCollectorFiles = { directory: string; exporter: string };

export function writeMemrayCollectors(baseDirectory: string): MemrayCollectorFiles {
  const directory = join(baseDirectory, `memray-${sha256Hex(exporterSource).slice(0, 16)}`);
  writeCollectorFiles(directory, { "flameox_memray_export.py": exporterSource });
  return { directory, exporter: join(directory, "flameox_memray_export.py") };
}

function parseFailed(message: string, details: Record<string, unknown> = {}): FlameoxError {
  return artifactParseFailed(`memray capture: ${message}`, {
    details,
    remediation: ["Capture again with the memray adapter and read it with the same memray version that wrote it."],
  });
}

type ExportedFrame = { function: string; file: string; line: number | null };
type ExportedRecord = {
  size: number;
  n_allocations: number;
  tid: number;
  thread_name: string;
  allocator: string;
  frames_leaf_first: ExportedFrame[];
};
export type MemrayExport = {
  schema: "flameox.memray-export.v1";
  memray_version: string | null;
  metadata: { peak_memory: number; total_allocations: number; has_native_traces: boolean; [key: string]: unknown };
  total_allocated_bytes: number;
  total_allocation_count: number;
  high_watermark: ExportedRecord[];
  leaked: ExportedRecord[];
};

export type MemraySummary = {
  peakBytes: number;
  totalAllocatedBytes: number;
  allocationCount: number;
  leakedBytes: number;
  leakedAllocationCount: number;
  highWatermarkStacks: number;
  retainedStacks: number;
  memrayVersion: string | null;
  limitations: string[];
};

/** Runs the embedded exporter with the capturing interpreter, then turns its JSON into rows. */
export async function extractMemray(
  input: {
    artifact: string;
    python: string;
    collectors: MemrayCollectorFiles;
    workDirectory: string;
    projectRoot: string | null;
    run: CommandRunner;
  },
  sink: EvidenceSink,
): Promise<MemraySummary> {
  if (!existsSync(input.artifact)) throw parseFailed(`${input.artifact} does not exist`);
  const output = join(input.workDirectory, `memray-export-${crypto.randomUUID()}.json`);
  const result = await input.run([input.python, "-I", input.collectors.exporter, input.artifact, output], { timeoutMs: 300_000 });
  if (result.exitCode !== 0 || !existsSync(output)) {
    if (/No module named 'memray'/.test(result.stderr)) {
      throw capabilityUnavailable(`memray is not installed in ${input.python}.`, {
        remediation: [`${input.python} -m pip install ${memrayRequirement}`],
      });
    }
    throw parseFailed(`the exporter failed (exit ${result.exitCode}): ${result.stderr.trim().slice(-500)}`);
  }
  try {
    return importMemrayExport(readFileSync(output, "utf8"), sink, input.projectRoot);
  } finally {
    rmSync(output, { force: true });
  }
}

function isRecord(value: unknown): value is ExportedRecord {
  const record = value as ExportedRecord;
  return (
    typeof record === "object" &&
    record !== null &&
    Number.isFinite(record.size) &&
    Number.isFinite(record.n_allocations) &&
    Array.isArray(record.frames_leaf_first)
  );
}

export function importMemrayExport(text: string, sink: EvidenceSink, projectRoot: string | null): MemraySummary {
  let document: MemrayExport;
  try {
    document = JSON.parse(text) as MemrayExport;
  } catch {
    throw parseFailed("the exporter's JSON is malformed");
  }
  if (
    document?.schema !== "flameox.memray-export.v1" ||
    typeof document.metadata?.peak_memory !== "number" ||
    !Array.isArray(document.high_watermark) ||
    !Array.isArray(document.leaked) ||
    !document.high_watermark.every(isRecord) ||
    !document.leaked.every(isRecord)
  ) {
    throw parseFailed("the export does not have the flameox.memray-export.v1 shape");
  }
  const leakedBytes = document.leaked.reduce((sum, record) => sum + record.size, 0);
  const leakedCount = document.leaked.reduce((sum, record) => sum + record.n_allocations, 0);
  const measurement = (name: string, value: number, unit: string, aggregation: string) =>
    sink.measurement({
      name,
      value,
      unit,
      aggregation,
      is_warmup: false,
      worker: null,
      run_index: null,
      value_index: null,
      phase: null,
      dimensions: null,
    });
  measurement("memory.peak_bytes", document.metadata.peak_memory, "bytes", "peak");
  measurement("memory.total_allocated_bytes", document.total_allocated_bytes, "bytes", "total");
  measurement("memory.allocation_count", document.total_allocation_count, "count", "total");
  measurement("memory.leaked_bytes", leakedBytes, "bytes", "total");
  measurement("memory.leaked_allocation_count", leakedCount, "count", "total");
  emitStacks(document.high_watermark, "bytes", sink, projectRoot);
  // Leaks are ranked on their own stacks (unit retained_bytes): a large allocation freed before exit
  // must never outrank a smaller one still held, and every leaked byte is attributed to its stack.
  emitStacks(document.leaked, "retained_bytes", sink, projectRoot);
  const limitations = [
    "Stacks in unit bytes are the allocations alive at the high-water mark; those in unit retained_bytes were still allocated when tracking ended (leaks).",
  ];
  if (!document.metadata.has_native_traces) limitations.push("No native (C) frames were recorded.");
  return {
    peakBytes: document.metadata.peak_memory,
    totalAllocatedBytes: document.total_allocated_bytes,
    allocationCount: document.total_allocation_count,
    leakedBytes,
    leakedAllocationCount: leakedCount,
    highWatermarkStacks: document.high_watermark.length,
    retainedStacks: document.leaked.length,
    memrayVersion: document.memray_version,
    limitations,
  };
}

/** memray records as stacks, root first, one frame row per distinct location. */
function emitStacks(records: ExportedRecord[], unit: "bytes" | "retained_bytes", sink: EvidenceSink, projectRoot: string | null): void {
  for (const record of records) {
    const keys: string[] = [];
    // memray lists the leaf first; stacks are stored root first.
    for (const frame of [...record.frames_leaf_first].reverse()) {
      const file = frame.file.startsWith("<") ? frame.file : projectRelativePath(frame.file, projectRoot);
      const key = frameKey({ language: "python", function: frame.function, file, line: frame.line });
      sink.frame({ frame_key: key, function: frame.function, file, line: frame.line, module: null, language: "python" });
      keys.push(key);
    }
    sink.stack({
      thread: record.thread_name || String(record.tid),
      process: null,
      frame_keys: keys,
      weight: record.size,
      unit,
      sample_count: record.n_allocations,
    });
  }
}
