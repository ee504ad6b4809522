import { mkdirSync } from "node:fs";
import * as v from "valibot";
import type { CaptureAdapter, ProbeContext, ProbeResult } from "../capture-adapter.ts";
import {
  availablePythonWorkload,
  collectorPlan,
  isPythonExecutable,
  noPython,
  probeWorkloadPython,
  requireAvailable,
  workloadPython,
} from "../adapter-support.ts";
import { adapterDescriptor } from "../registry.ts";
import { extractMemray, memrayCaptureCommand, memrayRequirement, probeMemray, writeMemrayCollectors } from "./memray-adapter.ts";

/** memray run; extraction runs the embedded exporter with the interpreter that captured. */
export const memrayAdapter: CaptureAdapter & { probe(context: ProbeContext): Promise<ProbeResult> } = {
  descriptor: adapterDescriptor("memray")!,
  optionsSchema: v.strictObject({}) as unknown as CaptureAdapter["optionsSchema"],
  extractor: { name: "memray", version: "1" },
  probe(context) {
    return probeWorkloadPython(context, "memray", memrayRequirement, probeMemray);
  },
  async planCollector(context) {
    const workload = await availablePythonWorkload("memray", context, memrayAdapter.probe);
    // The exporter is written now so the folder exists before the run; extraction reuses it.
    writeMemrayCollectors(context.collectorDirectory);
    const command = memrayCaptureCommand({ workload, artifactDirectory: context.artifactDirectory });
    return collectorPlan(
      command,
      () => ({ kind: "memory_profile", role: "memray_capture", format: "memray_bin", producer: "memray", required: true, extract: true }),
      "memray intercepts every allocation: often 2–5x slower for allocation-heavy code",
    );
  },
  async extract(_output, path, sink, context) {
    const python = isPythonExecutable(context.workloadExecutable)
      ? context.workloadExecutable
      : workloadPython([context.workloadExecutable], process.env.PATH ?? "");
    if (!python) requireAvailable("memray", noPython("memray", memrayRequirement));
    mkdirSync(context.scratchDirectory, { recursive: true });
    const summary = await extractMemray(
      {
        artifact: path,
        python: python!,
        collectors: writeMemrayCollectors(context.collectorDirectory),
        workDirectory: context.scratchDirectory,
        projectRoot: context.projectRoot,
        run: context.run,
      },
      sink,
    );
    return { limitations: summary.limitations };
  },
};
