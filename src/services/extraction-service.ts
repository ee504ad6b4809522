import { closeSync, openSync, readSync, rmSync } from "node:fs";
import { artifactNotFound, capabilityUnavailable, runNotFound } from "../domain/errors.ts";
import type { EvidenceSink } from "../domain/evidence.ts";
import { workloadPython } from "../adapters/adapter-support.ts";
import { extractBenchmarkSamples, looksLikeBenchmarkSamples } from "../adapters/benchmark-samples/benchmark-samples.ts";
import { extractCoverage } from "../adapters/coverage/coverage-adapter.ts";
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
import { currentBundles } from "../store/evidence-registry.ts";
import { readRun, type RunManifest } from "../store/run-store.ts";
import { brokerCommandRunner } from "./command-runner.ts";
import { prepareBundle, publishBundles, type PreparedBundle } from "./evidence-publisher.ts";
import { runResourceUri } from "../domain/resource-uris.ts";
import type { Services } from "./services.ts";

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

type Registration = {
  artifact_id: string;
  kind: string;
  format: string | null;
  producer: string | null;
  display_name: string;
  role: string;
  stored_path: string;
};

type ToolContext = { services: Services; run: RunManifest; path: string; registration: Registration; scratch: string };

type Extracted = { facts: Record<string, unknown>; limitations: string[] };

