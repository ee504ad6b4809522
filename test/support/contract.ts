/**
 * The MCP tools of the interface contract that this release implements: its tool-family table (Workspace,
 * Capture and import, Detached capture, Discovery, Investigations, Experiments, Runs and artifacts,
 * Evidence products, Reductions, Analysis, Drill-down, Findings) plus list_experiment_trials, which the
 * contract's experiment section names. tools/list of the compiled binary must equal this list plus
 * `inventedTools` exactly, so a tool that goes missing fails a test, and so does one added without being
 * listed here. A branch that implements another contract tool moves its name from the second list to the first.
 */
export const implementedContractTools = [
  // Workspace
  "initialize_workspace",
  "workspace_status",
  "workload_configuration_status",
  "configure_workload",
  "list_capabilities",
  "start_capability_setup",
  "get_capability_setup",
  "cancel_capability_setup",
  "prepare_capabilities",
  "prepare_adapter",
  "prepare_workload_dependencies",
  "validate_workspace",
  // Capture and import
  "plan_capture",
  "execute_capture_plan",
  "import_artifact",
  "extract_benchmark_samples",
  "extract_pyperf",
  "extract_python_startup",
  "extract_pytest",
  "extract_coverage",
  "extract_memray",
  "extract_perfetto",
  "extract_nsight_systems",
  "extract_observations",
  // The contract names it in its workflow section rather than the family table (CLI: flameox import-xctrace).
  "import_xctrace",
  // Detached capture
  "start_detached_capture",
  "get_detached_capture",
  "cancel_detached_capture",
  // Discovery
  "list_declared_workflows",
  "get_declared_workflow",
  // Investigations
  "create_investigation",
  "list_investigations",
  "get_investigation",
  "record_hypothesis",
  "get_hypothesis",
  // Experiments
  "plan_experiment",
  "run_experiment",
  "get_experiment",
  "list_experiment_trials",
  "freeze_run_set",
  // Runs and artifacts
  "list_runs",
  "get_run",
  "list_artifacts",
  "get_artifact",
  "get_native_viewer_plan",
  // Evidence products
  "summarize_evidence",
  "register_artifact_pipeline",
  "compare_artifact_pipelines",
  // Reductions
  "plan_reduction",
  "execute_reduction",
  "get_reduction",
  // Analysis
  "analyze_hotspots",
  "analyze_scaling",
  "analyze_pytorch",
  "analyze_accelerator_launches",
  "analyze_memory",
  "analyze_execution",
  "analyze_failures",
  "compare_run_sets",
  "record_analysis",
  "record_comparison",
  // Drill-down
  "get_evidence",
  "query_measurements",
  "get_frame_callers",
  "get_frame_callees",
  "get_stack_examples",
  "get_trace_window",
  // Findings
  "record_finding",
  "list_findings",
  "get_finding",
] as const;

/**
 * Tools this release offers beside the contract's, under names it invents; each says so in its description
 * (and so in `flameox mcp inspect`). configure_experiment: configure_workload's twin for [experiments.<name>].
 */
export const inventedTools = ["configure_experiment"] as const;

/** Exactly what tools/list offers: the contract's implemented tools and the invented ones. */
export const offeredTools = [...implementedContractTools, ...inventedTools] as const;

/** Sorted copy, for comparing with a tools/list answer regardless of registration order. */
export function sortedToolNames(names: readonly string[]): string[] {
  return [...names].sort();
}

/**
 * The CLI options the contract names per command (its "CLI specification"). Each one either works or is
 * absent from help; `implemented: false` marks those this release leaves out (refused as unknown).
 * `positionals` are placeholders (and companion options) an invocation needs to reach the option parser.
 */
export type ContractCliOption = { command: string[]; option: string; value?: string; positionals?: string[]; implemented: boolean };

export const contractCliOptions: ContractCliOption[] = [
  { command: ["capabilities"], option: "--active", implemented: true },
  { command: ["capabilities"], option: "--refresh", implemented: true },
  ...(["plan", "run"] as const).flatMap((verb) => [
    { command: ["capture", verb], option: "--workload", value: "busy", positionals: ["command"], implemented: true },
    { command: ["capture", verb], option: "--parameters", value: "{}", positionals: ["command"], implemented: true },
    { command: ["capture", verb], option: "--adapter-options", value: "{}", positionals: ["command"], implemented: true },
  ]),
  { command: ["import"], option: "--kind", value: "sample_profile", positionals: ["missing.collapsed"], implemented: true },
  { command: ["experiment", "trial"], option: "--experiment-id", value: "e1", positionals: ["t1"], implemented: true },
  { command: ["analyze", "accelerator-launches"], option: "--compare-to", value: "r2", positionals: ["r1"], implemented: true },
  { command: ["analyze", "accelerator-launches"], option: "--phase", value: "train", positionals: ["r1"], implemented: true },
  { command: ["analyze", "execution"], option: "--compare", value: "r2", positionals: ["r1"], implemented: true },
  { command: ["evidence", "summarize"], option: "--format", value: "markdown", implemented: true },
  { command: ["trace", "window"], option: "--start", value: "1", positionals: ["sha256:0", "--end", "2"], implemented: true },
  { command: ["trace", "window"], option: "--end", value: "2", positionals: ["sha256:0", "--start", "1"], implemented: true },
  { command: ["open"], option: "--launch", positionals: ["r1"], implemented: true },
  { command: ["mcp", "serve"], option: "--init", implemented: true },
  { command: ["recover"], option: "--quarantine", value: "q1", implemented: true },
  { command: ["gc"], option: "--dry-run", implemented: true },
  { command: ["gc"], option: "--apply", implemented: true },
  { command: ["gc"], option: "--restore", value: "trash-missing", implemented: true },
  { command: ["gc"], option: "--purge", value: "trash-missing", implemented: true },
  { command: ["gc"], option: "--minimum-age-hours", value: "24", implemented: true },
];

/** Commands the contract names that this release does not have (they are unknown commands, exit 2). */
export const contractCliCommandsNotYetImplemented: string[][] = [];

/** The contract's common options, accepted before or after any command. */
export const contractGlobalOptions = ["--workspace", "--project-root", "--json", "--quiet", "--log-level", "--timeout"];
