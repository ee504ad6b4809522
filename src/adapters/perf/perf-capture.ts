import { delimiter, join } from "node:path";
import { accessSync, constants } from "node:fs";
import * as v from "valibot";
import type { CaptureAdapter, ProbeContext, ProbeResult } from "../capture-adapter.ts";
import { collectorPlan } from "../adapter-support.ts";
import { adapterDescriptor } from "../registry.ts";
import { extractPerfData, perfCaptureCommand, probePerf } from "./perf-adapter.ts";

export const PerfOptionsSchema = v.strictObject({
  frequency: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(100_000)), 999),
});

function perfOnPath(): string | undefined {
  for (const directory of (process.env.PATH ?? "").split(delimiter)) {
    if (!directory) continue;
    try {
      accessSync(join(directory, "perf"), constants.X_OK);
      return join(directory, "perf");
    } catch {
      // Keep looking.
    }
  }
  return undefined;
}

/** linux perf with frame-pointer call graphs; `perf script` symbolizes at extraction on this host. */
export const perfAdapter: CaptureAdapter & { probe(context: ProbeContext): Promise<ProbeResult> } = {
  descriptor: adapterDescriptor("perf")!,
  optionsSchema: PerfOptionsSchema as unknown as CaptureAdapter["optionsSchema"],
  extractor: { name: "perf", version: "1" },
  probe(context) {
    return probePerf(context.run, { perf: context.adapterExecutable ?? "perf" });
  },
  planCollector(context) {
    const options = v.parse(PerfOptionsSchema, context.options);
    const command = perfCaptureCommand({
      workload: { argv: context.workloadArgv, cwd: context.cwd, env: context.environment },
      artifactDirectory: context.artifactDirectory,
      perf: context.adapterExecutable ?? "perf",
      frequency: options.frequency,
    });
    return collectorPlan(
      command,
      () => ({ kind: "sample_profile", role: "perf_data", format: "perf_data", producer: "perf", required: true, extract: true }),
      `sampling at ${options.frequency} Hz with call graphs; low overhead`,
    );
  },
  async extract(_output, path, sink, context) {
    const summary = await extractPerfData({ artifact: path, run: context.run, perf: perfOnPath() ?? "perf" }, sink);
    return { limitations: summary.samples < 10 ? [`Only ${summary.samples} samples: raise the frequency or run longer.`] : [] };
  },
};
