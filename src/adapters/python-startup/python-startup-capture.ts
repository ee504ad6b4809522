import * as v from "valibot";
import type { CaptureAdapter, ProbeContext, ProbeResult } from "../capture-adapter.ts";
import { collectorPlan, noPython, probeRunner, requireAvailable, workloadPython } from "../adapter-support.ts";
import { adapterDescriptor } from "../registry.ts";
import { extractPythonStartup, probePythonStartup, pythonStartupCaptureCommand, writePythonStartupCollectors } from "./python-startup-adapter.ts";

export const PythonStartupOptionsSchema = v.strictObject({
  samples: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(1000)), 5),
});

/** Fresh-interpreter startup samples with peak RSS, plus one `-X importtime` run grouped by package. */
export const pythonStartupAdapter: CaptureAdapter & { probe(context: ProbeContext): Promise<ProbeResult> } = {
  descriptor: adapterDescriptor("python-startup")!,
  optionsSchema: PythonStartupOptionsSchema as unknown as CaptureAdapter["optionsSchema"],
  extractor: { name: "python-startup", version: "1" },
  async probe(context) {
    const python = workloadPython(context.workloadArgv, context.pathValue);
    return python ? probePythonStartup(python, context.run) : noPython("python-startup", "Python 3.8+");
  },
  async planCollector(context) {
    const options = v.parse(PythonStartupOptionsSchema, context.options);
    const pathValue = context.environment.PATH ?? process.env.PATH ?? "";
    const python = workloadPython(context.workloadArgv, pathValue);
    requireAvailable("python-startup", await pythonStartupAdapter.probe({ workloadArgv: context.workloadArgv, adapterExecutable: null, pathValue, run: probeRunner() }));
    const command = pythonStartupCaptureCommand({
      workload: { argv: context.workloadArgv, cwd: context.cwd, env: context.environment, python: python! },
      artifactDirectory: context.artifactDirectory,
      collectors: writePythonStartupCollectors(context.collectorDirectory),
      samples: options.samples,
    });
    return collectorPlan(
      command,
      () => ({ kind: "python_startup", role: "startup_samples", format: "flameox_python_startup", producer: "python-startup", required: true, extract: true }),
      `runs the command ${options.samples + 1} times in fresh interpreters`,
    );
  },
  async extract(_output, path, sink) {
    return { limitations: extractPythonStartup(path, sink).limitations };
  },
};
