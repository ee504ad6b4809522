/**
 * What flameox knows about each capture adapter before probing anything: how it is provisioned,
 * which executable or module it needs, what it produces, and the exact remedy when it is missing.
 */
export type Provisioning = "bundled" | "host" | "managed_runtime";

export type AdapterDescriptor = {
  name: string;
  summary: string;
  provisioning: Provisioning;
  /** The executable looked up on PATH; null when flameox runs the workload itself. */
  executable: string | null;
  versionArguments: string[];
  artifactKinds: string[];
  supportedFormats: string[];
  supportedModes: string[];
  features: string[];
  limitations: string[];
  permissions: string[];
  /** A permission that only running the tool can confirm (ptrace, perf_event_open). */
  needsActivePermissionProbe: boolean;
  installRemedy: string;
  /** Options an agent may pass in adapter_options, with their meaning. */
  options: Record<string, string>;
};

export const adapterDescriptors: AdapterDescriptor[] = [
  {
    name: "command",
    summary: "Runs the declared workload with no profiler: exit status, output, wall/CPU time and peak RSS.",
    provisioning: "bundled",
    executable: null,
    versionArguments: [],
    artifactKinds: ["process_output"],
    supportedFormats: ["text"],
    supportedModes: ["trusted_local"],
    features: ["runtime_resources", "process_output"],
    limitations: ["No stack samples; use py-spy or perf for where time goes."],
    permissions: [],
    needsActivePermissionProbe: false,
    installRemedy: "",
    options: {},
  },
  {
    name: "py-spy",
    summary: "Samples Python stacks of the workload (and, optionally, native frames and subprocesses) with py-spy.",
    provisioning: "host",
    executable: "py-spy",
    versionArguments: ["--version"],
    artifactKinds: ["sample_profile", "process_output"],
    supportedFormats: ["speedscope"],
    supportedModes: ["trusted_local"],
    features: ["cpu_samples", "python_stacks", "native_stacks", "subprocesses", "gil", "idle"],
    limitations: ["Sampling: functions shorter than the sampling interval may be missed.", "Needs ptrace permission on Linux."],
    permissions: ["ptrace"],
    needsActivePermissionProbe: true,
    installRemedy: "pip install py-spy==0.4.3 (into the environment on PATH), then call list_capabilities again.",
    options: {
      rate: "samples per second (1..10000, default 100)",
      native: "include native C/C++ frames (boolean)",
      subprocesses: "follow child processes (boolean)",
      idle: "include idle threads (boolean)",
      gil: "only sample threads holding the GIL (boolean)",
    },
  },
];

export function adapterDescriptor(name: string): AdapterDescriptor | undefined {
  return adapterDescriptors.find((descriptor) => descriptor.name === name);
}
