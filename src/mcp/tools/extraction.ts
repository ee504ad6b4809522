import * as v from "valibot";
import { additive } from "../annotations.ts";
import { defineTool } from "../define-tool.ts";
import type { ExtractionResult, ExtractionTool } from "../../services/extraction-service.ts";

const runId = v.pipe(v.string(), v.minLength(1), v.maxLength(200));
const artifactId = v.optional(v.nullable(v.pipe(v.string(), v.minLength(1), v.maxLength(200))), null);
const input = v.strictObject({ run_id: runId, artifact_id: artifactId });

const idempotence =
  "Idempotent in effect: re-extracting the same artifact supersedes its earlier bundle, never duplicates rows. artifact_id (optional) picks one artifact of the run; otherwise every artifact of the matching kind is extracted.";

function extractionTool(tool: ExtractionTool, description: string, text: (result: ExtractionResult) => string) {
  return defineTool({
    name: `extract_${tool}`,
    description: `${description} ${idempotence}`,
    input,
    annotations: additive,
    async handler(request, { services }) {
      const result = await services.extraction.extract(tool, { run_id: request.run_id, artifact_id: request.artifact_id ?? null });
      return {
        result,
        text: text(result),
        links: [{ uri: result.run_resource_uri, name: "Run", description: "The run whose artifact was extracted." }],
      };
    },
  });
}

const number = (value: unknown) => (typeof value === "number" ? value : 0);

export const extractionTools = [
  extractionTool(
    "pyperf",
    "Normalize a run's pyperf JSON (captured with the pyperf adapter or imported as kind benchmark_samples, any pyperf suite or gzip) into measurements: every value and every warm-up (is_warmup=true), per process run, in ns for time units. Then call query_measurements with the run_id.",
    (result) => `Extracted ${number(result.value_count)} measured values.`,
  ),
  extractionTool(
    "benchmark_samples",
    'Normalize a flameox.benchmark-samples.v1 file imported as kind benchmark_samples: {"schema":"flameox.benchmark-samples.v1","benchmarks":[{"name","unit" (ns|us|ms|s|bytes|count|ratio),"values":[…],"warmups":[…]}]} into measurements named benchmark.<name> (times stored in ns). Then call query_measurements.',
    (result) => `Extracted ${number(result.value_count)} measured values and ${number(result.warmup_count)} warmups.`,
  ),
  extractionTool(
    "python_startup",
    "Normalize a python-startup capture into measurements: startup.wall_ns and startup.peak_rss_bytes per fresh-interpreter sample, and -X importtime self/cumulative microseconds per module and per package (import.package_self_us). Then call query_measurements with name_prefix 'import.' or 'startup.'.",
    (result) => `Extracted ${number(result.measurement_count)} startup measurements.`,
  ),
  extractionTool(
    "pytest",
    "Normalize a pytest capture's event stream into measurements (test.duration_ns per test and phase, test.count per outcome, test.collection_ns, test.fixture_setup_ns, test.time_to_first_failure_ns) and test_outcome observations; the result lists outcome counts (xfail/xpass kept apart), the slowest tests, xdist workers and crashed workers. Then call query_measurements or analyze_failures.",
    (result) => `Extracted ${number((result.tables as Record<string, number>).measurements)} pytest measurements.`,
  ),
  extractionTool(
    "coverage",
    "Normalize a coverage.py .coverage database (branch mode) into line_hit and branch_arc observations with project-relative paths and contexts. Then call analyze_execution.",
    (result) => `Extracted ${number(result.line_count)} lines and ${number(result.arc_count)} arcs.`,
  ),
  extractionTool(
    "memray",
    "Normalize a memray capture (read with the workload's own memray) into memory measurements (memory.peak_bytes, memory.leaked_bytes, totals) and the allocations alive at the high-water mark as byte-weighted stacks. Then call analyze_memory.",
    (result) => `Peak memory was ${number(result.peak_bytes)} bytes; ${number(result.retained_bytes)} bytes remained at end.`,
  ),
  extractionTool(
    "perfetto",
    "Normalize an execution trace (Chrome/Perfetto JSON such as torch.profiler's; a Perfetto protobuf trace only through a host trace_processor, else CAPABILITY_UNAVAILABLE with the remedy) into trace_events (with Input Dims, [memory] bytes, correlation, stream, device args) and slice self-time stacks. Needed before analyze_pytorch on imported Torch traces.",
    (result) => `Extracted ${number(result.slice_count)} slices into ${number(result.frame_count)} frame aggregates.`,
  ),
  extractionTool(
    "nsight_systems",
    "Normalize an Nsight Systems SQLite export (nsys export --type sqlite, imported as kind execution_trace) into trace_events: CUDA runtime/driver calls, kernels, memcpy/memset, NVTX ranges and graph launches, with correlation, device and stream. Then call analyze_accelerator_launches.",
    (result) => `Extracted ${number(result.event_count)} Nsight Systems events.`,
  ),
  extractionTool(
    "observations",
    "Normalize a semantic observations JSONL file (written by flameox_observations annotate/configuration, kind semantic_observations) into annotation and configuration observations.",
    (result) => `Extracted ${number(result.observation_count)} semantic observations.`,
  ),
];
