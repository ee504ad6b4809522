import * as v from "valibot";
import type { CaptureAdapter, ProbeContext, ProbeResult } from "../capture-adapter.ts";
import { collectorPlan, noPython, probeRunner, requireAvailable, workloadPython } from "../adapter-support.ts";
import { extractChromeTrace } from "../formats/chrome-trace.ts";
import { adapterDescriptor } from "../registry.ts";
import { probeTorch, torchDiagnosticsFileName, torchRequirement, torchWholeEntrypointCommand, torchTraceFileName, writeTorchCollectors } from "./torch-profiler-adapter.ts";

export const TorchProfilerOptionsSchema = v.strictObject({
  mode: v.optional(v.picklist(["whole_entrypoint"]), "whole_entrypoint"),
  activities: v.optional(v.array(v.picklist(["cpu", "cuda", "cuda_if_available"])), ["cpu", "cuda_if_available"]),
  record_shapes: v.optional(v.boolean(), true),
  profile_memory: v.optional(v.boolean(), true),
  with_stack: v.optional(v.boolean(), true),
  with_flops: v.optional(v.boolean(), false),
  with_modules: v.optional(v.boolean(), false),
});

/** torch.profiler around a whole script or module; the Chrome trace becomes trace events and slice stacks. */
export const torchProfilerAdapter: CaptureAdapter & { probe(context: ProbeContext): Promise<ProbeResult> } = {
  descriptor: adapterDescriptor("torch.profiler")!,
  optionsSchema: TorchProfilerOptionsSchema as unknown as CaptureAdapter["optionsSchema"],
  extractor: { name: "chrome-trace", version: "1" },
  async probe(context) {
    const python = workloadPython(context.workloadArgv, context.pathValue);
    return python ? probeTorch(python, context.run) : noPython("torch.profiler", torchRequirement);
  },
  async planCollector(context) {
    const options = v.parse(TorchProfilerOptionsSchema, context.options);
    const pathValue = context.environment.PATH ?? process.env.PATH ?? "";
    const python = workloadPython(context.workloadArgv, pathValue);
    requireAvailable("torch.profiler", await torchProfilerAdapter.probe({ workloadArgv: context.workloadArgv, adapterExecutable: null, pathValue, run: probeRunner() }));
    const { mode: _mode, ...profilerOptions } = options;
    const command = torchWholeEntrypointCommand({
      workload: { argv: context.workloadArgv, cwd: context.cwd, env: context.environment, python: python! },
      artifactDirectory: context.artifactDirectory,
      collectors: writeTorchCollectors(context.collectorDirectory),
      options: profilerOptions,
    });
    return collectorPlan(
      command,
      (artifact) =>
        artifact.name === torchTraceFileName
          ? { kind: "execution_trace", role: "torch_trace", format: "chrome_trace", producer: "torch.profiler", required: true, extract: true }
          : { kind: "collector_metadata", role: artifact.name === torchDiagnosticsFileName ? "torch_profiler_diagnostics" : artifact.role, format: "json", producer: "flameox", required: false, extract: false },
      "torch.profiler records every operator (with shapes, memory and stacks by default): large slowdowns for small ops",
    );
  },
  async extract(_output, path, sink, context) {
    const result = await extractChromeTrace(path, sink, { projectRoot: context.projectRoot });
    return { limitations: result.limitations };
  },
};
