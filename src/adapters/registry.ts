/**
 * What flameox knows about each capture adapter before probing anything: how it is provisioned,
 * which executable or module it needs, what it produces, and the exact remedy when it is missing.
 */
export type Provisioning = "bundled" | "host" | "managed_runtime";

/**
 * The answer a capture comes back with: execute_capture_plan (and a terminal get_detached_capture)
 * run this analysis over the new run and return it, bounded, beside the receipt
 * (services/receipt-analysis.ts maps each kind onto the analysis service that computes it).
 */
export type DefaultAnalysisKind = "runtime" | "hotspots" | "test_outcomes" | "memory" | "coverage" | "benchmark" | "operators" | "imports";

export type DefaultAnalysis = {
  kind: DefaultAnalysisKind;
  /** The tool that gives the whole answer (and its pages); the receipt's next_tool when the answer names no closer step. */
  tool: string;
  /** Arguments of that tool besides the run, which services add under the name the tool uses for it. */
  arguments?: Record<string, unknown>;
};

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
  defaultAnalysis: DefaultAnalysis;
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
    defaultAnalysis: { kind: "runtime", tool: "get_run" },
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
    defaultAnalysis: { kind: "hotspots", tool: "analyze_hotspots" },
  },
  {
    name: "perf",
    summary:
      "Samples native (and JIT-less interpreter) call stacks of any workload with linux perf record -g; symbolized with perf script.",
    provisioning: "host",
    executable: "perf",
    versionArguments: ["--version"],
    artifactKinds: ["sample_profile", "process_output"],
    supportedFormats: ["perf_data"],
    supportedModes: ["trusted_local"],
    features: ["cpu_samples", "native_stacks", "kernel_stacks", "call_graph"],
    limitations: [
      "Frame-pointer call graphs: code built without frame pointers shows short stacks.",
      "perf.data is host-specific: it is symbolized on the host that recorded it.",
    ],
    permissions: ["perf_event_open"],
    needsActivePermissionProbe: true,
    installRemedy: "apt-get install linux-perf (Debian; `linux-tools-$(uname -r)` on Ubuntu), then call list_capabilities again.",
    options: { frequency: "sampling frequency in Hz (1..100000, default 999)" },
    defaultAnalysis: { kind: "hotspots", tool: "analyze_hotspots" },
  },
  {
    name: "pyperf",
    summary: "Benchmarks the whole workload command with pyperf command: calibrated loops, warm-ups and values in fresh processes.",
    provisioning: "host",
    executable: null,
    versionArguments: [],
    artifactKinds: ["benchmark_samples", "process_output"],
    supportedFormats: ["pyperf_json"],
    supportedModes: ["trusted_local"],
    features: ["benchmark_values", "warmups", "max_rss"],
    limitations: ["Times the whole command, including interpreter startup."],
    permissions: [],
    needsActivePermissionProbe: false,
    installRemedy: "<python> -m pip install pyperf==2.11.0 (into the workload's interpreter), then call list_capabilities again.",
    options: {
      processes: "worker processes (1..10000, default 3)",
      values: "values per process (default 3)",
      warmups: "warm-ups per process (default 1)",
      loops: "loops per value (default: calibrated)",
      name: "benchmark name (default 'workload')",
    },
    defaultAnalysis: { kind: "benchmark", tool: "query_measurements", arguments: { name_prefix: "pyperf." } },
  },
  {
    name: "pytest",
    summary:
      "Runs a pytest suite (serial or pytest-xdist) with flameox's plugin: per-test phases and outcomes, fixtures, collection time, workers, crashed workers, time to first failure.",
    provisioning: "host",
    executable: null,
    versionArguments: [],
    artifactKinds: ["test_execution", "process_output"],
    supportedFormats: ["flameox_pytest_events"],
    supportedModes: ["trusted_local"],
    features: ["test_phases", "test_outcomes", "fixtures", "xdist_workers", "crashed_workers", "time_to_first_failure"],
    limitations: ["The workload must be `python -m pytest …` or `pytest …`.", "xdist hooks do not expose per-test queue latency."],
    permissions: [],
    needsActivePermissionProbe: false,
    installRemedy:
      "<python> -m pip install pytest==9.2.0 pytest-xdist==3.8.0 (into the workload's interpreter), then call list_capabilities again.",
    options: {},
    defaultAnalysis: { kind: "test_outcomes", tool: "analyze_failures" },
  },
  {
    name: "coverage",
    summary:
      "Runs a Python script or module under coverage.py in branch mode: executed lines and arcs per project file (optionally per test context).",
    provisioning: "host",
    executable: null,
    versionArguments: [],
    artifactKinds: ["execution_coverage", "process_output"],
    supportedFormats: ["coverage_sqlite"],
    supportedModes: ["trusted_local"],
    features: ["line_hits", "branch_arcs", "contexts"],
    limitations: ["Files outside the project are not reported.", "Inline `python -c` code is not supported."],
    permissions: [],
    needsActivePermissionProbe: false,
    installRemedy: "<python> -m pip install coverage==7.17.5 (into the workload's interpreter), then call list_capabilities again.",
    options: {
      context: "static context label for every line",
      dynamic_context: "'test_function' labels lines with the test that ran them",
    },
    defaultAnalysis: { kind: "coverage", tool: "analyze_execution" },
  },
  {
    name: "memray",
    summary:
      "Tracks every allocation of a Python script or module with memray: peak memory, allocations alive at the high-water mark by stack, leaked bytes.",
    provisioning: "host",
    executable: null,
    versionArguments: [],
    artifactKinds: ["memory_profile", "process_output"],
    supportedFormats: ["memray_bin"],
    supportedModes: ["trusted_local"],
    features: ["peak_memory", "allocation_stacks", "leaks"],
    limitations: ["Only the main process is tracked; no native frames."],
    permissions: [],
    needsActivePermissionProbe: false,
    installRemedy: "<python> -m pip install memray==1.20.0 (into the workload's interpreter), then call list_capabilities again.",
    options: {},
    defaultAnalysis: { kind: "memory", tool: "analyze_memory" },
  },
  {
    name: "torch.profiler",
    summary:
      "Profiles a PyTorch script or module with torch.profiler (operators, input shapes, memory events, CUDA kernels when available) into Chrome traces: the whole entrypoint, or (mode 'sdk') the workload's own flameox_torch.profile() with a schedule, one trace per cycle, phase() markers kept.",
    provisioning: "host",
    executable: null,
    versionArguments: [],
    artifactKinds: ["execution_trace", "collector_metadata", "process_output"],
    supportedFormats: ["chrome_trace"],
    supportedModes: ["trusted_local"],
    features: ["operators", "input_shapes", "memory_events", "cuda_kernels", "python_stacks"],
    limitations: [
      "SDK mode needs the workload to `import flameox_torch` and open `flameox_torch.profile()` (calling step() per iteration); the launcher makes that module importable.",
      "Recording shapes, memory and stacks slows small operators a lot.",
    ],
    permissions: [],
    needsActivePermissionProbe: false,
    installRemedy: "<python> -m pip install torch==2.13.0 (into the workload's interpreter), then call list_capabilities again.",
    options: {
      mode: "'whole_entrypoint' (default) or 'sdk'",
      activities: "non-empty unique subset of cpu, cuda, cuda_if_available (not both cuda variants; default [cpu, cuda_if_available])",
      record_shapes: "boolean (default true)",
      profile_memory: "boolean (default true)",
      with_stack: "boolean (default true)",
      with_flops: "boolean (default false)",
      with_modules: "boolean (default false)",
      schedule:
        "sdk mode only, required there: {wait 0..10000 (1), warmup 0..10000 (1), active 1..10000 (1), repeat 1..100 (1), skip_first 0..10000 (0)} integers; repeat = cycles = trace files",
    },
    defaultAnalysis: { kind: "operators", tool: "analyze_pytorch" },
  },
  {
    name: "python-startup",
    summary: "Measures Python startup: fresh-interpreter wall time and peak RSS per sample, plus one -X importtime run grouped by package.",
    provisioning: "bundled",
    executable: null,
    versionArguments: [],
    artifactKinds: ["python_startup", "process_output"],
    supportedFormats: ["flameox_python_startup"],
    supportedModes: ["trusted_local"],
    features: ["startup_wall_time", "peak_rss", "import_time_by_package"],
    limitations: ["File-system caches are not dropped between samples."],
    permissions: [],
    needsActivePermissionProbe: false,
    installRemedy: "Needs only a Python 3 interpreter: declare the workload as `python …` with an installed python.",
    options: { samples: "fresh-interpreter samples (1..1000, default 5)" },
    defaultAnalysis: { kind: "imports", tool: "query_measurements", arguments: { name_prefix: "import.package_self_us" } },
  },
  {
    name: "v8",
    summary: "Profiles a node or bun workload with V8's --cpu-prof into a .cpuprofile: JavaScript stacks by time.",
    provisioning: "host",
    executable: null,
    versionArguments: [],
    artifactKinds: ["sample_profile", "process_output"],
    supportedFormats: ["v8_cpuprofile"],
    supportedModes: ["trusted_local"],
    features: ["cpu_samples", "javascript_stacks"],
    limitations: ["The workload must be `node …` or `bun …`; worker threads write separate profiles that are not collected."],
    permissions: [],
    needsActivePermissionProbe: false,
    installRemedy: "Install Node.js or Bun and declare the workload as `node <script>`.",
    options: { interval_us: "sampling interval in microseconds (10..100000, default 1000)" },
    defaultAnalysis: { kind: "hotspots", tool: "analyze_hotspots" },
  },
];

