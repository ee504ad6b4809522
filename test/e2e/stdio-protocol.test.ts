import { expect, test, setDefaultTimeout } from "bun:test";
import { binaryPath, runCli, temporaryFolder, testEnvironment } from "../support/binary.ts";
import { offeredTools, sortedToolNames } from "../support/contract.ts";

// Every step starts the compiled binary. The suite's default per-test deadline is 30 s (scripts/test-deadline.ts).
setDefaultTimeout(60_000);

/** Drives the server with raw JSON-RPC lines so every byte of stdout can be checked. */
test("every stdout line of mcp serve is a JSON-RPC message, logs go to stderr", async () => {
  const project = temporaryFolder("stdio");
  const child = Bun.spawn([binaryPath(), "mcp", "serve", "--project-root", project], {
    stdin: "pipe",
    stdout: "pipe",
    stderr: "pipe",
    env: testEnvironment(),
  });
  const messages = [
    {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
    },
    { jsonrpc: "2.0", method: "notifications/initialized" },
    { jsonrpc: "2.0", id: 2, method: "tools/list" },
    { jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "workspace_status", arguments: {} } },
    { jsonrpc: "2.0", id: 4, method: "tools/call", params: { name: "initialize_workspace", arguments: {} } },
    { jsonrpc: "2.0", id: 5, method: "tools/call", params: { name: "no_such_tool", arguments: {} } },
    { jsonrpc: "2.0", id: 6, method: "resources/templates/list" },
  ];
  for (const message of messages) child.stdin.write(`${JSON.stringify(message)}\n`);
  await child.stdin.flush();
  const decoder = new TextDecoder();
  let buffer = "";
  const lines: string[] = [];
  const reader = child.stdout.getReader();
  while (lines.filter((line) => line.includes('"id"')).length < 6) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    const parts = buffer.split("\n");
    buffer = parts.pop() ?? "";
    lines.push(...parts.filter((line) => line !== ""));
  }
  child.stdin.end();
  await child.exited;
  expect(lines.length).toBeGreaterThanOrEqual(6);
  for (const line of lines) {
    const parsed = JSON.parse(line);
    expect(parsed.jsonrpc).toBe("2.0");
  }
  const byId = new Map(
    lines
      .map((line) => JSON.parse(line))
      .filter((message) => "id" in message)
      .map((message) => [message.id, message]),
  );
  expect(byId.get(1).result.serverInfo.name).toBe("flameox");
  expect(byId.get(1).result.instructions).toContain("initialize_workspace");
  // Exactly the contract's tools that this release implements and its invented ones: a missing or an unlisted one fails here.
  const listed = byId.get(2).result.tools.map((tool: { name: string }) => tool.name);
  expect(sortedToolNames(listed)).toEqual(sortedToolNames(offeredTools));
  // No workspace yet is an answer, not an error: the contract's code is in the result.
  expect(byId.get(3).result.isError).toBe(false);
  expect(byId.get(3).result.structuredContent.result).toMatchObject({ workspace_found: false, code: "WORKSPACE_NOT_FOUND" });
  expect(byId.get(4).result.structuredContent.ok).toBe(true);
  expect(byId.get(5).error.code).toBe(-32602);
  // The same templates mcp inspect reports, and each is a flameox:// URI template.
  const templates = byId.get(6).result.resourceTemplates.map((template: { uriTemplate: string }) => template.uriTemplate);
  const inspected = runCli(["mcp", "inspect", "--json"]).json.resource_templates.map(
    (template: { uri_template: string }) => template.uri_template,
  );
  expect(templates).toEqual(inspected);
  expect(templates.length).toBeGreaterThan(0);
  for (const template of templates) expect(template).toStartWith("flameox://");
});

test("mcp serve never walks up to an ancestor workspace", async () => {
  const parent = temporaryFolder("ancestor");
  const init = Bun.spawnSync([binaryPath(), "init", parent, "--json"], { env: testEnvironment() });
  expect(init.exitCode).toBe(0);
  const child = `${parent}/child`;
  await Bun.write(`${child}/readme.txt`, "x");
  const { connectMcp, callTool } = await import("../support/binary.ts");
  const session = await connectMcp(child);
  try {
    const status = await callTool(session, "workspace_status");
    expect(status.envelope.result.workspace_found).toBe(false);
    expect(status.envelope.result.code).toBe("WORKSPACE_NOT_FOUND");
  } finally {
    await session.close();
  }
});
