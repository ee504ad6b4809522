import type * as v from "valibot";
import type { EvidenceSink } from "../domain/evidence.ts";
import type { AdapterDescriptor } from "./registry.ts";

/** Runs a helper command (extraction helpers, probes) and returns its output; services supply the broker-backed one. */
export type CommandRunner = (
  argv: string[],
  options: { cwd?: string; env?: Record<string, string>; timeoutMs: number },
) => Promise<{ exitCode: number | null; stdout: string; stderr: string }>;

/** What a capture adapter gets at planning time; everything here is already resolved and checked. */
export type CollectorContext = {
  /** The workload argv with argv[0] resolved to an absolute executable. */
  workloadArgv: string[];
  cwd: string;
  environment: Record<string, string>;
  /** Where the collector writes its outputs; becomes the run's artifacts. */
  artifactDirectory: string;
  /** The adapter's own executable: found on PATH (py-spy, perf …) or a verified managed provider's; or null. */
  adapterExecutable: string | null;
  /**
   * The interpreter of a verified managed provider environment that runs this adapter's tool on its own
   * (pyperf, which starts the workload as its child); null when there is none.
   */
  managedPython?: string | null;
  options: Record<string, unknown>;
  /** A version-addressed folder where embedded collector scripts may be written. */
  collectorDirectory: string;
  projectRoot: string;
};

export type CollectorOutput = {
  /** File name inside the artifact directory. */
  file: string;
  kind: string;
  role: string;
  mediaType: string;
  format: string | null;
  producer: string | null;
  /** A required output that is missing fails validation. */
  required: boolean;
  /** Whether `extract` turns this output into evidence. */
  extract: boolean;
};

export type CollectorPlan = {
  argv: string[];
  /** flameox's own variables for the collector; they bypass the workload environment policy. */
  trustedEnvironment: Record<string, string>;
  outputs: CollectorOutput[];
  expectedOverhead: string;
};

export type ExtractionContext = {
  projectRoot: string;
  /** The interpreter that ran the workload, for extractors that need the tool's own Python. */
  workloadExecutable: string;
  collectorDirectory: string;
  run: CommandRunner;
  scratchDirectory: string;
};

/** A limitation with a code an agent can act on (listed in docs/errors.md); its message is the sentence in `limitations`. */
export type ExtractionLimitation = { code: string; message: string };

/** What an extractor says about the evidence it wrote; the rows themselves went to the sink. */
export type ExtractionOutcome = { limitations: string[]; limitationDetails?: ExtractionLimitation[] };

export interface CaptureAdapter {
  descriptor: AdapterDescriptor;
  /** Typed adapter_options; a strict valibot object. */
  optionsSchema: v.GenericSchema<Record<string, unknown>, Record<string, unknown>>;
  /** Extractor name recorded with each evidence bundle; bump its version when rows change. */
  extractor: { name: string; version: string };
  planCollector(context: CollectorContext): Promise<CollectorPlan> | CollectorPlan;
  extract?(output: CollectorOutput, path: string, sink: EvidenceSink, context: ExtractionContext): Promise<ExtractionOutcome>;
}

export type CommandResult = Awaited<ReturnType<CommandRunner>>;

/** A Python workload as the per-tool command builders see it: argv, cwd, environment and its interpreter. */
export type PythonWorkloadInvocation = { argv: string[]; cwd: string; env: Record<string, string>; python: string };
export type WorkloadInvocation = { argv: string[]; cwd: string; env: Record<string, string> };

export type CaptureArtifact = { name: string; path: string; role: string; mediaType: string };

/** What a per-tool command builder returns; the adapter turns it into a CollectorPlan. */
export type CaptureCommand = {
  argv: string[];
  cwd: string;
  /** Variables flameox itself adds on top of the workload's environment; trusted, never from the workload. */
  environment: Record<string, string>;
  artifacts: CaptureArtifact[];
};

/** A capability probe's answer: what is installed, whether it may run, and the exact remedy when not. */
export type ProbeResult = {
  status: "available" | "unavailable" | "permission_required";
  version: string | null;
  remediation: string[];
  limitations: string[];
  details: Record<string, unknown>;
};

export type ProbeContext = {
  /** The workload argv (argv[0] resolved) at planning time; empty when probing outside a plan. */
  workloadArgv: string[];
  /** The adapter's own executable found on PATH, or null. */
  adapterExecutable: string | null;
  /** PATH the workload (and so the tool) will see. */
  pathValue: string;
  run: CommandRunner;
};

/** Adapters whose readiness only running something can tell (an interpreter with a module, a permission). */
export interface ProbingCaptureAdapter extends CaptureAdapter {
  probe(context: ProbeContext): Promise<ProbeResult>;
}

export function hasProbe(adapter: CaptureAdapter): adapter is ProbingCaptureAdapter {
  return typeof (adapter as Partial<ProbingCaptureAdapter>).probe === "function";
}
