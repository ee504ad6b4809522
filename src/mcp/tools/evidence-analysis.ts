import * as v from "valibot";
import { readOnly } from "../annotations.ts";
import { defineTool } from "../define-tool.ts";

const runOrArtifact = v.pipe(v.string(), v.minLength(1), v.maxLength(200));
const optionalRunOrArtifact = v.optional(v.nullable(runOrArtifact), null);
const limit = (fallback: number) => v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(1000)), fallback);
const strictLimit = v.pipe(v.number("Input should be a valid integer"), v.integer(), v.minValue(1), v.maxValue(1000));
const cursor = v.optional(v.nullable(v.pipe(v.string(), v.minLength(1), v.maxLength(4096))), null);
const identifier = v.pipe(v.string(), v.minLength(1), v.maxLength(200));
const executionStatus = v.picklist(["not_applicable", "planned", "running", "succeeded", "failed", "timed_out", "cancelled"]);

const runFilter = v.optional(
  v.nullable(
    v.strictObject({
      workload_name: v.optional(v.nullable(identifier)),
      adapter: v.optional(v.nullable(identifier)),
      run_type: v.optional(v.nullable(v.picklist(["execution", "import"]))),
      execution_status: v.optional(v.nullable(v.pipe(v.array(executionStatus), v.maxLength(8)))),
      workload_definition_id: v.optional(v.nullable(identifier)),
      source_state_id: v.optional(v.nullable(identifier)),
      environment_id: v.optional(v.nullable(identifier)),
      created_after: v.optional(v.nullable(v.pipe(v.string(), v.isoTimestamp()))),
      created_before: v.optional(v.nullable(v.pipe(v.string(), v.isoTimestamp()))),
    }),
  ),
  null,
);

const evidenceRefTypes = ["analysis", "artifact", "comparison", "generation", "observation", "run", "run_set", "trial"] as const;

