/**
 * JSON formats told apart by the keys near the start of the text: speedscope, Chrome/Perfetto/torch
 * traces, V8 CPU profiles, Firefox Profiler (Gecko and processed), stackprof, GHC `-pj`, pyperf and
 * flameox's own capture files, and JSON flameox can name but not read.
 */
import { type ArtifactFormat, type FormatAdvice, type ProfileFormat, unrecognizedAdvice } from "./format-catalog.ts";

export type JsonDetection = { format: ProfileFormat | ArtifactFormat; hints: string[]; producer: string | null; version: string | null };

/** Markers of torch.profiler's (kineto's) traces: its top-level keys and categories. */
export const torchMarkers = [
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

const flameoxSchemas: Record<string, ArtifactFormat> = {
  "flameox.benchmark-samples.v1": "benchmark_samples",
  "flameox.pytest-events.v1": "pytest_events",
  "flameox.observations.v1": "observations",
  "flameox.python-startup.v1": "python_startup",
};

const geckoMetaKeys = ['"interval"', '"stackwalk"', '"product"', '"preprocessedProfileVersion"', '"startTime"', '"categories"', '"oscpu"'];

function json(
  format: ProfileFormat | ArtifactFormat,
  hints: string[],
  producer: string | null = null,
  version: string | null = null,
): JsonDetection {
  return { format, hints, producer, version };
}

/** Detects a JSON object or array from its text head (`trimmed` starts with `{` or `[`); null when nothing fits. */
export function detectJson(trimmed: string, lowerName: string): JsonDetection | null {
  const schema = /"schema"\s*:\s*"(flameox\.[a-z-]+\.v1)"/.exec(trimmed)?.[1];
  if (schema && flameoxSchemas[schema]) return json(flameoxSchemas[schema] as ArtifactFormat, [`schema ${schema}`], "flameox");
  if (trimmed.startsWith("[")) {
    if (/"ph"\s*:/.test(trimmed) || /^\[\s*(\]|$)/.test(trimmed)) {
      if (/"cat"\s*:\s*"py-spy"/.test(trimmed)) return json("chrome_trace", ["event array", 'cat "py-spy"'], "py-spy");
      const hints = torchMarkers.filter((marker) => trimmed.includes(marker));
      if (hints.length > 0) return json("chrome_trace", ["event array", ...hints], "torch.profiler");
      return json("chrome_trace", ["event array"]);
    }
    return null;
  }
  if (trimmed.includes("speedscope.app/file-format-schema") || (/"shared"\s*:/.test(trimmed) && /"profiles"\s*:/.test(trimmed))) {
    const exporter = /"exporter"\s*:\s*"([^"]*)"/.exec(trimmed)?.[1] ?? null;
    const parts = exporter ? /^(.+)@([^@]+)$/.exec(exporter) : null;
    return json(
      "speedscope",
      ["speedscope $schema/shared/profiles"],
      parts ? (parts[1] as string) : exporter,
      parts ? (parts[2] as string) : null,
    );
  }
  // kineto writes its metadata before `traceEvents`: two of its top-level keys name the trace already.
  const torchKeys = ['"schemaVersion"', '"deviceProperties"', '"distributedInfo"', '"baseTimeNanoseconds"', '"trace_id"'].filter((key) =>
    trimmed.includes(key),
  );
  const traceEvents = /"traceEvents"\s*:/.test(trimmed);
  if (traceEvents || torchKeys.length >= 2) {
    const hints = torchMarkers.filter((marker) => trimmed.includes(marker));
    const first = traceEvents ? "traceEvents" : "kineto metadata before traceEvents";
    return hints.length > 0 ? json("chrome_trace", [first, ...hints], "torch.profiler") : json("chrome_trace", [first]);
  }
  if (/"nodes"\s*:/.test(trimmed) && (/"callFrame"\s*:/.test(trimmed) || /"timeDeltas"\s*:/.test(trimmed)))
    return json("v8_cpuprofile", ["nodes/callFrame"], "v8");
  const devtoolsRecording =
    /^\{\s*"label"\s*:/.test(trimmed) && /"duration"\s*:/.test(trimmed) && /"(markers|ticks|allocations)"\s*:/.test(trimmed);
  if (devtoolsRecording || (/"profile"\s*:\s*\{\s*"(libs|meta|threads)"\s*:/.test(trimmed) && /"duration"\s*:/.test(trimmed))) {
    return json("gecko_profile", ["Firefox devtools recording with a Gecko profile"], "firefox-profiler");
  }
  if (/^\{\s*"meta"\s*:\s*\{/.test(trimmed) && geckoMetaKeys.filter((key) => trimmed.includes(key)).length >= 2) {
    const processed = trimmed.includes('"preprocessedProfileVersion"');
    return json("gecko_profile", [processed ? "processed profile meta" : "Gecko profile meta"], "firefox-profiler");
  }
  if (/"mode"\s*:\s*"(cpu|wall|object|custom)"/.test(trimmed) && /"(frames|gc_samples|missed_samples)"\s*:/.test(trimmed)) {
    return json("stackprof", ["stackprof mode/frames"], "stackprof");
  }
  if (/"cost_centres"\s*:/.test(trimmed) || (/"rts_arguments"\s*:/.test(trimmed) && /"total_ticks"\s*:/.test(trimmed))) {
    return json("ghc_prof", ["GHC -pj cost centres"], "ghc");
  }
  if (/"benchmarks"\s*:\s*\[/.test(trimmed) && (/"runs"\s*:/.test(trimmed) || /"version"\s*:\s*"1\.\d+"/.test(trimmed))) {
    return json("pyperf_json", ["pyperf benchmarks/runs"], "pyperf");
  }
  // A file name decides only when the content is nothing flameox can name otherwise.
  if (knownUnreadable(trimmed)) return null;
  if (lowerName.endsWith(".cpuprofile")) return json("v8_cpuprofile", ["file name"], "v8");
  if (lowerName.includes("speedscope")) return json("speedscope", ["file name"]);
  if (/"ph"\s*:/.test(trimmed)) return json("chrome_trace", ['"ph" in a JSON object']);
  return null;
}

/** JSON shapes flameox can name but does not read. */
const unreadableJson: [RegExp[], string][] = [
  [
    [/"head"\s*:/, /"selfSize"\s*:/],
    "a V8 sampling heap profile (.heapprofile), which flameox does not read; record a CPU profile (.cpuprofile) or use memray for Python memory",
  ],
  [[/"snapshot"\s*:\s*\{\s*"meta"/], "a V8 heap snapshot, which flameox does not read"],
  [[/"dhatFileVersion"\s*:/], "a DHAT heap profile (valgrind --tool=dhat, dhat-rs), which flameox does not read"],
];

function knownUnreadable(trimmed: string): string | null {
  return unreadableJson.find(([patterns]) => patterns.every((pattern) => pattern.test(trimmed)))?.[1] ?? null;
}

/** JSON flameox does not read, named when it can be. */
export function adviseJson(trimmed: string): FormatAdvice {
  const known = knownUnreadable(trimmed);
  if (known) return unrecognizedAdvice(known);
  return unrecognizedAdvice(trimmed.startsWith("[") ? "a JSON array without trace events" : "a JSON object of no known profile shape");
}
