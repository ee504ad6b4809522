import * as v from "valibot";
import type { CollectorContext, ProbeContext, ProbeResult, PythonWorkloadInvocation } from "../capture-adapter.ts";
import { availablePythonWorkload, collectorPlan } from "../adapter-support.ts";
import { probeRunner } from "../command-runner.ts";
import { pythonToolAdapter } from "../python-tool-adapter.ts";
import { extractPyperf, probePyperf, pyperfCaptureCommand, pyperfRequirement } from "./pyperf-adapter.ts";

const count = (minimum: number, fallback: number) =>
  v.optional(v.pipe(v.number(), v.integer(), v.minValue(minimum), v.maxValue(10_000)), fallback);

export const PyperfOptionsSchema = v.strictObject({
  processes: count(1, 3),
  values: count(1, 3),
  warmups: count(0, 1),
  loops: v.optional(v.nullable(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(1_000_000))), null),
  name: v.optional(v.pipe(v.string(), v.regex(/^[A-Za-z0-9][A-Za-z0-9._:/-]{0,199}$/)), "workload"),
});

/** `pyperf command` around the whole workload: every value and warm-up becomes a measurement. */
export const pyperfAdapter = pythonToolAdapter({
  name: "pyperf",
  requirement: pyperfRequirement,
  optionsSchema: PyperfOptionsSchema,
  extractor: { name: "pyperf", version: "1" },
  probe: probePyperf,
  workload: pyperfWorkload,
  plan(context, options, workload) {
    const command = pyperfCaptureCommand({
      workload,
      artifactDirectory: context.artifactDirectory,
      options: { processes: options.processes, values: options.values, warmups: options.warmups, loops: options.loops, name: options.name },
    });
    return collectorPlan(
      command,
      () => ({ kind: "benchmark_samples", role: "benchmark", format: "pyperf_json", producer: "pyperf", required: true, extract: true }),
      `runs the workload ${options.processes} × (${options.warmups} warm-up + ${options.values} values) times in fresh processes`,
    );
  },
  async extract(_output, path, sink) {
    return { limitations: (await extractPyperf(path, sink)).limitations };
  },
});

/**
 * pyperf runs in the workload's interpreter when that one has it; otherwise in a verified managed
 * pyperf environment, which works because `pyperf command` starts the workload as its own child.
 */
async function pyperfWorkload(
  context: CollectorContext,
  probe: (context: ProbeContext) => Promise<ProbeResult>,
): Promise<PythonWorkloadInvocation> {
  if (context.managedPython) {
    const pathValue = context.environment.PATH ?? process.env.PATH ?? "";
    const own = await probe({ workloadArgv: context.workloadArgv, adapterExecutable: null, pathValue, run: probeRunner() });
    if (own.status !== "available")
      return { argv: context.workloadArgv, cwd: context.cwd, env: context.environment, python: context.managedPython };
  }
  return availablePythonWorkload("pyperf", context, probe);
}
