/**
 * The extractors behind extract_<tool>: which registered artifacts each reads and how it turns them
 * into evidence rows. ExtractionService picks the artifacts, runs the spec and publishes the bundles.
 */
import { closeSync, openSync, readSync } from "node:fs";
import type { EvidenceSink } from "../domain/evidence.ts";
import { workloadPython } from "../adapters/adapter-support.ts";
import { extractBenchmarkSamples, looksLikeBenchmarkSamples } from "../adapters/benchmark-samples/benchmark-samples.ts";
import { extractCoverage } from "../adapters/coverage/coverage-adapter.ts";
import { extractCoverageStatements } from "../adapters/coverage/coverage-statements.ts";
import { detectProfileFormat } from "../adapters/formats/detect.ts";
import { extractChromeTrace } from "../adapters/formats/chrome-trace.ts";
import { extractMemray, memrayRequirement, writeMemrayCollectors } from "../adapters/memray/memray-adapter.ts";
import { importNsightSystems } from "../adapters/nsight/nsight-systems-import.ts";
import { extractObservations } from "../adapters/observations/observations-adapter.ts";
import {
  extractPerfettoProtobuf,
  findTraceProcessor,
  traceProcessorQueryVersion,
  traceProcessorUnavailable,
} from "../adapters/perfetto/trace-processor.ts";
import { extractPyperf } from "../adapters/pyperf/pyperf-adapter.ts";
import { extractPytestEvents } from "../adapters/pytest/pytest-events-extractor.ts";
import { extractPythonStartup } from "../adapters/python-startup/python-startup-adapter.ts";
import { executableDigest } from "../exec/executable.ts";
import { brokerCommandRunner } from "../adapters/command-runner.ts";
import { capabilityUnavailable } from "../domain/errors.ts";
import type { RunArtifactFile } from "../store/artifact-registry.ts";
import type { RunManifest } from "../store/run-store.ts";
import type { WorkspaceHandle } from "../store/workspace-handle.ts";

export const extractionTools = [
  "pyperf",
  "benchmark_samples",
  "python_startup",
  "pytest",
  "coverage",
  "memray",
  "perfetto",
  "nsight_systems",
  "observations",
] as const;
export type ExtractionTool = (typeof extractionTools)[number];

/** A run's registered artifact as the extractors see it. */
export type Registration = RunArtifactFile;

type ToolContext = { workspace: WorkspaceHandle; run: RunManifest; path: string; registration: Registration; scratch: string };

export type Extracted = {
  facts: Record<string, unknown>;
  limitations: string[];
  /**
   * Facts that are a table's row count in the finished bundle, filled in once it is finished: the
   * extractor's own count can differ (flushed stacks are merged at conversion).
   */
  factsFromTables?: Record<string, "trace_events" | "frames" | "stacks">;
};

export type ToolSpec = {
  /** Default extractor name recorded with the bundle; an existing bundle's name wins so re-extraction supersedes it. */
  extractor: string;
  kinds: string[];
  describe: string;
  accepts(registration: Registration, path: string): boolean;
  extract(sink: EvidenceSink, context: ToolContext): Promise<Extracted>;
};

function fileStartsWith(path: string, prefix: string): boolean {
  const buffer = Buffer.alloc(prefix.length);
  let descriptor: number | null = null;
  try {
    descriptor = openSync(path, "r");
    readSync(descriptor, buffer, 0, buffer.length, 0);
    return buffer.toString("latin1") === prefix;
  } catch {
    return false;
  } finally {
    if (descriptor !== null) closeSync(descriptor);
  }
}

const sqliteHeader = "SQLite format 3\u0000";

