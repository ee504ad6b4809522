import { describe, expect, test } from "bun:test";
import { failureEnvelope } from "../../../src/domain/envelope.ts";
import {
  capabilityUnavailable,
  exitCodeFor,
  FlameoxError,
  invalidConfiguration,
  needsExtraction,
  notFound,
  planRefused,
  runNotFound,
  staleInput,
  toFlameoxError,
  undeclared,
  writeLockTimeout,
} from "../../../src/domain/errors.ts";

describe("error factories carry their recovery", () => {
  test("a missing run is RUN_NOT_FOUND with the contract's exact discover_runs recovery", () => {
    const error = runNotFound("r-1");
    expect(error.code).toBe("RUN_NOT_FOUND");
    expect(error.details).toEqual({ missing_entity: "run", run_id: "r-1" });
    expect(error.recovery).toEqual({
      kind: "discover_runs",
      next_tool: "list_runs",
      safe_to_repeat_same_call: false,
      retry_after_ms: null,
    });
  });

  test("a missing stored record is INVALID_ARGUMENTS naming the field, with the list tool and its arguments", () => {
    const error = notFound("investigation", "i-9", { list: { tool: "list_investigations", arguments: { limit: 100 } } });
    expect(error.code).toBe("INVALID_ARGUMENTS");
    expect(exitCodeFor(error.code)).toBe(2);
    expect(error.details).toMatchObject({ missing_entity: "investigation", investigation_id: "i-9", next_tool: "list_investigations" });
    expect(error.details.fields).toEqual([
      { field: "investigation_id", message: "no investigation with this id exists", type: "value_error" },
    ]);
    expect(error.recovery).toEqual({
      kind: "manual",
      next_tool: "list_investigations",
      safe_to_repeat_same_call: false,
      retry_after_ms: null,
      context: { arguments: { limit: 100 } },
    });
    expect(error.nextTool).toBe("list_investigations");
    expect(error.nextArguments).toEqual({ limit: 100 });
    const artifact = notFound("artifact", "sha256:00", { list: { tool: "list_artifacts" } });
    expect(artifact.recovery.kind).toBe("discover_artifacts");
    expect(notFound("experiment", "e-1").recovery).toEqual({
      kind: "manual",
      next_tool: null,
      safe_to_repeat_same_call: false,
      retry_after_ms: null,
    });
  });

  test("a refused plan re-plans with the same request; capture and experiment plans name their own planner", () => {
    const capture = planRefused("capture", "The capture plan has expired.", {
      replanArguments: { workload_name: "bench", adapter: "py-spy", parameters: {} },
    });
    expect(capture.code).toBe("INVALID_CAPTURE_PLAN");
    expect(capture.recovery).toEqual({
      kind: "replan_capture",
      next_tool: "plan_capture",
      safe_to_repeat_same_call: false,
      retry_after_ms: null,
      context: { arguments: { workload_name: "bench", adapter: "py-spy", parameters: {} } },
    });
    const experiment = planRefused("experiment", "The experiment plan was already consumed.");
    expect(experiment.recovery.next_tool).toBe("plan_experiment");
    expect(experiment.remediation).toEqual(["Call plan_experiment again; nothing was executed."]);
  });

  test("evidence that is not extracted names the extractor with the run id; extract_perfetto keeps its typed context", () => {
    const perfetto = needsExtraction("extract_perfetto", "r-2", "not normalized", { artifactId: "sha256:ab" });
    expect(perfetto.code).toBe("CAPABILITY_UNAVAILABLE");
    expect(perfetto.details).toEqual({ next_tool: "extract_perfetto", run_id: "r-2", artifact_id: "sha256:ab" });
    expect(perfetto.recovery).toEqual({
      kind: "extract_perfetto",
      next_tool: "extract_perfetto",
      safe_to_repeat_same_call: true,
      retry_after_ms: null,
      context: { kind: "extract_perfetto", run_id: "r-2", arguments: { run_id: "r-2" } },
    });
    const pyperf = needsExtraction("extract_pyperf", "r-3", "not extracted");
    expect(pyperf.recovery).toMatchObject({ kind: "extract_evidence", next_tool: "extract_pyperf", safe_to_repeat_same_call: true });
    expect(pyperf.nextArguments).toEqual({ run_id: "r-3" });
  });

  test("invalid configuration: repairable by a create, or a manual fix verified by workload_configuration_status", () => {
    const repairable = invalidConfiguration("flameox.toml is invalid", { repairable: true });
    expect(repairable.code).toBe("WORKSPACE_INVALID");
    expect(repairable.details).toEqual({ invalid_configuration: true, next_tool: "configure_workload" });
    expect(repairable.recovery.context).toEqual({
      kind: "configure_workload",
      operation: "create",
      config_path: "flameox.toml",
      arguments: { operation: "create" },
      caller_supplies: ["name", "argv"],
    });
    const manual = invalidConfiguration("bad", { repairable: false, diagnostic: "x".repeat(900) });
    expect(manual.recovery.kind).toBe("manual");
    expect(manual.recovery.next_tool).toBeNull();
    expect(manual.recovery.context).toMatchObject({ kind: "manual_configuration", verification_tool: "workload_configuration_status" });
    expect(String(manual.recovery.context?.diagnostic)).toHaveLength(500);
  });

  test("capability unavailable: re-check capabilities with exact arguments, or the managed setup action", () => {
    const probe = capabilityUnavailable("py-spy is missing here.", {
      next: { tool: "list_capabilities", arguments: { mode: "active_refresh", adapter: "py-spy" } },
    });
    expect(probe.recovery).toEqual({
      kind: "inspect_capabilities",
      next_tool: "list_capabilities",
      safe_to_repeat_same_call: false,
      retry_after_ms: null,
      context: { arguments: { mode: "active_refresh", adapter: "py-spy" } },
    });
    const setup = capabilityUnavailable("py-spy is not installed.", {
      next: { tool: "start_capability_setup", arguments: { adapters: ["py-spy"], idempotency_key: "setup-py-spy-0.4.3-1" } },
    });
    expect(setup.recovery).toEqual({
      kind: "start_capability_setup",
      next_tool: "start_capability_setup",
      safe_to_repeat_same_call: true,
      retry_after_ms: null,
      context: { arguments: { adapters: ["py-spy"], idempotency_key: "setup-py-spy-0.4.3-1" } },
    });
    expect(capabilityUnavailable("no tool").recovery.next_tool).toBe("list_capabilities");
  });

  test("stale input re-reads the current state with fresh arguments; a held lock says wait and repeat", () => {
    const stale = staleInput("Hypothesis h is at revision 3, not 2.", {
      details: { current_revision: 3 },
      fresh: { tool: "get_hypothesis", arguments: { hypothesis_id: "h" } },
    });
    expect(stale.code).toBe("REVISION_CONFLICT");
    expect(stale.recovery).toMatchObject({ next_tool: "get_hypothesis", context: { arguments: { hypothesis_id: "h" } } });
    const lock = writeLockTimeout("state.sqlite", "held");
    expect(lock.retryable).toBe(true);
    expect(lock.recovery).toEqual({ kind: "wait_then_repeat", next_tool: null, safe_to_repeat_same_call: true, retry_after_ms: 100 });
  });

  test("an undeclared workload or experiment lists the declared ones of that kind", () => {
    const error = undeclared("experiment", "sweep", { declared: ["b", "a"] });
    expect(error.code).toBe("WORKSPACE_INVALID");
    expect(error.details).toEqual({ next_tool: "list_declared_workflows", kind: "experiment", name: "sweep", declared: ["a", "b"] });
    expect(error.recovery).toMatchObject({ kind: "discover_workflows", context: { arguments: { kind: "experiment" } } });
  });

  test("the envelope projects the error's own recovery; unknown throwables become INTERNAL_ERROR or a full disk", () => {
    const error = planRefused("capture", "consumed");
    expect(failureEnvelope(error).error!.recovery).toBe(error.recovery);
    const disk = toFlameoxError(Object.assign(new Error("no space"), { code: "ENOSPC" }));
    expect(disk.code).toBe("STORAGE_QUOTA_EXCEEDED");
    const internal = toFlameoxError(new TypeError("boom"));
    expect(internal).toBeInstanceOf(FlameoxError);
    expect(internal.code).toBe("INTERNAL_ERROR");
    expect(internal.message).toBe("Internal error: boom");
    expect(internal.recovery.kind).toBe("manual");
  });
});
