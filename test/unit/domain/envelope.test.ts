import { expect, test } from "bun:test";
import { canonicalJson, digestOf } from "../../../src/domain/canonical-json.ts";
import { FlameoxError, exitCodeFor, errorCodes, invalidConfiguration, needsExtraction } from "../../../src/domain/errors.ts";
import { failureEnvelope, recoveryFor } from "../../../src/domain/envelope.ts";

test("recovery names the exact next step for each kind of failure", () => {
  expect(recoveryFor(new FlameoxError({ code: "WORKSPACE_NOT_FOUND", message: "x" }))).toEqual({
    kind: "initialize_workspace",
    next_tool: "initialize_workspace",
    safe_to_repeat_same_call: false,
    retry_after_ms: null,
  });
  expect(recoveryFor(new FlameoxError({ code: "WRITE_LOCK_TIMEOUT", message: "x" }))).toEqual({
    kind: "wait_then_repeat",
    next_tool: null,
    safe_to_repeat_same_call: true,
    retry_after_ms: 100,
  });
  expect(recoveryFor(new FlameoxError({ code: "RUN_NOT_FOUND", message: "x" })).next_tool).toBe("list_runs");
  expect(recoveryFor(new FlameoxError({ code: "INVALID_CAPTURE_PLAN", message: "x" })).kind).toBe("replan_capture");
  expect(recoveryFor(new FlameoxError({ code: "CAPABILITY_UNAVAILABLE", message: "x" })).next_tool).toBe("list_capabilities");
  expect(recoveryFor(new FlameoxError({ code: "INTERNAL_ERROR", message: "x", retryable: true }))).toEqual({
    kind: "repeat_same_call",
    next_tool: null,
    safe_to_repeat_same_call: true,
    retry_after_ms: 250,
  });
  expect(recoveryFor(invalidConfiguration("bad", { repairable: true }))).toEqual({
    kind: "configure_workload",
    next_tool: "configure_workload",
    safe_to_repeat_same_call: false,
    retry_after_ms: null,
    context: {
      kind: "configure_workload",
      operation: "create",
      config_path: "flameox.toml",
      arguments: { operation: "create" },
      caller_supplies: ["name", "argv"],
    },
  });
  expect(recoveryFor(invalidConfiguration("bad", { repairable: false, diagnostic: "line 3: oops" }))).toEqual({
    kind: "manual",
    next_tool: null,
    safe_to_repeat_same_call: false,
    retry_after_ms: null,
    context: {
      kind: "manual_configuration",
      config_path: "flameox.toml",
      diagnostic: "line 3: oops",
      verification_tool: "workload_configuration_status",
    },
  });
  const perfetto = recoveryFor(needsExtraction("extract_perfetto", "r1", "x"));
  expect(perfetto.kind).toBe("extract_perfetto");
  expect(perfetto.safe_to_repeat_same_call).toBe(true);
  expect(perfetto.context?.run_id).toBe("r1");
});

test("the failure envelope carries every field and exit codes cover every error code", () => {
  const envelope = failureEnvelope(new FlameoxError({ code: "REVISION_CONFLICT", message: "stale", runId: "r", remediation: ["reread"] }));
  expect(Object.keys(envelope)).toEqual(["schema_version", "ok", "result", "error"]);
  expect(Object.keys(envelope.error!)).toEqual(["code", "message", "retryable", "details", "remediation", "run_id", "recovery"]);
  for (const code of errorCodes) expect(exitCodeFor(code)).toBeWithin(1, 10);
  expect(exitCodeFor("INVALID_ARGUMENTS")).toBe(2);
  expect(exitCodeFor("PROCESS_TIMEOUT")).toBe(8);
  expect(exitCodeFor("EXECUTION_REFUSED")).toBe(9);
});

test("canonical JSON follows RFC 8785: sorted keys, no whitespace, ECMAScript numbers", () => {
  expect(canonicalJson({ b: 1, a: [true, null, "é"], c: { z: 1e21, y: 0.1 } })).toBe('{"a":[true,null,"é"],"b":1,"c":{"y":0.1,"z":1e+21}}');
  expect(canonicalJson({ "\u00e9": 1, e: 2 })).toBe('{"e":2,"é":1}');
  expect(digestOf({ a: 1, b: 2 })).toBe(digestOf({ b: 2, a: 1 }));
  expect(() => canonicalJson({ value: Number.NaN })).toThrow();
});
