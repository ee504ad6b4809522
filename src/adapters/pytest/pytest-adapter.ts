import * as v from "valibot";
import type { CaptureAdapter, ProbeContext } from "../capture-adapter.ts";
import { collectorPlan, noPython, probeRunner, requireAvailable, workloadPython } from "../adapter-support.ts";
import { adapterDescriptor } from "../registry.ts";
import { pytestCaptureCommand, writePytestCollectors } from "./pytest-capture.ts";
import { extractPytestEvents } from "./pytest-events-extractor.ts";
import { probePytest } from "./pytest-probe.ts";

/** pytest (and pytest-xdist) with flameox's own plugin, run by the workload's interpreter. */
export const pytestAdapter: CaptureAdapter & { probe(context: ProbeContext): ReturnType<typeof probePytest> } = {
  descriptor: adapterDescriptor("pytest")!,
  optionsSchema: v.strictObject({}) as unknown as CaptureAdapter["optionsSchema"],
  extractor: { name: "pytest", version: "1" },
  async probe(context) {
    const python = workloadPython(context.workloadArgv, context.pathValue);
    return python ? probePytest(python, context.run) : noPython("pytest", "pytest==9.2.0");
  },
  async planCollector(context) {
    const pathValue = context.environment.PATH ?? process.env.PATH ?? "";
    const python = workloadPython(context.workloadArgv, pathValue);
    const probe = await pytestAdapter.probe({ workloadArgv: context.workloadArgv, adapterExecutable: null, pathValue, run: probeRunner() });
    requireAvailable("pytest", probe);
    const command = pytestCaptureCommand({
      workload: { argv: context.workloadArgv, cwd: context.cwd, env: context.environment, python: python! },
      artifactDirectory: context.artifactDirectory,
      collectors: writePytestCollectors(context.collectorDirectory),
    });
    return collectorPlan(
      command,
      () => ({ kind: "test_execution", role: "test_events", format: "flameox_pytest_events", producer: "pytest", required: true, extract: true }),
      "one JSON line per test phase, fixture and worker event; negligible next to the tests",
    );
  },
  async extract(_output, path, sink) {
    const summary = extractPytestEvents(path, sink);
    return { limitations: summary.limitations };
  },
};
