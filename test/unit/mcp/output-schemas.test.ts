/**
 * Each published outputSchema accepts what its tool really answers, successes and errors alike, under the
 * validator the SDK's client applies to structuredContent (a client throws on a mismatch). Real services
 * over a real workspace; the tools run through the server's own callTool.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv";
import { listedTools, toolsByName } from "../../../src/mcp/registry.ts";
import { callTool } from "../../../src/mcp/server.ts";
import { Services } from "../../../src/services/services.ts";
import { waitFor } from "../../support/wait.ts";

let root: string;
let services: Services;
const validator = new AjvJsonSchemaValidator();
const checked = new Set<string>();
let investigationResult: Record<string, unknown>;
const originalDataHome = process.env.XDG_DATA_HOME;

beforeAll(async () => {
  root = realpathSync(mkdtempSync(join(tmpdir(), "flameox-output-schemas-")));
  // Managed provider environments live in the user's data folder: keep this test's out of the real one.
  process.env.XDG_DATA_HOME = join(root, "data");
  services = new Services({ projectRoot: root });
  await services.workspaces.initialize();
});

afterAll(() => {
  if (originalDataHome === undefined) delete process.env.XDG_DATA_HOME;
  else process.env.XDG_DATA_HOME = originalDataHome;
  rmSync(root, { recursive: true, force: true });
});

/** Calls a tool and checks its structuredContent against the tool's published outputSchema. */
async function call(name: string, args: Record<string, unknown>): Promise<{ ok: boolean; result: any; error: any }> {
  const published = listedTools().find((tool) => tool.name === name)!;
  const answer = await callTool(toolsByName().get(name)!, args, services, { signal: new AbortController().signal });
  const verdict = validator.getValidator(published.outputSchema as never)(answer.structuredContent);
  expect({ name, valid: verdict.valid, problem: verdict.errorMessage }).toEqual({ name, valid: true, problem: undefined });
  checked.add(name);
  return answer.structuredContent as { ok: boolean; result: any; error: any };
}

