import * as v from "valibot";
import { collectorPlan } from "../adapter-support.ts";
import { pythonToolAdapter } from "../python-tool-adapter.ts";
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
export const pythonStartupAdapter = pythonToolAdapter({
  name: "python-startup",
  requirement: "Python 3.8+",
  optionsSchema: PythonStartupOptionsSchema,
  extractor: { name: "python-startup", version: "1" },
  probe: probePythonStartup,
  plan(context, options, workload) {
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
});
