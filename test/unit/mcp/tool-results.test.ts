import { expect, test } from "bun:test";
import { failureEnvelope, successEnvelope } from "../../../src/domain/envelope.ts";
import { planRefused } from "../../../src/domain/errors.ts";
import { boundedJson, failureResult, successResult, supportsResultExtensions } from "../../../src/mcp/tool-results.ts";

test("the text is the envelope itself as compact JSON, for results and for errors with their recovery", () => {
  const success = successResult({ result: { run_id: "r1", rows: [1, 2] } });
  expect(success.content).toEqual([
    { type: "text", text: '{"schema_version":1,"ok":true,"result":{"run_id":"r1","rows":[1,2]},"error":null}' },
  ]);
  const error = planRefused("capture", "The capture plan was already consumed.", {
    replanArguments: { workload_name: "hot", adapter: "py-spy" },
  });
  const failure = failureResult(error);
  const parsed = JSON.parse((failure.content[0] as { text: string }).text);
  expect(parsed).toEqual(failure.structuredContent);
  expect(parsed.error.code).toBe("INVALID_CAPTURE_PLAN");
  expect(parsed.error.recovery.next_tool).toBe("plan_capture");
  expect(parsed.error.recovery.context.arguments).toEqual({ workload_name: "hot", adapter: "py-spy" });
});

test("resource_link blocks only when asked for; protocol versions from 2025-06-18 support them", () => {
  const outcome = { result: {}, links: [{ uri: "flameox://runs/r1", name: "Run r1", description: "d" }] };
  expect(successResult(outcome, { resourceLinks: true }).content.map((item) => item.type)).toEqual(["text", "resource_link"]);
  expect(successResult(outcome, { resourceLinks: false }).content.map((item) => item.type)).toEqual(["text"]);
  expect(["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", null].map(supportsResultExtensions)).toEqual([
    false,
    false,
    true,
    true,
    false,
  ]);
});

test("an over-long text keeps valid JSON: the largest list is halved until it fits, and the text says what it left out", () => {
  const rows = Array.from({ length: 1000 }, (_, index) => ({ index, name: `row-${index}-${"x".repeat(40)}` }));
  const envelope = successEnvelope({ total: 1000, rows, tags: ["a", "b"] });
  const text = boundedJson(envelope, 8000);
  expect(text.length).toBeLessThanOrEqual(8000);
  const parsed = JSON.parse(text);
  expect(parsed.result.total).toBe(1000);
  expect(parsed.result.tags).toEqual(["a", "b"]);
  expect(parsed.result.rows[0]).toEqual(rows[0]);
  expect(parsed.text_truncated.omitted_items).toBe(1000 - parsed.result.rows.length);
  expect(parsed.text_truncated.characters).toBe(JSON.stringify(envelope).length);
  // Without a list to shorten, the text still fits and still names the error.
  const long = failureEnvelope(planRefused("capture", "m".repeat(50_000)));
  const fallback = JSON.parse(boundedJson(long, 8000));
  expect(fallback.error.code).toBe("INVALID_CAPTURE_PLAN");
  expect(boundedJson(long, 8000).length).toBeLessThanOrEqual(8000);
});
