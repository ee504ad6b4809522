import * as v from "valibot";
import { readOnly } from "../annotations.ts";
import { defineTool } from "../define-tool.ts";
import { runOrArtifact, optionalRunOrArtifact, limitDefaulting, strictLimit, cursor } from "./evidence-inputs.ts";

/** Trace-event tools: PyTorch operators, accelerator launches, time windows (services.traceAnalysis). */
export const traceTools = [
  defineTool({
    name: "analyze_pytorch",
    description:
      "PyTorch operators of a torch.profiler trace: self and total time per operator (order_by), call counts, input shapes from Input Dims, allocations from [memory] events (bytes, peak total allocated per device) and CPU operator time versus accelerator time. An imported trace that is not normalized yet fails with CAPABILITY_UNAVAILABLE naming extract_perfetto with its run_id; a trace that is not from torch.profiler fails with COMPARISON_INVALID.",
    input: v.strictObject({
      run_or_artifact: runOrArtifact,
      limit: limitDefaulting(20),
      order_by: v.optional(v.picklist(["self", "total"]), "self"),
      cursor,
    }),
    annotations: readOnly,
    async handler(input, { services, progress }) {
      await progress(0, 2, "Trace evidence pinned");
      const result = await services.traceAnalysis.pytorch({
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
      const result = await services.traceAnalysis.acceleratorLaunches({
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
      const result = await services.traceAnalysis.window({
        artifact_id: input.artifact_id,
        start_ns: input.start_ns,
        end_ns: input.end_ns,
        limit: input.limit,
        cursor: input.cursor ?? null,
      });
      return { result, text: `Returned ${result.returned} trace events.` };
    },
  }),
];
