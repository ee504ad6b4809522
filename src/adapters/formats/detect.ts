/**
 * Names the format of a profile/trace file from its first bytes (and its name), plus producer
 * hints, without reading it whole.
 */
import { basename } from "node:path";

export type ProfileFormat = "speedscope" | "chrome_trace" | "collapsed" | "py_spy_raw" | "v8_cpuprofile" | "pprof" | "unknown";

export type DetectedProfileFormat = {
  format: ProfileFormat;
  /** e.g. "torch.profiler", "py-spy", "v8"; null when nothing says. */
  producer: string | null;
  producer_version: string | null;
  /** The markers that decided, for diagnostics. */
  hints: string[];
};

/** Enough to see torch.profiler's top-level keys before `traceEvents`. */
const sniffBytes = 64 * 1024;

const torchMarkers = [
  '"schemaVersion"',
  '"deviceProperties"',
  '"distributedInfo"',
  '"baseTimeNanoseconds"',
  '"trace_id"',
  "ProfilerStep#",
  '"cpu_op"',
  '"python_function"',
  '"user_annotation"',
];

async function readHead(path: string): Promise<Uint8Array> {
  const file = Bun.file(path);
  return new Uint8Array(await file.slice(0, sniffBytes).arrayBuffer());
}

/** Detects from bytes already read (exported for callers that hold the head). */
export function detectProfileFormatFromHead(head: Uint8Array, name: string): DetectedProfileFormat {
  const lowerName = name.toLowerCase();
  const result = (
    format: ProfileFormat,
    hints: string[],
    producer: string | null = null,
    version: string | null = null,
  ): DetectedProfileFormat => ({
    format,
    producer,
    producer_version: version,
    hints,
  });
  if (head.length >= 2 && head[0] === 0x1f && head[1] === 0x8b) {
    if (/\.json(\.gz)?$/.test(lowerName) && !lowerName.endsWith(".pb.gz"))
      return result("unknown", ["gzip-compressed JSON is not read directly"]);
    return result("pprof", ["gzip magic"]);
  }
  const text = new TextDecoder("utf-8", { fatal: false }).decode(head);
  const trimmed = text.replace(/^\uFEFF/, "").trimStart();
  if (/\.(pb|pprof|prof)$/.test(lowerName) && head[0] === 0x0a) return result("pprof", ["protobuf field 1 and a pprof file name"]);
  if (trimmed.startsWith("{")) {
    if (trimmed.includes("speedscope.app/file-format-schema") || (/"shared"\s*:/.test(trimmed) && /"profiles"\s*:/.test(trimmed))) {
      const exporter = /"exporter"\s*:\s*"([^"]*)"/.exec(trimmed)?.[1] ?? null;
      const parts = exporter ? /^(.+)@([^@]+)$/.exec(exporter) : null;
      const producer = parts ? (parts[1] as string) : exporter;
      return result("speedscope", ["speedscope $schema/shared/profiles"], producer, parts ? (parts[2] as string) : null);
    }
    if (/"traceEvents"\s*:/.test(trimmed)) {
      const hints = torchMarkers.filter((marker) => trimmed.includes(marker));
      if (hints.length > 0) return result("chrome_trace", ["traceEvents", ...hints], "torch.profiler");
      return result("chrome_trace", ["traceEvents"]);
    }
    if (/"nodes"\s*:/.test(trimmed) && (/"callFrame"\s*:/.test(trimmed) || /"timeDeltas"\s*:/.test(trimmed))) {
      return result("v8_cpuprofile", ["nodes/callFrame"], "v8");
    }
    if (lowerName.endsWith(".cpuprofile")) return result("v8_cpuprofile", ["file name"], "v8");
    if (lowerName.includes("speedscope")) return result("speedscope", ["file name"]);
    if (/"ph"\s*:/.test(trimmed)) return result("chrome_trace", ['"ph" in a JSON object']);
    return result("unknown", ["JSON object of no known profile shape"]);
  }
  if (trimmed.startsWith("[")) {
    if (/"ph"\s*:/.test(trimmed) || /^\[\s*(\]|$)/.test(trimmed)) {
      if (/"cat"\s*:\s*"py-spy"/.test(trimmed)) return result("chrome_trace", ["event array", 'cat "py-spy"'], "py-spy");
      const hints = torchMarkers.filter((marker) => trimmed.includes(marker));
      if (hints.length > 0) return result("chrome_trace", ["event array", ...hints], "torch.profiler");
      return result("chrome_trace", ["event array"]);
    }
    return result("unknown", ["JSON array without trace events"]);
  }
  if (head.includes(0)) return result("unknown", ["binary data"]);
  // Folded stacks: every complete line ends with a number.
  const lines = text.split("\n");
  if (head.length === sniffBytes) lines.pop();
  const content = lines.map((line) => line.replace(/\r$/, "")).filter((line) => line.trim() !== "" && !line.startsWith("#"));
  if (content.length > 0 && content.every((line) => /\S*\s\d+(\.\d+)?$/.test(line) || /^\s*\d+$/.test(line))) {
    const pySpyContext = content.some((line) => /^(process \d+:"|thread \()/.test(line));
    const pythonFrames = content.filter((line) => /\(\S+\.pyx?(:\d+)?\)(;| \d)/.test(line)).length;
    if (pySpyContext || pythonFrames * 2 >= content.length) {
      return result("py_spy_raw", pySpyContext ? ["py-spy process/thread prefix"] : ["function (file.py:line) frames"], "py-spy");
    }
    return result("collapsed", ["folded stack lines"]);
  }
  return result("unknown", ["text of no known profile shape"]);
}

export async function detectProfileFormat(path: string): Promise<DetectedProfileFormat> {
  return detectProfileFormatFromHead(await readHead(path), basename(path));
}