type ToolSpec = {
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

const specs: Record<ExtractionTool, ToolSpec> = {
  pyperf: {
    extractor: "pyperf",
    kinds: ["benchmark_samples"],
    describe: "a pyperf JSON benchmark (kind benchmark_samples)",
    accepts: (registration, path) => registration.kind === "benchmark_samples" && !looksLikeBenchmarkSamples(path),
    async extract(sink, { path }) {
      const summary = extractPyperf(path, sink);
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
    async extract(sink, { path, services }) {
      const summary = extractCoverage(path, sink, { projectRoot: services.projectRoot, projectFilesOnly: true });
      return {
        facts: {
          line_count: summary.lineRows,
          arc_count: summary.arcRows,
          has_arcs: summary.hasArcs,
          coverage_version: summary.coverageVersion,
          files: summary.files.map((file) => ({ file: file.file, lines: file.lines.length, arcs: file.arcs.length })),
        },
        limitations:
          summary.skippedFiles.length > 0 ? [`${summary.skippedFiles.length} measured file(s) outside the project were skipped.`] : [],
      };
    },
  },
  memray: {
    extractor: "memray",
    kinds: ["memory_profile"],
    describe: "a memray capture file (kind memory_profile)",
    accepts: (registration, path) => registration.kind === "memory_profile" && !fileStartsWith(path, "{"),
    async extract(sink, { services, run, path, scratch }) {
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
          collectors: writeMemrayCollectors(services.workspace().path("tools", "collectors")),
          workDirectory: scratch,
          projectRoot: services.projectRoot,
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
    accepts: (registration, path) => registration.kind === "execution_trace" && !fileStartsWith(path, sqliteHeader),
    async extract(sink, { services, run, path, scratch }) {
      const detected = await detectProfileFormat(path);
      if (detected.format === "chrome_trace") {
        const result = await extractChromeTrace(path, sink, { projectRoot: services.projectRoot });
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

export type ExtractionResult = {
  schema_version: 1;
  tool: `extract_${ExtractionTool}`;
  run_id: string;
  /** The first (usually only) artifact extracted. */
  artifact_id: string;
  artifact_ids: string[];
  extractor: string;
  bundle_ids: string[];
  /** Bundles this extraction replaced; re-extraction never duplicates rows. */
  superseded_bundle_ids: string[];
  tables: Record<string, number>;
  limitations: string[];
  corpus_commit_id: string;
  run_resource_uri: string;
  next_tool: string;
} & Record<string, unknown>;

const nextToolAfter: Record<ExtractionTool, string> = {
  pyperf: "query_measurements",
  benchmark_samples: "query_measurements",
  python_startup: "query_measurements",
  pytest: "query_measurements",
  coverage: "analyze_execution",
  memray: "analyze_memory",
  perfetto: "analyze_pytorch",
  nsight_systems: "analyze_accelerator_launches",
  observations: "query_measurements",
};

export class ExtractionService {
  constructor(private readonly services: Services) {}

  private registrations(runId: string): Registration[] {
    return this.services
      .workspace()
      .state.database.query<Registration, [string]>(
        `SELECT r.artifact_id, r.kind, r.format, r.producer, r.display_name, r.role, a.stored_path
         FROM artifact_registrations r JOIN artifacts a ON a.artifact_id = r.artifact_id
         WHERE r.run_id = ? ORDER BY r.registered_at, r.registration_id`,
      )
      .all(runId);
  }

  /** Finds the run's artifacts of the tool's kind, extracts each into a bundle, and publishes them in one transaction. */
  async extract(tool: ExtractionTool, request: { run_id: string; artifact_id?: string | null }): Promise<ExtractionResult> {
    const spec = specs[tool];
    const workspace = this.services.workspace();
    const database = workspace.state.database;
    const run = readRun(database, request.run_id);
    if (!run) throw runNotFound(request.run_id);
    const registrations = this.registrations(request.run_id);
    let chosen: Registration[];
    if (request.artifact_id) {
      const match = registrations.find((registration) => registration.artifact_id === request.artifact_id);
      if (!match) {
        throw artifactNotFound(request.artifact_id, {
          details: { run_id: request.run_id },
          message: `Artifact ${request.artifact_id} is not registered in run ${request.run_id}.`,
          remediation: ["Call list_artifacts (or get_run) and pass an artifact_id of this run, or omit artifact_id."],
          list: { tool: "list_artifacts", arguments: { run_id: request.run_id } },
        });
      }
      chosen = [match];
    } else {
      chosen = registrations.filter((registration) => spec.accepts(registration, workspace.path(registration.stored_path)));
      // One object registered twice in the run is extracted once.
      chosen = chosen.filter(
        (registration, index) => chosen.findIndex((other) => other.artifact_id === registration.artifact_id) === index,
      );
    }
    if (chosen.length === 0) {
      const kinds = [...new Set(registrations.map((registration) => registration.kind))].sort();
      throw capabilityUnavailable(
        `Run ${request.run_id} has no artifact extract_${tool} reads: it needs ${spec.describe}; the run holds ${kinds.join(", ") || "no artifacts"}.`,
        {
          details: { run_id: request.run_id, required_kinds: spec.kinds, artifact_kinds: kinds, next_tool: "import_artifact" },
          remediation: [`Import ${spec.describe} with import_artifact, or capture the workload with the matching adapter.`],
          next: { tool: "import_artifact", arguments: { kind: spec.kinds[0] } },
        },
      );
    }
    const scratch = workspace.path("staging", `extract-${crypto.randomUUID()}`);
    const bundles: PreparedBundle[] = [];
    const superseded: string[] = [];
    const limitations: string[] = [];
    const facts: Record<string, unknown>[] = [];
    let extractorName = spec.extractor;
    try {
      for (const registration of chosen) {
        const existing = currentBundles(database, { runId: request.run_id, artifactId: registration.artifact_id });
        // Reuse the name of the bundle already there (a capture or an import extracted it) so this one supersedes it.
        const previous = existing.find((bundle) => bundle.extractor !== "runtime");
        extractorName = previous?.extractor ?? spec.extractor;
        if (previous) superseded.push(previous.bundle_id);
        const path = workspace.path(registration.stored_path);
        let extracted: Extracted | undefined;
        bundles.push(
          await prepareBundle(
            workspace,
            { runId: request.run_id, artifactId: registration.artifact_id, extractor: extractorName, extractorVersion: "1" },
            async (sink) => {
              extracted = await spec.extract(sink, { services: this.services, run, path, registration, scratch });
            },
          ),
        );
        facts.push(extracted!.facts);
        limitations.push(...extracted!.limitations);
      }
    } catch (error) {
      for (const bundle of bundles) bundle.discard();
      throw error;
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
    const corpus = publishBundles(workspace, bundles, `extract_${tool} ${request.run_id}`);
    const tables: Record<string, number> = {};
    for (const bundle of bundles) for (const [table, count] of Object.entries(bundle.tables)) tables[table] = (tables[table] ?? 0) + count;
    return {
      schema_version: 1,
      tool: `extract_${tool}`,
      run_id: request.run_id,
      artifact_id: chosen[0]!.artifact_id,
      artifact_ids: chosen.map((registration) => registration.artifact_id),
      extractor: extractorName,
      ...mergeFacts(facts),
      bundle_ids: bundles.map((bundle) => bundle.bundleId),
      superseded_bundle_ids: superseded,
      tables,
      limitations,
      corpus_commit_id: corpus.commit_id,
      run_resource_uri: runResourceUri(request.run_id),
      next_tool: nextToolAfter[tool],
    };
  }
}

/** Numbers add up across artifacts; anything else keeps the first artifact's value. */
function mergeFacts(facts: Record<string, unknown>[]): Record<string, unknown> {
  const merged: Record<string, unknown> = {};
  for (const entry of facts) {
    for (const [key, value] of Object.entries(entry)) {
      if (!(key in merged)) merged[key] = value;
      else if (typeof value === "number" && typeof merged[key] === "number" && !key.startsWith("peak"))
        merged[key] = (merged[key] as number) + value;
    }
  }
  return merged;
}
