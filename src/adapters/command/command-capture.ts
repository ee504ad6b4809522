import * as v from "valibot";
import type { CaptureAdapter } from "../capture-adapter.ts";
import { adapterDescriptor } from "../registry.ts";

/** The workload as declared, with no profiler: outcome, output and runtime resources only. */
export const commandAdapter: CaptureAdapter = {
  descriptor: adapterDescriptor("command")!,
  optionsSchema: v.strictObject({}) as unknown as CaptureAdapter["optionsSchema"],
  extractor: { name: "command", version: "1" },
  planCollector(context) {
    return { argv: [...context.workloadArgv], trustedEnvironment: {}, outputs: [], expectedOverhead: "none" };
  },
};
