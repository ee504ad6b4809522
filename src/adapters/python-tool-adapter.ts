/**
 * The shape every Python-tool capture adapter shares (coverage, memray, pyperf, python-startup,
 * torch.profiler): the tool runs in the workload's interpreter, so probing asks that interpreter, and
 * planning re-probes with the workload's PATH and refuses before anything is written. Each adapter
 * supplies only its tool's probe, command plan and extractor.
 */
import * as v from "valibot";
import { availablePythonWorkload, probeWorkloadPython } from "./adapter-support.ts";
import type {
  CaptureAdapter,
  CollectorContext,
  CollectorPlan,
  CommandRunner,
  ProbeContext,
  ProbeResult,
  ProbingCaptureAdapter,
  PythonWorkloadInvocation,
} from "./capture-adapter.ts";
import { adapterDescriptor } from "./registry.ts";

export type PythonToolSpec<Schema extends v.GenericSchema<Record<string, unknown>, Record<string, unknown>>> = {
  /** The adapter's registry name, which refusals and probes also use. */
  name: string;
  /** What to install into the interpreter when there is none to probe (a pip requirement, or "Python 3.8+"). */
  requirement: string;
  optionsSchema: Schema;
  extractor: { name: string; version: string };
  /** Asks the workload's interpreter whether the tool is there. */
  probe(python: string, run: CommandRunner): Promise<ProbeResult>;
  /** Where the tool runs; by default the workload's own interpreter, refused when the probe says no. */
  workload?(context: CollectorContext, probe: (context: ProbeContext) => Promise<ProbeResult>): Promise<PythonWorkloadInvocation>;
  plan(context: CollectorContext, options: v.InferOutput<Schema>, workload: PythonWorkloadInvocation): CollectorPlan;
  extract: NonNullable<CaptureAdapter["extract"]>;
};

export function pythonToolAdapter<Schema extends v.GenericSchema<Record<string, unknown>, Record<string, unknown>>>(
  spec: PythonToolSpec<Schema>,
): ProbingCaptureAdapter {
  const probe = (context: ProbeContext) => probeWorkloadPython(context, spec.name, spec.requirement, spec.probe);
  const workload = spec.workload ?? ((context: CollectorContext) => availablePythonWorkload(spec.name, context, probe));
  return {
    descriptor: adapterDescriptor(spec.name)!,
    optionsSchema: spec.optionsSchema as unknown as CaptureAdapter["optionsSchema"],
    extractor: spec.extractor,
    probe,
    async planCollector(context) {
      const options = v.parse(spec.optionsSchema, context.options);
      return spec.plan(context, options, await workload(context, probe));
    },
    extract: spec.extract,
  };
}
