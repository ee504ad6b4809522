import { mkdirSync } from "node:fs";
import * as v from "valibot";
import type { CaptureAdapter, ProbeContext, ProbeResult } from "../capture-adapter.ts";
import { collectorPlan, isPythonExecutable, noPython, probeRunner, requireAvailable, workloadPython } from "../adapter-support.ts";
import { adapterDescriptor } from "../registry.ts";
import { extractMemray, memrayCaptureCommand, memrayRequirement, probeMemray, writeMemrayCollectors } from "./memray-adapter.ts";

/** memray run; extraction runs the embedded exporter with the interpreter that captured. */
export const memrayAdapter: CaptureAdapter & { probe(context: ProbeContext): Promise<ProbeResult> } = {
  descriptor: adapterDescriptor("memray")!,
  optionsSchema: v.strictObject({}) as unknown as CaptureAdapter["optionsSchema"],
  extractor: { name: "memray", version: "1" },
  async probe(context) {
    const python = workloadPython(context.workloadArgv, context.pathValue);
    return python ? probeMemray(python, context.run) : noPython("memray", memrayRequirement);
  },
  async planCollector(context) {
    const pathValue = context.environment.PATH ?? process.env.PATH ?? "";
    const python = workloadPython(context.workloadArgv, pathValue);
    requireAvailable("memray", await memrayAdapter.probe({ workloadArgv: context.workloadArgv, adapterExecutable: null, pathValue, run: probeRunner() }));
    // The exporter is written now so the folder exists before the run; extraction reuses it.
    writeMemrayCollectors(context.collectorDirectory);
    const command = memrayCaptureCommand({ workload: { argv: context.workloadArgv, cwd: context.cwd, env: context.environment, python: python! }, artifactDirectory: context.artifactDirectory });
    return collectorPlan(
      command,
      () => ({ kind: "memory_profile", role: "memray_capture", format: "memray_bin", producer: "memray", required: true, extract: true }),
      "memray intercepts every allocation: often 2–5x slower for allocation-heavy code",
    );
  },
  async extract(_output, path, sink, context) {
    const python = isPythonExecutable(context.workloadExecutable) ? context.workloadExecutable : workloadPython([context.workloadExecutable], process.env.PATH ?? "");
    if (!python) requireAvailable("memray", noPython("memray", memrayRequirement));
    mkdirSync(context.scratchDirectory, { recursive: true });
    const summary = await extractMemray(
      { artifact: path, python: python!, collectors: writeMemrayCollectors(context.collectorDirectory), workDirectory: context.scratchDirectory, projectRoot: context.projectRoot, run: context.run },
      sink,
    );
    return { limitations: summary.limitations };
  },
};