test("every typed outputSchema validates its tool's real results and its errors", async () => {
  const investigation = await call("create_investigation", { question: "Why is the loader slow?", symptom: "startup 2 s" });
  expect(investigation.ok).toBe(true);
  const investigationId = investigation.result.investigation_id as string;
  expect((await call("list_investigations", {})).result.total).toBe(1);
  investigationResult = (await call("get_investigation", { investigation_id: investigationId })).result;
  expect(investigationResult.question).toBe("Why is the loader slow?");
  const hypothesis = await call("record_hypothesis", {
    investigation_id: investigationId,
    claim: "Imports dominate",
    prediction: "import time is most of startup",
    discriminating_condition: "lazy imports halve startup",
  });
  expect(hypothesis.result.revision).toBe(1);
  expect((await call("get_hypothesis", { hypothesis_id: hypothesis.result.hypothesis_id })).result.claim).toBe("Imports dominate");
  const finding = await call("record_finding", {
    kind: "performance",
    title: "Imports dominate startup",
    claim: "Most of startup is imports",
    evidence_level: "inferred",
    confidence: "low",
    assessment: "unassessed",
    investigation_id: investigationId,
    hypothesis_id: hypothesis.result.hypothesis_id,
    limitations: ["one machine"],
    next_experiments: [{ name: "lazy imports", runs: 5, paired: true, note: null }],
  });
  expect(finding.ok).toBe(true);
  const findingId = finding.result.finding.finding_id as string;
  expect((await call("get_finding", { finding_id: findingId })).result.finding_id).toBe(findingId);
  expect((await call("list_findings", { investigation_id: investigationId })).result.findings).toHaveLength(1);
  // Errors are the same envelope with a null result: the schema must accept them too.
  expect((await call("get_finding", { finding_id: "no-such-finding" })).ok).toBe(false);
  expect((await call("record_hypothesis", { investigation_id: investigationId, claim: "x" })).error.code).toBe("INVALID_ARGUMENTS");
  const stale = await call("record_finding", {
    kind: "performance",
    title: "t",
    claim: "c",
    evidence_level: "inferred",
    confidence: "low",
    assessment: "unassessed",
    finding_id: findingId,
    expected_revision: 9,
  });
  expect(stale.error.code).toBe("REVISION_CONFLICT");
  expect((await call("workload_configuration_status", {})).result.status).toBe("missing");
  const configured = await call("configure_workload", { name: "hello", operation: "create", argv: ["python3", "-c", "print(1)"] });
  expect(configured.result.action).toBe("created");
  expect((await call("workload_configuration_status", {})).result.workload_names).toEqual(["hello"]);
  const conflicting = await call("configure_workload", { name: "hello", operation: "create", argv: ["python3", "-c", "print(2)"] });
  expect(conflicting.ok).toBe(false);
  const variants = await call("configure_workload", {
    name: "ab",
    operation: "create",
    argv: ["python3", "-c", "print(1)", "{variant}"],
    parameters: { variant: ["base", "new"] },
  });
  expect(variants.ok).toBe(true);
  const experiment = await call("configure_experiment", {
    name: "ab",
    operation: "create",
    workload: "ab",
    factors: { variant: ["base", "new"] },
  });
  expect(experiment.result).toMatchObject({ action: "created", workload_name: "ab", next_tool: "plan_experiment" });
  expect((await call("configure_experiment", { name: "ab", operation: "create", workload: "ab", factors: { variant: ["new"] } })).ok).toBe(
    false,
  );
  // Setup of a provider the registry cannot supply ends at once, without installing anything.
  const setup = await call("start_capability_setup", { adapters: ["perfetto"], idempotency_key: "schemas-1" });
  expect(setup.result.operation_id).toMatch(/^op-[0-9a-f]{64}$/);
  const ended = await waitFor("the setup to end", async () => {
    const polled = await call("get_capability_setup", { operation_id: setup.result.operation_id });
    return polled.result.state !== "starting" && polled.result.state !== "running" && polled;
  });
  expect(ended.result.item_outcomes[0].status).toBe("unavailable");
  expect((await call("cancel_capability_setup", { operation_id: setup.result.operation_id })).result.state).toBe(ended.result.state);
  expect((await call("get_capability_setup", { operation_id: "op-unknown" })).error.code).toBe("INVALID_ARGUMENTS");
  const compatibility = await call("prepare_capabilities", { adapters: ["toxiproxy"] });
  expect(compatibility.result.operation_id).not.toBe(setup.result.operation_id);
  await waitFor("the compatibility setup to end", async () => {
    const polled = await call("get_capability_setup", { operation_id: compatibility.result.operation_id });
    return polled.result.state === "failed" && polled;
  });
  const dependencies = await call("prepare_workload_dependencies", { workload_name: "hello" });
  expect(dependencies.result).toMatchObject({ ready: true, missing: [], environment_changed: false, next_tool: "plan_capture" });
  expect((await call("prepare_adapter", { adapter: "no-such-adapter", distribution: "no-such-dist" })).error.code).toBe(
    "CAPABILITY_UNAVAILABLE",
  );
  // Every tool that publishes an outputSchema was exercised above.
  const typed = listedTools()
    .filter((tool) => tool.outputSchema)
    .map((tool) => tool.name);
  expect(typed.filter((name) => !checked.has(name))).toEqual([]);
});

test("a result that does not match its schema is refused by the same validator", () => {
  const validate = validator.getValidator(listedTools().find((tool) => tool.name === "get_investigation")!.outputSchema as never);
  const envelope = (result: unknown) => ({ schema_version: 1, ok: true, result, error: null });
  expect(validate(envelope(investigationResult)).valid).toBe(true);
  expect(validate(envelope({ ...investigationResult, symptom: 7 })).valid).toBe(false);
  expect(validate(envelope({ ...investigationResult, status: "closed" })).valid).toBe(false);
});
