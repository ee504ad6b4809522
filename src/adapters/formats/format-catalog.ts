/**
 * Every file format flameox recognizes by content, and what becomes of each: the profile formats
 * the format extractors read on import (`extract-profile.ts`), the artifacts an extract_* tool
 * reads (with the artifact kind to register them under), and, for a file that is neither, advice
 * naming the conversion or the `--kind` that would make it readable.
 */

/** Formats read on import into frames and stacks (and trace events for Chrome traces). */
export const profileFormats = [
  "speedscope",
  "chrome_trace",
  "collapsed",
  "py_spy_raw",
  "v8_cpuprofile",
  "pprof",
  "perf_script",
  "gecko_profile",
  "pstats",
  "stackprof",
  "dtrace_stacks",
  "ghc_prof",
] as const;
export type ProfileFormat = (typeof profileFormats)[number];

/** Formats an extract_* tool reads after import. */
export const artifactFormats = [
  "pyperf_json",
  "benchmark_samples",
  "nsight_sqlite",
  "coverage_sqlite",
  "memray_capture",
  "pytest_events",
  "python_startup",
  "observations",
  "perfetto_protobuf",
] as const;
export type ArtifactFormat = (typeof artifactFormats)[number];

export type DetectedFormat = ProfileFormat | ArtifactFormat | "unknown";

export function isProfileFormat(format: string): format is ProfileFormat {
  return (profileFormats as readonly string[]).includes(format);
}

export type FormatRoute = {
  /** Artifact kind an import registers the file under when the caller names none. */
  kind: string;
  /** The tool that turns it into evidence after import (null: the import itself does). */
  extractTool: string | null;
  /** Producer recorded when the file does not name one. */
  producer: string | null;
  /** Other kinds its extract tool also reads it under. */
  alsoKinds?: string[];
};

const artifactRoutes: Record<ArtifactFormat, FormatRoute> = {
  pyperf_json: { kind: "benchmark_samples", extractTool: "extract_pyperf", producer: "pyperf" },
  benchmark_samples: { kind: "benchmark_samples", extractTool: "extract_benchmark_samples", producer: null },
  nsight_sqlite: {
    kind: "execution_trace",
    extractTool: "extract_nsight_systems",
    producer: "nsight-systems",
    alsoKinds: ["collector_metadata"],
  },
  coverage_sqlite: { kind: "execution_coverage", extractTool: "extract_coverage", producer: "coverage" },
  memray_capture: { kind: "memory_profile", extractTool: "extract_memray", producer: "memray" },
  pytest_events: { kind: "test_execution", extractTool: "extract_pytest", producer: "pytest" },
  python_startup: { kind: "python_startup", extractTool: "extract_python_startup", producer: null },
  observations: { kind: "semantic_observations", extractTool: "extract_observations", producer: null },
  perfetto_protobuf: { kind: "execution_trace", extractTool: "extract_perfetto", producer: "perfetto" },
};

export function formatRoute(format: ProfileFormat | ArtifactFormat): FormatRoute {
  if (isProfileFormat(format))
    return { kind: format === "chrome_trace" ? "execution_trace" : "sample_profile", extractTool: null, producer: null };
  return artifactRoutes[format];
}

/**
 * What to do with a file flameox cannot read as it is. `code` is `format_needs_conversion` when a
 * named tool turns it into a readable format, `format_not_recognized` otherwise.
 */
export type FormatAdvice = { code: "format_not_recognized" | "format_needs_conversion"; message: string; next_tool: string | null };

const readable =
  "flameox reads speedscope, collapsed/folded stacks, py-spy raw, pprof, V8 .cpuprofile, Chrome/Perfetto/torch trace JSON, `perf script` text, Firefox Profiler (Gecko) JSON, cProfile .pstats, stackprof JSON, DTrace aggregated stacks and GHC .prof profiles on import, and pyperf JSON, Nsight Systems SQLite, coverage.py, memray and flameox's own capture files with their extract_* tool";

export function conversionAdvice(what: string, command: string): FormatAdvice {
  return {
    code: "format_needs_conversion",
    message: `This looks like ${what}, which flameox does not read directly: ${command}, then import the result with import_artifact.`,
    next_tool: "import_artifact",
  };
}

export function unrecognizedAdvice(what: string): FormatAdvice {
  return {
    code: "format_not_recognized",
    message: `flameox did not recognize this file (${what}); it is kept as collector_metadata with no evidence. ${readable}. If it is one of those, import it again with the matching kind (kind=sample_profile for a profile, execution_trace for a trace, benchmark_samples for pyperf JSON) and run the extract_* tool the receipt names.`,
    next_tool: "import_artifact",
  };
}
