import * as v from "valibot";
import { collectorPlan } from "../adapter-support.ts";
import { extractChromeTrace } from "../formats/chrome-trace.ts";
import { pythonToolAdapter } from "../python-tool-adapter.ts";
import {
  probeTorch,
  torchCycleManifestFileName,
  torchDiagnosticsFileName,
  torchRequirement,
  torchSdkCommand,
  torchTraceFileName,
  torchWholeEntrypointCommand,
  writeTorchCollectors,
  type TorchSchedule,
} from "./torch-profiler-adapter.ts";

/** JSON numbers that are whole and in range; booleans and numeric strings are refused (StrictInt). */
function strictInteger(minimum: number, maximum: number, fallback: number) {
  return v.optional(v.pipe(v.number(), v.integer(), v.minValue(minimum), v.maxValue(maximum)), fallback);
}

export const TorchProfilerScheduleSchema = v.strictObject({
  wait: strictInteger(0, 10_000, 1),
  warmup: strictInteger(0, 10_000, 1),
  active: strictInteger(1, 10_000, 1),
  repeat: strictInteger(1, 100, 1),
  skip_first: strictInteger(0, 10_000, 0),
});

const activity = v.picklist(["cpu", "cuda", "cuda_if_available"]);

/** The contract's TorchProfilerCaptureOptions: every cross-field rule reports the field it concerns. */
export const TorchProfilerOptionsSchema = v.pipe(
  v.strictObject({
    mode: v.optional(v.picklist(["whole_entrypoint", "sdk"]), "whole_entrypoint"),
    activities: v.optional(
      v.pipe(
        v.array(activity),
        v.minLength(1, "activities must not be empty"),
        v.check((list) => new Set(list).size === list.length, "activities must be unique"),
        v.check(
          (list) => !(list.includes("cuda") && list.includes("cuda_if_available")),
          "activities may not hold both cuda and cuda_if_available",
        ),
      ),
      ["cpu", "cuda_if_available"],
    ),
    record_shapes: v.optional(v.boolean(), true),
    profile_memory: v.optional(v.boolean(), true),
    with_stack: v.optional(v.boolean(), true),
    with_flops: v.optional(v.boolean(), false),
    with_modules: v.optional(v.boolean(), false),
    schedule: v.optional(TorchProfilerScheduleSchema),
  }),
  v.forward(
    v.check(
      (options) => options.mode !== "sdk" || options.schedule !== undefined,
      "mode 'sdk' requires a schedule {wait, warmup, active, repeat, skip_first}",
    ),
    ["schedule"],
  ),
  v.forward(
    v.check(
      (options) => options.mode !== "whole_entrypoint" || options.schedule === undefined,
      "mode 'whole_entrypoint' takes no schedule (use mode 'sdk')",
    ),
    ["schedule"],
  ),
);

const traceOutput = (role: string) => ({
  kind: "execution_trace",
  role,
  format: "chrome_trace",
  producer: "torch.profiler",
  required: true,
  extract: true,
});
const metadataOutput = (role: string) => ({
  kind: "collector_metadata",
  role,
  format: "json",
  producer: "flameox",
  required: false,
  extract: false,
});

/**
 * torch.profiler around a whole script or module, or (mode 'sdk') the workload's own
 * `flameox_torch.profile()` with a schedule: one Chrome trace per cycle, each its own evidence bundle.
 */
export const torchProfilerAdapter = pythonToolAdapter({
  name: "torch.profiler",
  requirement: torchRequirement,
  optionsSchema: TorchProfilerOptionsSchema,
  extractor: { name: "chrome-trace", version: "1" },
  probe: probeTorch,
  plan(context, options, workload) {
    const { mode, schedule, ...profilerOptions } = options;
    const collectors = writeTorchCollectors(context.collectorDirectory);
    const overhead = "torch.profiler records every operator (with shapes, memory and stacks by default): large slowdowns for small ops";
    if (mode === "sdk") {
      const command = torchSdkCommand({
        workload,
        artifactDirectory: context.artifactDirectory,
        collectors,
        schedule: schedule as TorchSchedule,
        options: profilerOptions,
      });
      return collectorPlan(
        command,
        (artifact) =>
          artifact.role.startsWith("cycle_")
            ? traceOutput(artifact.role)
            : metadataOutput(
                artifact.name === torchCycleManifestFileName
                  ? "torch_profiler_cycle_manifest"
                  : artifact.name === torchDiagnosticsFileName
                    ? "torch_profiler_diagnostics"
                    : artifact.role,
              ),
        `${overhead}; only the scheduled active steps are recorded`,
      );
    }
    const command = torchWholeEntrypointCommand({
      workload,
      artifactDirectory: context.artifactDirectory,
      collectors,
      options: profilerOptions,
    });
    return collectorPlan(
      command,
      (artifact) =>
        artifact.name === torchTraceFileName
          ? traceOutput("torch_trace")
          : metadataOutput(artifact.name === torchDiagnosticsFileName ? "torch_profiler_diagnostics" : artifact.role),
      overhead,
    );
  },
  async extract(_output, path, sink, context) {
    const result = await extractChromeTrace(path, sink, { projectRoot: context.projectRoot });
    return { limitations: result.limitations };
  },
});
