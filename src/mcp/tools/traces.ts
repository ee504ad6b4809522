import { AcceleratorLaunchesRequest, PytorchRequest, TraceWindowRequest } from "../../domain/requests/evidence.ts";
import { readOnly } from "../annotations.ts";
import { defineTool } from "../define-tool.ts";

/** Trace-event tools: PyTorch operators, accelerator launches, time windows (services.traceAnalysis). */
export const traceTools = [
  defineTool({
    name: "analyze_pytorch",
    description: "PyTorch operators of a torch.profiler trace: time, calls, shapes. Next: get_trace_window.",
    input: PytorchRequest,
    annotations: readOnly,
    async handler(input, { services, progress }) {
      await progress(0, 2, "Trace evidence pinned");
      const result = await services.traceAnalysis.pytorch(input);
      await progress(1, 2, "Operator queries complete");
      await progress(2, 2, "PyTorch result ready");
      return { result };
    },
  }),
  defineTool({
    name: "analyze_accelerator_launches",
    description: "GPU launches, kernels, copies and stream gaps of a trace. Next: get_trace_window.",
    input: AcceleratorLaunchesRequest,
    annotations: readOnly,
    async handler(input, { services, progress }) {
      await progress(0, 2, "Trace evidence pinned");
      const result = await services.traceAnalysis.acceleratorLaunches(input);
      await progress(1, 2, "Launch queries complete");
      await progress(2, 2, "Accelerator result ready");
      return { result };
    },
  }),
  defineTool({
    name: "get_trace_window",
    description: "Trace events of an artifact overlapping [start_ns, end_ns), in time order.",
    input: TraceWindowRequest,
    annotations: readOnly,
    async handler(input, { services }) {
      const result = await services.traceAnalysis.window(input);
      return { result };
    },
  }),
];
