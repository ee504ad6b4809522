/**
 * A client of protocol 2025-03-26 (the TypeScript SDK 1.11, installed as the dev dependency
 * mcp-sdk-legacy) over real stdio against the compiled binary: it negotiates 2025-03-26, sees no
 * outputSchema, and completes plan_capture → execute_capture_plan → get_run without a client-side error
 * (its result schema has no resource_link, so one such block would fail the whole call).
 */
import { afterEach, expect, setDefaultTimeout, test } from "bun:test";
import { Client } from "mcp-sdk-legacy/client/index.js";
import { StdioClientTransport } from "mcp-sdk-legacy/client/stdio.js";
import { binaryPath, testEnvironment } from "../support/binary.ts";
import { python, workloadProject } from "../support/project.ts";

// Starts the binary and runs one short py-spy capture.
setDefaultTimeout(90_000);

let client: Client | undefined;
afterEach(async () => {
  await client?.close();
  client = undefined;
});

async function call(name: string, args: Record<string, unknown>) {
  const result = await client!.callTool({ name, arguments: args });
  const content = result.content as { type: string; text: string }[];
  return { types: content.map((item) => item.type), envelope: JSON.parse(content.map((item) => item.text).join("")) };
}

test("an SDK 1.11 client (2025-03-26) plans, executes and reads a capture without a client-side error", async () => {
  const project = workloadProject("legacy-client");
  const transport = new StdioClientTransport({
    command: binaryPath(),
    args: ["mcp", "serve", "--project-root", project, "--init"],
    env: testEnvironment(),
    stderr: "pipe",
  });
  client = new Client({ name: "legacy-client", version: "1.0.0" });
  await client.connect(transport);

  const tools = (await client.listTools()).tools;
  expect(tools.length).toBeGreaterThan(0);
  expect(tools.filter((tool) => "outputSchema" in tool)).toEqual([]);

  const configured = await call("configure_workload", { name: "hot", operation: "create", argv: [python(), "hot.py", "0.5"] });
  expect(configured.envelope.ok).toBe(true);
  const plan = await call("plan_capture", { workload_name: "hot", adapter: "py-spy" });
  expect(plan.envelope.ok).toBe(true);
  const executed = await call("execute_capture_plan", { plan_id: plan.envelope.result.plan_id });
  expect(executed.envelope.ok).toBe(true);
  expect(executed.types).toEqual(["text"]);
  const runId = executed.envelope.result.run_id;
  const run = await call("get_run", { run_id: runId });
  expect(run.envelope.result.run_id).toBe(runId);
  expect(run.envelope.result.execution_status).toBe("succeeded");
  expect(run.types).toEqual(["text"]);
});
