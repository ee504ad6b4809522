/**
 * The CLI and the MCP tools check a request with the same schema: the same bad request is refused with
 * the same field problems by `flameox findings record` and by record_finding, and --limit has the
 * tool's bounds.
 */
import { expect, test } from "bun:test";
import { FlameoxError } from "../../../src/domain/errors.ts";
import { pageLimits } from "../../../src/domain/requests/limits.ts";
import { RecordFindingRequest } from "../../../src/domain/requests/investigations.ts";
import { pageOf, parseCliRequest } from "../../../src/cli/arguments.ts";
import { toolsByName } from "../../../src/mcp/registry.ts";
import { callTool } from "../../../src/mcp/server.ts";
import type { Services } from "../../../src/services/services.ts";

function refusal(action: () => unknown): FlameoxError {
  try {
    action();
  } catch (error) {
    if (error instanceof FlameoxError) return error;
    throw error;
  }
  throw new Error("expected a refusal");
}

test("a finding the tool refuses is refused by the CLI with the same field problems", async () => {
  const request = {
    kind: "performance",
    title: "t".repeat(501),
    claim: "c",
    evidence_level: "measured",
    confidence: "low",
    assessment: "unassessed",
    limitations: Array.from({ length: 21 }, (_, index) => `limit ${index}`),
    next_experiments: [{ nested: { not: "a scalar" } }],
  };
  // Validation fails before any service is used, so no workspace is needed.
  const tool = await callTool(toolsByName().get("record_finding")!, request, {} as Services, { signal: new AbortController().signal });
  const fromTool = (tool.structuredContent as { error: { code: string; details: { fields: unknown[] } } }).error;
  const fromCli = refusal(() => parseCliRequest(RecordFindingRequest, JSON.stringify(request), "findings record"));
  expect(fromCli.code).toBe("INVALID_ARGUMENTS");
  expect(fromTool.code).toBe("INVALID_ARGUMENTS");
  expect(fromCli.details.fields).toEqual(fromTool.details.fields);
  expect((fromCli.details.fields as { field: string }[]).map((problem) => problem.field).sort()).toEqual([
    "evidence_level",
    "limitations",
    "next_experiments.0.nested",
    "title",
  ]);
});

test("--limit and --cursor have the tool's bounds", () => {
  expect(pageOf({}, pageLimits.findings)).toEqual({ limit: pageLimits.findings.default, cursor: null });
  expect(pageOf({ limit: "1000", cursor: "abc" }, pageLimits.findings)).toEqual({ limit: 1000, cursor: "abc" });
  expect(refusal(() => pageOf({ limit: "1001" }, pageLimits.findings)).message).toBe("--limit must be an integer between 1 and 1000.");
  expect(refusal(() => pageOf({ limit: "0" }, pageLimits.findings)).code).toBe("INVALID_ARGUMENTS");
  expect(refusal(() => pageOf({ limit: "101" }, pageLimits.declaredWorkflows)).message).toBe(
    "--limit must be an integer between 1 and 100.",
  );
  expect(refusal(() => pageOf({ cursor: "x".repeat(4097) }, pageLimits.findings)).code).toBe("INVALID_ARGUMENTS");
});