export function adapterDescriptor(name: string): AdapterDescriptor | undefined {
  return adapterDescriptors.find((descriptor) => descriptor.name === name);
}

/** What list_capabilities reports of anything it lists: a capture adapter, or a reduction engine (no runs, so no default analysis). */
export type CapabilityDescriptor = Omit<AdapterDescriptor, "defaultAnalysis">;

/** Reduction engines, listed beside the capture adapters; plan_reduction uses them, plan_capture never does. */
export const reductionEngineDescriptors: CapabilityDescriptor[] = [
  {
    name: "shrinkray",
    summary: "ShrinkRay, a test-case reducer, as plan_reduction's engine 'shrinkray'; a managed provider (Python >= 3.12).",
    provisioning: "managed_runtime",
    executable: "shrinkray",
    versionArguments: ["--version"],
    artifactKinds: [],
    supportedFormats: ["text_lines", "json_top_level", "jsonl_records", "chrome_trace_events"],
    supportedModes: ["trusted_local"],
    features: ["reduction"],
    limitations: [
      "Only its managed provider environment is used, never a copy on PATH.",
      "It reduces bytes with its own passes (lines, tokens, characters), so a result need not be a subset of the partitioner's units.",
    ],
    permissions: [],
    needsActivePermissionProbe: false,
    installRemedy: "plan the reduction with engine 'native_ddmin', which needs nothing.",
    options: {},
  },
];

export const capabilityDescriptors: CapabilityDescriptor[] = [...adapterDescriptors, ...reductionEngineDescriptors];

export function capabilityDescriptor(name: string): CapabilityDescriptor | undefined {
  return capabilityDescriptors.find((descriptor) => descriptor.name === name);
}
