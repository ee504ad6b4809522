/**
 * Names the format of a profile/trace file from its first bytes (and its name), plus producer
 * hints, without reading it whole.
 */
import { basename } from "node:path";
import { isGzip, openByteSource } from "./byte-source.ts";

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

/** The first `sniffBytes` of a gzip file's inflated content (an empty array when it is damaged). */
async function inflatedHead(path: string): Promise<Uint8Array> {
  const source = await openByteSource(path, { maxInflatedBytes: sniffBytes * 2 });
  const head = Buffer.allocUnsafe(sniffBytes);
  let filled = 0;
  try {
    while (filled < sniffBytes) {
      const read = await source.read(head, filled, sniffBytes - filled);
      if (read === 0) break;
      filled += read;
    }
  } catch {
    // Damaged or cut: detection goes by what inflated before the damage.
  } finally {
    await source.close();
  }
  return new Uint8Array(head.subarray(0, filled));
}

/** Text a UTF-16 file (with its byte-order mark) holds, else null. */
export function utf16Encoding(head: Uint8Array): "utf-16le" | "utf-16be" | null {
  if (head.length >= 2 && head[0] === 0xff && head[1] === 0xfe) return "utf-16le";
  if (head.length >= 2 && head[0] === 0xfe && head[1] === 0xff) return "utf-16be";
  return null;
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
      return result("unknown", ["gzip-compressed JSON: detectProfileFormat inflates it to look inside"]);
    return result("pprof", ["gzip magic"]);
  }
  const text = new TextDecoder(utf16Encoding(head) ?? "utf-8", { fatal: false }).decode(head);
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
  if (head.includes(0) && utf16Encoding(head) === null) return result("unknown", ["binary data"]);
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

/** Producer markers found in the last `sniffBytes` of a JSON file (py-spy writes `exporter` last, kineto its metadata). */
function tailProducer(tail: string, format: ProfileFormat): { producer: string; version: string | null; hint: string } | null {
  if (format === "speedscope") {
    const exporter = /"exporter"\s*:\s*"([^"]*)"/.exec(tail)?.[1];
    if (!exporter) return null;
    const parts = /^(.+)@([^@]+)$/.exec(exporter);
    return { producer: parts ? (parts[1] as string) : exporter, version: parts ? (parts[2] as string) : null, hint: "exporter at the end" };
  }
  if (format === "chrome_trace") {
    const marker = torchMarkers.find((candidate) => tail.includes(candidate));
    return marker ? { producer: "torch.profiler", version: null, hint: `${marker} at the end` } : null;
  }
  return null;
}

export async function detectProfileFormat(path: string): Promise<DetectedProfileFormat> {
  const name = basename(path);
  const head = await readHead(path);
  if (isGzip(head)) {
    // Detected by content after inflating the head; a binary payload is a profile.proto.
    const inflated = await inflatedHead(path);
    const inner = detectProfileFormatFromHead(inflated, name.replace(/\.gz$/i, ""));
    const binary = inflated.length > 0 && inner.format === "unknown" && inner.hints.includes("binary data");
    if (binary || (inflated.length > 0 && inflated[0] === 0x0a && inner.format === "unknown")) {
      return { format: "pprof", producer: null, producer_version: null, hints: ["gzip", "protobuf payload"] };
    }
    return { ...inner, hints: ["gzip", ...inner.hints] };
  }
  const detected = detectProfileFormatFromHead(head, name);
  const size = Bun.file(path).size;
  if (detected.producer === null && size > sniffBytes && (detected.format === "speedscope" || detected.format === "chrome_trace")) {
    const tail = new TextDecoder().decode(
      await Bun.file(path)
        .slice(Math.max(sniffBytes, size - sniffBytes), size)
        .arrayBuffer(),
    );
    const found = tailProducer(tail, detected.format);
    if (found) return { ...detected, producer: found.producer, producer_version: found.version, hints: [...detected.hints, found.hint] };
  }
  return detected;
}
