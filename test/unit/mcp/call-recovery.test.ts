import { expect, test } from "bun:test";
import { capabilityUnavailable, invalidArguments, runNotFound, staleCursor } from "../../../src/domain/errors.ts";
import { withCallableRecovery, withCorrectedCall } from "../../../src/mcp/call-recovery.ts";
import { toolsByName } from "../../../src/mcp/registry.ts";

const tool = (name: string) => toolsByName().get(name)!;

test("a malformed optional field: the same tool without it, so its default applies", () => {
  const error = invalidArguments("list_runs", [{ field: "limit", message: "too small", type: "greater_than_equal" }]);
  const corrected = withCorrectedCall(error, tool("list_runs"), { limit: 0, filter: { adapter: "py-spy" } });
  expect(corrected.code).toBe("INVALID_ARGUMENTS");
  expect(corrected.recovery).toEqual({
    kind: "correct_arguments",
    next_tool: "list_runs",
    safe_to_repeat_same_call: false,
    retry_after_ms: null,
    context: { arguments: { filter: { adapter: "py-spy" } }, removed_fields: ["limit"] },
  });
});

test("a stale cursor: the same request from its first page", () => {
  const corrected = withCorrectedCall(staleCursor("the snapshot changed"), tool("list_runs"), { limit: 5, cursor: "abc" });
  expect(corrected.recovery.next_tool).toBe("list_runs");
  expect(corrected.recovery.context?.arguments).toEqual({ limit: 5 });
});

test("no correction when a required field is wrong, or when nothing would be left of a call that needs something", () => {
  const required = invalidArguments("plan_capture", [{ field: "adapter", message: "Field required", type: "missing" }]);
  expect(withCorrectedCall(required, tool("plan_capture"), { workload_name: "hot" }).recovery.next_tool).toBeNull();
  const empty = invalidArguments("freeze_run_set", [{ field: "run_ids", message: "too short", type: "too_short" }]);
  expect(withCorrectedCall(empty, tool("freeze_run_set"), { run_ids: [] }).recovery.next_tool).toBeNull();
});

test("hints are made callable: missing arguments of a tool that needs none become {}, a hint that would fail becomes manual", () => {
  expect(withCallableRecovery(runNotFound("r1"), toolsByName()).recovery.context?.arguments).toEqual({});
  const unusable = capabilityUnavailable("x", { next: { tool: "plan_capture", arguments: { adapter: "py-spy" } } });
  const manual = withCallableRecovery(unusable, toolsByName()).recovery;
  expect(manual.kind).toBe("manual");
  expect(manual.next_tool).toBeNull();
  expect(manual.context).toEqual({ suggested_tool: "plan_capture" });
  // A tool this server does not serve is never a hint to call.
  const absent = withCallableRecovery(
    capabilityUnavailable("x", { next: { tool: "no_such_tool", arguments: {} } }),
    toolsByName(),
  ).recovery;
  expect([absent.next_tool, absent.context]).toEqual([null, { suggested_tool: "no_such_tool" }]);
});
