import { mkdirSync } from "node:fs";
import * as v from "valibot";
import { collectorPlan, isPythonExecutable, noPython, requireAvailable, workloadPython } from "../adapter-support.ts";
import { pythonToolAdapter } from "../python-tool-adapter.ts";
import { extractMemray, memrayCaptureCommand, memrayRequirement, probeMemray, writeMemrayCollectors } from "./memray-adapter.ts";

/** memray run; extraction runs the embedded exporter with the interpreter that captured. */
export const memrayAdapter = pythonToolAdapter({
  name: "memray",
  requirement: memrayRequirement,
  optionsSchema: v.strictObject({}),
  extractor: { name: "memray", version: "1" },
  probe: probeMemray,
  plan(context, _options, workload) {
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
});
