/**
 * The binary's tools/list over real stdio obeys the portable-schema rules and the model-visible budget,
 * and a real SDK client accepts typed results and errors under the published outputSchemas.
 */
import { expect, setDefaultTimeout, test } from "bun:test";
import { framedModelVisibleBytes, modelVisibleBytes } from "../../src/mcp/model-visible.ts";
import type { ListedTool } from "../../src/mcp/registry.ts";
import { binaryPath, callTool, connectMcp, temporaryFolder, testEnvironment } from "../support/binary.ts";
import { framedModelVisibleByteLimit, modelVisibleByteLimit, schemaRuleViolations } from "../support/schema-rules.ts";
import { offeredTools, sortedToolNames } from "../support/contract.ts";

// Each test starts the compiled binary.
setDefaultTimeout(60_000);

/** tools/list exactly as the server writes it on stdout. */
async function rawToolsList(project: string): Promise<{ line: string; tools: ListedTool[] }> {
  const child = Bun.spawn([binaryPath(), "mcp", "serve", "--project-root", project], {
    stdin: "pipe",
    stdout: "pipe",
    stderr: "pipe",
    env: testEnvironment(),
  });
  const initialize = { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } };
  child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: initialize })}\n`);
  child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" })}\n`);
  child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" })}\n`);
  await child.stdin.flush();
  const reader = child.stdout.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  let answer: string | undefined;
  while (answer === undefined) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    const lines = buffer.split("\n");
    buffer = lines.pop() ?? "";
    answer = lines.find((line) => JSON.parse(line).id === 2);
  }
  child.stdin.end();
  await child.exited;
  if (answer === undefined) throw new Error("the server closed stdout before answering tools/list");
  return { line: answer, tools: JSON.parse(answer).result.tools };
}

test("tools/list of the binary is portable, fully described and within the model-visible budget", async () => {
  const { line, tools } = await rawToolsList(temporaryFolder("catalog"));
  expect(sortedToolNames(tools.map((tool: { name: string }) => tool.name))).toEqual(sortedToolNames(offeredTools));
  expect(tools.flatMap(schemaRuleViolations)).toEqual([]);
  const visible = modelVisibleBytes(tools);
  expect(visible).toBeLessThanOrEqual(modelVisibleByteLimit);
  expect(visible).toBeLessThan(Buffer.byteLength(line));
  // No shared placeholder: every published outputSchema types its result.
  const outputSchemas = tools.filter((tool) => tool.outputSchema).map((tool) => JSON.stringify(tool.outputSchema));
  expect(outputSchemas.length).toBeGreaterThan(0);
  for (const schema of outputSchemas) expect(JSON.parse(schema).properties.result.anyOf[0].properties).toBeDefined();
});

test("the SDK client validates typed results and errors against the published outputSchemas without complaint", async () => {
  const session = await connectMcp(temporaryFolder("catalog-client"), ["--init"]);
  try {
    const listed = await session.client.listTools();
    // The catalog as the SDK client hands it to a host, each tool counted with its framing.
    const visible = listed.tools.map(({ name, description, inputSchema, annotations }) => ({
      name,
      description,
      inputSchema,
      annotations,
    }));
    expect(modelVisibleBytes(visible as never)).toBeLessThanOrEqual(modelVisibleByteLimit);
    expect(framedModelVisibleBytes(visible as never)).toBeLessThanOrEqual(framedModelVisibleByteLimit);
    expect(listed.tools.find((tool) => tool.name === "create_investigation")?.outputSchema).toBeDefined();
    // callTool validates structuredContent against the cached outputSchema and throws on a mismatch.
    const created = await callTool(session, "create_investigation", { question: "Is the parser the hot spot?" });
    expect(created.envelope.ok).toBe(true);
    const listing = await callTool(session, "list_investigations", {});
    expect(listing.envelope.result.investigations[0].investigation_id).toBe(created.envelope.result.investigation_id);
    const missing = await callTool(session, "get_investigation", { investigation_id: "no-such-investigation" });
    expect(missing.isError).toBe(true);
    expect(missing.envelope.result).toBeNull();
  } finally {
    await session.close();
  }
});
