/**
 * The server instructions, identical in initialize and `mcp inspect --json`. They teach the
 * first-run sequence so an agent never has to guess which tool comes next.
 */
export const serverInstructions = [
  "flameox collects, preserves, compares and inspects local runtime evidence (profiles, traces, benchmarks, tests, coverage, memory) with reproducible provenance. Use it when a claim about speed, memory, execution paths or test behaviour needs runtime evidence; do not prove runtime claims from source reading alone, and do not edit source through it.",
  "First run: call workspace_status. If it reports WORKSPACE_NOT_FOUND, call initialize_workspace (it creates .diagnostics only under the fixed project root), then workspace_status again.",
  "Then call workload_configuration_status. If flameox.toml is missing or has no workload, call configure_workload with a validated argument array: it writes the canonical workload definition but never executes it.",
  "Then: list_declared_workflows (no arguments lists workloads; kind='experiment' lists experiments) → get_declared_workflow → list_capabilities(adapter='<selected adapter>') → start_capability_setup only when the scoped result names setup_adapters → plan_capture(preflight_mode='auto', capture_mode='auto') → execute_capture_plan for short work, or start_detached_capture then get_detached_capture for long work → get_run → analyze.",
  "Host containment is not required: plan_capture with capture_mode='auto' runs the declared workload directly and records that limitation; use capture_mode='managed' only when the project requires containment.",
  "A consumed capture plan is never retryable: if a response is lost, inspect list_runs/get_run instead of resubmitting the plan_id. Detached starts are retryable only with the same idempotency key.",
  "Existing evidence: list_runs and list_artifacts expose artifact kinds. analyze_hotspots answers where time goes (then get_frame_callers, get_frame_callees, get_stack_examples); compare_run_sets answers whether a change is real; extract_* tools normalize native artifacts; an analysis that lacks its evidence names the exact extract or import tool to call. Record conclusions with record_analysis, record_comparison and record_finding.",
  "Every result is bounded (limit, total, truncated, cursor). Errors carry a code, remediation and a recovery with the exact next tool.",
].join("\n\n");
