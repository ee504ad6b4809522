import * as v from "valibot";
import type { CaptureAdapter, ProbeContext } from "../capture-adapter.ts";
import { availablePythonWorkload, collectorPlan, probeWorkloadPython } from "../adapter-support.ts";
import { adapterDescriptor } from "../registry.ts";
import { pytestCaptureCommand, writePytestCollectors } from "./pytest-capture.ts";
import { extractPytestEvents } from "./pytest-events-extractor.ts";
import { probePytest } from "./pytest-probe.ts";

/** pytest (and pytest-xdist) with flameox's own plugin, run by the workload's interpreter. */
export const pytestAdapter: CaptureAdapter & { probe(context: ProbeContext): ReturnType<typeof probePytest> } = {
  descriptor: adapterDescriptor("pytest")!,
  optionsSchema: v.strictObject({}) as unknown as CaptureAdapter["optionsSchema"],
  extractor: { name: "pytest", version: "1" },
  probe(context) {
    return probeWorkloadPython(context, "pytest", "pytest==9.2.0", probePytest);
  },
  async planCollector(context) {
    const workload = await availablePythonWorkload("pytest", context, pytestAdapter.probe);
    const command = pytestCaptureCommand({
      workload,
      artifactDirectory: context.artifactDirectory,
      collectors: writePytestCollectors(context.collectorDirectory),
    });
    return collectorPlan(
      command,
      () => ({
        kind: "test_execution",
        role: "test_events",
        format: "flameox_pytest_events",
        producer: "pytest",
        required: true,
        extract: true,
      }),
      "one JSON line per test phase, fixture and worker event; negligible next to the tests",
    );
  },
  async extract(_output, path, sink) {
    const summary = extractPytestEvents(path, sink);
    return { limitations: summary.limitations };
  },
};
