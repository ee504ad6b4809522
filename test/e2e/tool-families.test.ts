/** `mcp serve --tools FAMILY,…` over real stdio with the SDK's client, and `mcp inspect` of the families. */
import { expect, setDefaultTimeout, test } from "bun:test";
import { binaryPath, callTool, connectMcp, runCli, temporaryFolder, testEnvironment } from "../support/binary.ts";

setDefaultTimeout(120_000);

test("mcp serve --tools lists and serves only those families", async () => {
  const project = temporaryFolder("families");
  const inspect = runCli(["mcp", "inspect", "--json"]);
  expect(inspect.exitCode).toBe(0);
  const families = inspect.json.families as Array<{ name: string; tools: string[] }>;
  expect(families.map((family) => family.name)).toContain("capture");
  const wanted = families.filter((family) => family.name === "workspace" || family.name === "runs").flatMap((family) => family.tools);
  const session = await connectMcp(project, ["--tools", "runs,workspace"]);
  try {
    const listed = await session.client.listTools();
    expect(listed.tools.map((tool) => tool.name)).toEqual(wanted);
    expect((await callTool(session, "workspace_status")).envelope.result.code).toBe("WORKSPACE_NOT_FOUND");
    // A tool of a family that is not exposed is unknown to this server.
    await expect(session.client.callTool({ name: "analyze_hotspots", arguments: {} })).rejects.toThrow(/Unknown tool/);
  } finally {
    await session.close();
  }
});

test("an unknown family is INVALID_ARGUMENTS before anything is served; inspect --tools shows the subset", () => {
  const child = Bun.spawnSync([binaryPath(), "--json", "mcp", "serve", "--tools", "capture,nope"], {
    env: testEnvironment(),
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  expect(child.exitCode).toBe(2);
  const envelope = JSON.parse(child.stdout.toString());
  expect(envelope.error.code).toBe("INVALID_ARGUMENTS");
  expect(envelope.error.message).toContain('"nope"');
  const subset = runCli(["mcp", "inspect", "--tools", "capture", "--json"]);
  expect(subset.json.families.map((family: { name: string }) => family.name)).toEqual(["capture"]);
  expect(subset.json.tools.map((tool: { name: string }) => tool.name)).toEqual(subset.json.families[0].tools);
  const human = runCli(["mcp", "inspect"]);
  expect(human.stdout).toContain("Tool families (mcp serve --tools FAMILY,…):");
});