export const extractionSpecs: Record<ExtractionTool, ToolSpec> = {
  pyperf: {
    extractor: "pyperf",
    kinds: ["benchmark_samples"],
    describe: "a pyperf JSON benchmark (kind benchmark_samples)",
    accepts: (registration, path) => registration.kind === "benchmark_samples" && !looksLikeBenchmarkSamples(path),
    async extract(sink, { path }) {
      const summary = await extractPyperf(path, sink);
      return {
        facts: { value_count: summary.valueCount, warmup_count: summary.warmupCount, benchmarks: summary.benchmarks },
        limitations: summary.limitations,
      };
    },
  },
  benchmark_samples: {
    extractor: "benchmark-samples",
    kinds: ["benchmark_samples"],
    describe: "a flameox.benchmark-samples.v1 JSON file (kind benchmark_samples)",
    accepts: (registration, path) => registration.kind === "benchmark_samples" && looksLikeBenchmarkSamples(path),
    async extract(sink, { path }) {
      const summary = extractBenchmarkSamples(path, sink);
      return {
        facts: { value_count: summary.valueCount, warmup_count: summary.warmupCount, benchmarks: summary.benchmarks },
        limitations: [],
      };
    },
  },
  python_startup: {
    extractor: "python-startup",
    kinds: ["python_startup"],
    describe: "a python-startup capture (kind python_startup)",
    accepts: (registration) => registration.kind === "python_startup",
    async extract(sink, { path }) {
      const summary = extractPythonStartup(path, sink);
      const measurementCount = summary.samples.length + summary.samples.filter((sample) => sample.peakRssBytes !== null).length;
      return {
        facts: {
          sample_count: summary.samples.length,
          measurement_count: measurementCount,
          top_package: summary.topPackage,
          packages: summary.packages.slice(0, 20),
        },
        limitations: summary.limitations,
      };
    },
  },
  pytest: {
    extractor: "pytest",
    kinds: ["test_execution"],
    describe: "a flameox pytest event stream (kind test_execution)",
    accepts: (registration) => registration.kind === "test_execution",
    async extract(sink, { path }) {
      const summary = extractPytestEvents(path, sink);
      return {
        facts: {
          complete: summary.complete,
          exit_status: summary.exitStatus,
          scheduler: summary.scheduler,
          collected: summary.collected,
          executed: summary.executed,
          counts: summary.counts,
          slowest: summary.slowest.slice(0, 10).map((test) => ({ nodeid: test.nodeid, duration_ns: test.durationNs, worker: test.worker })),
          workers: summary.workers,
          crashed_workers: summary.crashedWorkers,
          fixture_setups: summary.fixtureSetups,
          fixture_teardowns: summary.fixtureTeardowns,
          fixtures: summary.fixtures.slice(0, 10),
          collection_ns: summary.collectionNs,
          time_to_first_failure_ns: summary.timeToFirstFailureNs,
          unexecuted: summary.unexecuted.slice(0, 100),
        },
        limitations: summary.limitations,
      };
    },
  },
  coverage: {
    extractor: "coverage",
    kinds: ["execution_coverage"],
    describe: "a coverage.py .coverage database (kind execution_coverage)",
    accepts: (registration) => registration.kind === "execution_coverage",
    async extract(sink, { path, workspace, run, scratch }) {
      const summary = extractCoverage(path, sink, { projectRoot: workspace.projectRoot, projectFilesOnly: true });
      // The statements need coverage.py itself: the run's own interpreter when it has one, else Python on PATH.
      const pathValue = process.env.PATH ?? "";
      const python = workloadPython(run.command?.argv ?? [], pathValue) ?? workloadPython([], pathValue);
      const statements = python
        ? await extractCoverageStatements(
            {
              dataFile: path,
              python,
              rcDirectory: workspace.open().path("tools", "collectors", "coverage"),
              workDirectory: scratch,
              projectRoot: workspace.projectRoot,
              measuredFiles: summary.files.map((file) => file.file),
              run: brokerCommandRunner(scratch),
            },
            sink,
          )
        : null;
      const limitations =
        summary.skippedFiles.length > 0 ? [`${summary.skippedFiles.length} measured file(s) outside the project were skipped.`] : [];
      if (!statements) limitations.push("Which lines were missed is unknown: no Python interpreter to run coverage's report with.");
      else if (statements.limitation) limitations.push(statements.limitation.message);
      return {
        facts: {
          line_count: summary.lineRows,
          arc_count: summary.arcRows,
          has_arcs: summary.hasArcs,
          coverage_version: summary.coverageVersion,
          statement_count: statements?.limitation === null ? statements.statements : null,
          missed_line_count: statements?.limitation === null ? statements.missed : null,
          files: summary.files.map((file) => ({ file: file.file, lines: file.lines.length, arcs: file.arcs.length })),
        },
        limitations,
      };
    },
  },
  memray: {
    extractor: "memray",
    kinds: ["memory_profile"],
    describe: "a memray capture file (kind memory_profile)",
    accepts: (registration, path) => registration.kind === "memory_profile" && !fileStartsWith(path, "{"),
    async extract(sink, { workspace, run, path, scratch }) {
      const pathValue = process.env.PATH ?? "";
      const python = workloadPython(run.command?.argv ?? [], pathValue) ?? workloadPython([], pathValue);
      if (!python) {
        throw capabilityUnavailable("No Python interpreter to read the memray capture with.", {
          remediation: [`Install Python with ${memrayRequirement} on PATH.`],
          next: { tool: "list_capabilities", arguments: { adapter: "memray" } },
        });
      }
      const summary = await extractMemray(
        {
          artifact: path,
          python,
          collectors: writeMemrayCollectors(workspace.open().path("tools", "collectors")),
          workDirectory: scratch,
          projectRoot: workspace.projectRoot,
          run: brokerCommandRunner(scratch),
        },
        sink,
      );
      return {
        facts: {
          peak_bytes: summary.peakBytes,
          retained_bytes: summary.leakedBytes,
          total_allocated_bytes: summary.totalAllocatedBytes,
          allocation_count: summary.allocationCount,
          retained_allocation_count: summary.leakedAllocationCount,
          high_watermark_stacks: summary.highWatermarkStacks,
          retained_stacks: summary.retainedStacks,
          memray_version: summary.memrayVersion,
        },
        limitations: summary.limitations,
      };
    },
  },
  perfetto: {
    extractor: "chrome-trace",
    kinds: ["execution_trace"],
    describe: "a Chrome/Perfetto JSON or Perfetto protobuf trace (kind execution_trace)",
    // An xctrace package (a tar of a .trace folder) is an execution trace Perfetto cannot read.
    accepts: (registration, path) =>
      registration.kind === "execution_trace" && registration.format !== "xctrace_trace_package" && !fileStartsWith(path, sqliteHeader),
    async extract(sink, { workspace, run, path, scratch }) {
      const detected = await detectProfileFormat(path);
      if (detected.format === "chrome_trace") {
        const result = await extractChromeTrace(path, sink, { projectRoot: workspace.projectRoot });
        return {
          facts: {
            trace_format: "chrome_json",
            producer: result.producer ?? detected.producer ?? null,
            trace_processor_path: null,
            trace_processor_sha256: null,
            query_version: null,
            slice_count: result.rows.trace_events,
            frame_count: result.rows.frames,
            call_edge_count: result.rows.stacks,
          },
          factsFromTables: { slice_count: "trace_events", frame_count: "frames", call_edge_count: "stacks" },
          limitations: result.limitations,
        };
      }
      const traceProcessor = findTraceProcessor(process.env.PATH ?? "");
      if (!traceProcessor) throw traceProcessorUnavailable(run.run_id);
      const result = await extractPerfettoProtobuf(
        { artifact: path, traceProcessor, run: brokerCommandRunner(scratch), scratchDirectory: scratch },
        sink,
      );
      return {
        facts: {
          trace_format: "perfetto_protobuf",
          producer: "perfetto",
          trace_processor_path: traceProcessor,
          trace_processor_sha256: await executableDigest(traceProcessor),
          query_version: traceProcessorQueryVersion,
          slice_count: result.sliceCount,
          frame_count: 0,
          call_edge_count: 0,
        },
        limitations: result.limitations,
      };
    },
  },
  nsight_systems: {
    extractor: "nsight-systems",
    kinds: ["execution_trace", "collector_metadata"],
    describe: "an Nsight Systems SQLite export (nsys export --type sqlite), imported as kind execution_trace",
    accepts: (registration, path) =>
      (registration.kind === "execution_trace" || registration.kind === "collector_metadata") && fileStartsWith(path, sqliteHeader),
    async extract(sink, { path }) {
      const summary = importNsightSystems(path, sink);
      return {
        facts: {
          event_count: summary.eventCount,
          counts: summary.counts,
          correlated_kernels: summary.correlatedKernels,
          streams: summary.streams,
          devices: summary.devices,
          top_kernels: summary.topKernels,
        },
        limitations: summary.limitations,
      };
    },
  },
  observations: {
    extractor: "observations",
    kinds: ["semantic_observations"],
    describe: "a flameox observations JSONL file (kind semantic_observations)",
    accepts: (registration) => registration.kind === "semantic_observations",
    async extract(sink, { path }) {
      const summary = extractObservations(path, sink);
      return {
        facts: {
          observation_count: summary.annotations + summary.configurations,
          annotations: summary.annotations,
          configurations: summary.configurations,
        },
        limitations: [],
      };
    },
  },
};
