import * as v from "valibot";
import type { CaptureAdapter, ProbeContext, ProbeResult } from "../capture-adapter.ts";
import { availablePythonWorkload, collectorPlan, probeWorkloadPython } from "../adapter-support.ts";
import { adapterDescriptor } from "../registry.ts";
import {
  extractPythonStartup,
  probePythonStartup,
  pythonStartupCaptureCommand,
  writePythonStartupCollectors,
} from "./python-startup-adapter.ts";

export const PythonStartupOptionsSchema = v.strictObject({
  samples: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(1000)), 5),
});

/** Fresh-interpreter startup samples with peak RSS, plus one `-X importtime` run grouped by package. */
export const pythonStartupAdapter: CaptureAdapter & { probe(context: ProbeContext): Promise<ProbeResult> } = {
  descriptor: adapterDescriptor("python-startup")!,
  optionsSchema: PythonStartupOptionsSchema as unknown as CaptureAdapter["optionsSchema"],
  extractor: { name: "python-startup", version: "1" },
  probe(context) {
    return probeWorkloadPython(context, "python-startup", "Python 3.8+", probePythonStartup);
  },
  async planCollector(context) {
    const options = v.parse(PythonStartupOptionsSchema, context.options);
    const workload = await availablePythonWorkload("python-startup", context, pythonStartupAdapter.probe);
    const command = pythonStartupCaptureCommand({
      workload,
      artifactDirectory: context.artifactDirectory,
      collectors: writePythonStartupCollectors(context.collectorDirectory),
      samples: options.samples,
    });
    return collectorPlan(
      command,
      () => ({
        kind: "python_startup",
        role: "startup_samples",
        format: "flameox_python_startup",
        producer: "python-startup",
        required: true,
        extract: true,
      }),
      `runs the command ${options.samples + 1} times in fresh interpreters`,
    );
  },
  async extract(_output, path, sink) {
    return { limitations: extractPythonStartup(path, sink).limitations };
  },
};