export const evidenceAnalysisTools = [
  defineTool({
    name: "analyze_memory",
    description:
      "Memory of a run or artifact: memray peak bytes, bytes still allocated at exit (retained), total allocated and allocation count, process peak RSS, and the functions holding the most bytes at the high-water mark (frame_id usable with get_stack_examples, unit 'bytes'). Without memory evidence it fails with the exact next tool (extract_memray for an unextracted capture, plan_capture with adapter memray otherwise).",
    input: v.strictObject({ run_or_artifact: runOrArtifact, limit: limit(20) }),
    annotations: readOnly,
    async handler(input, { services, progress }) {
      await progress(0, 2, "Memory evidence pinned");
      const result = await services.evidenceAnalysis.memory({ run_or_artifact: input.run_or_artifact, limit: input.limit });
      await progress(1, 2, "Memory queries complete");
      await progress(2, 2, "Memory result ready");
      return {
        result,
        text: `Returned ${result.returned} memory measurements${result.peak_bytes !== null ? `; peak ${result.peak_bytes} bytes` : ""}.`,
      };
    },
  }),
  defineTool({
    name: "analyze_execution",
    description:
      "Which code ran: executed lines and branch arcs per project file from coverage evidence (extract_coverage), with contexts. With comparison_run_or_artifact, the lines and arcs executed in only one of the two runs per file. Bounded by limit (files); missing coverage is an error naming the next tool.",
    input: v.strictObject({
      run_or_artifact: runOrArtifact,
      limit: limit(50),
      comparison_run_or_artifact: v.optional(
        v.nullable(v.pipe(runOrArtifact, v.description("Optional second run or artifact ID for a compatible comparison."))),
        null,
      ),
    }),
    annotations: readOnly,
    async handler(input, { services, progress }) {
      await progress(0, 2, "Coverage evidence pinned");
      const result = await services.evidenceAnalysis.execution({
        run_or_artifact: input.run_or_artifact,
        limit: input.limit,
        comparison_run_or_artifact: input.comparison_run_or_artifact ?? null,
      });
      await progress(1, 2, "Coverage queries complete");
      await progress(2, 2, "Execution result ready");
      return { result, text: `Returned ${result.returned} of ${result.total} observations.` };
    },
  }),
  defineTool({
    name: "analyze_pytorch",
    description:
      "PyTorch operators of a torch.profiler trace: self and total time per operator (order_by), call counts, input shapes from Input Dims, allocations from [memory] events (bytes, peak total allocated per device) and CPU operator time versus accelerator time. An imported trace that is not normalized yet fails with CAPABILITY_UNAVAILABLE naming extract_perfetto with its run_id; a trace that is not from torch.profiler fails with COMPARISON_INVALID.",
    input: v.strictObject({
      run_or_artifact: runOrArtifact,
      limit: limit(20),
      order_by: v.optional(v.picklist(["self", "total"]), "self"),
      cursor,
    }),
    annotations: readOnly,
    async handler(input, { services, progress }) {
      await progress(0, 2, "Trace evidence pinned");
      const result = await services.evidenceAnalysis.pytorch({
        run_or_artifact: input.run_or_artifact,
        limit: input.limit,
        order_by: input.order_by,
        cursor: input.cursor ?? null,
      });
      await progress(1, 2, "Operator queries complete");
      await progress(2, 2, "PyTorch result ready");
      const top = result.operators[0];
      return { result, text: `Returned ${result.returned} operators${top ? `; top by ${result.order_by}: ${top.name}` : ""}.` };
    },
  }),
  defineTool({
    name: "analyze_accelerator_launches",
    description:
      "GPU launch behaviour from trace events (torch.profiler with CUDA, or an Nsight Systems export): runtime and graph launches, kernels and copies by name (launch regions), per-stream busy and idle gaps, and host→device correlation coverage. Results say which parts are missing (partial_reasons); a CPU-only trace is an empty result with its reason. Optional comparison_run_or_artifact and phase (a flameox.phase annotation or user annotation name).",
    input: v.strictObject({
      run_or_artifact: runOrArtifact,
      limit: strictLimit,
      comparison_run_or_artifact: optionalRunOrArtifact,
      phase: v.optional(v.nullable(v.pipe(v.string(), v.minLength(1), v.maxLength(200))), null),
    }),
    annotations: readOnly,
    async handler(input, { services, progress }) {
      await progress(0, 2, "Trace evidence pinned");
      const result = await services.evidenceAnalysis.acceleratorLaunches({
        run_or_artifact: input.run_or_artifact,
        limit: input.limit,
        comparison_run_or_artifact: input.comparison_run_or_artifact ?? null,
        phase: input.phase ?? null,
      });
      await progress(1, 2, "Launch queries complete");
      await progress(2, 2, "Accelerator result ready");
      return { result, text: `Returned ${result.returned} launch regions.` };
    },
  }),
  defineTool({
    name: "analyze_failures",
    description:
      "Failure clusters across runs: failed, timed-out and cancelled runs grouped by workload and signature (failure code, exit status or signal), and failed/errored/crashed tests from extracted pytest outcomes grouped by normalized error message, with counts, runs and examples. filter narrows the runs like list_runs.",
    input: v.strictObject({ limit: strictLimit, filter: runFilter }),
    annotations: readOnly,
    async handler(input, { services, progress }) {
      await progress(0, 2, "Selecting runs");
      const result = await services.evidenceAnalysis.failures({ limit: input.limit, filter: input.filter ?? null }, (step, message) =>
        progress(step, 2, message),
      );
      await progress(2, 2, "Failure clusters ready");
      return { result, text: `Returned ${result.returned} failure clusters.` };
    },
  }),
  defineTool({
    name: "get_trace_window",
    description:
      "Trace events of one artifact that overlap [start_ns, end_ns) on the trace's clock, in time order, with parent/depth, category, args (bounded JSON), correlation, device and stream. end_ns must be greater than start_ns. Bounded: limit, total, truncated and a keyset next_cursor.",
    input: v.strictObject({
      artifact_id: v.pipe(v.string(), v.minLength(1)),
      start_ns: v.pipe(v.number(), v.integer(), v.minValue(0)),
      end_ns: v.pipe(v.number(), v.integer(), v.minValue(1)),
      limit: strictLimit,
      cursor,
    }),
    annotations: readOnly,
    async handler(input, { services }) {
      const result = await services.evidenceAnalysis.traceWindow({
        artifact_id: input.artifact_id,
        start_ns: input.start_ns,
        end_ns: input.end_ns,
        limit: input.limit,
        cursor: input.cursor ?? null,
      });
      return { result, text: `Returned ${result.returned} trace events.` };
    },
  }),
  defineTool({
    name: "query_measurements",
    description:
      "Measurements (benchmark values, pytest durations and counts, startup and import times, memory, runtime resources) filtered by run_id, artifact_id and name_prefix; warm-ups are excluded unless include_warmups. Each row has value, unit, aggregation, is_warmup, worker, run/value index, phase and dimensions (test nodeid, benchmark, package …). Bounded: limit (1..1000, default 100), total, truncated and a keyset next_cursor.",
    input: v.strictObject({
      run_id: v.optional(v.nullable(v.pipe(v.string(), v.minLength(1), v.maxLength(200))), null),
      artifact_id: v.optional(v.nullable(v.pipe(v.string(), v.minLength(1), v.maxLength(200))), null),
      name_prefix: v.optional(v.nullable(v.pipe(v.string(), v.minLength(1), v.maxLength(200))), null),
      include_warmups: v.optional(v.boolean(), false),
      limit: limit(100),
      cursor,
    }),
    annotations: readOnly,
    async handler(input, { services }) {
      const result = await services.evidenceAnalysis.queryMeasurements({
        run_id: input.run_id ?? null,
        artifact_id: input.artifact_id ?? null,
        name_prefix: input.name_prefix ?? null,
        include_warmups: input.include_warmups,
        limit: input.limit,
        cursor: input.cursor ?? null,
      });
      return { result, text: `Returned ${result.returned} of ${result.total} measurements.` };
    },
  }),
  defineTool({
    name: "get_evidence",
    description:
      "Look up one piece of evidence by its type and id: pass the ref_type and its ID separately (ref_type one of analysis, artifact, comparison, generation (an evidence bundle id), observation, run, run_set, trial; ref_id the id a receipt or list returned).",
    input: v.strictObject({ ref_type: v.picklist(evidenceRefTypes), ref_id: v.pipe(v.string(), v.minLength(1)) }),
    annotations: readOnly,
    async handler(input, { services }) {
      const result = services.evidenceAnalysis.getEvidence({ ref_type: input.ref_type, ref_id: input.ref_id });
      return { result, text: `Retrieved ${result.ref_type} evidence ${result.ref_id}.` };
    },
  }),
  defineTool({
    name: "summarize_evidence",
    description:
      "Summarize runs (baseline_run_id, candidate_run_id, run_ids ≤20), recorded comparisons and analyses, and findings into one JSON summary plus Markdown for a report or PR comment, with a digest of the summary.",
    input: v.strictObject({
      request: v.strictObject({
        baseline_run_id: v.optional(v.nullable(identifier), null),
        candidate_run_id: v.optional(v.nullable(identifier), null),
        run_ids: v.optional(v.nullable(v.pipe(v.array(identifier), v.maxLength(20))), null),
        comparison_ids: v.optional(v.nullable(v.pipe(v.array(identifier), v.maxLength(10))), null),
        analysis_ids: v.optional(v.nullable(v.pipe(v.array(identifier), v.maxLength(20))), null),
        finding_ids: v.optional(v.nullable(v.pipe(v.array(identifier), v.maxLength(20))), null),
        output_excerpts: v.optional(v.picklist(["none", "internal"]), "none"),
        sensitive_context: v.optional(v.picklist(["redact", "include"]), "redact"),
      }),
    }),
    annotations: readOnly,
    async handler(input, { services }) {
      const result = await services.evidenceAnalysis.summarize(input.request);
      return { result, text: `Summarized evidence as ${result.summary_digest}.` };
    },
  }),
];
