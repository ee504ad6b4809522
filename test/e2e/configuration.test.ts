import { afterEach, expect, test, setDefaultTimeout } from "bun:test";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { callTool, connectMcp, runCli, temporaryFolder, type McpSession } from "../support/binary.ts";
import { offeredTools, sortedToolNames } from "../support/contract.ts";

// Every step starts the compiled binary. The suite's default per-test deadline is 30 s (scripts/test-deadline.ts).
setDefaultTimeout(60_000);

let session: McpSession | undefined;
afterEach(async () => {
  await session?.close();
  session = undefined;
});

const handWritten = `# Team workloads — keep this comment.
schema_version = 1

[workloads.existing]   # trailing comment
argv = [ "python3",  "existing.py" ]   # odd spacing stays
timeout_seconds = 30

# A table flameox does not own.
[experiments.speed]
workload = "existing"
factors = { variant = ["a", "b"] }
treatment_factor = "variant"
primary_metric = "runtime.wall_time_ns"
polarity = "lower_is_better"
practical_threshold = 0.05
`;

test("configure_workload keeps a hand-written file's comments and other tables byte-for-byte", async () => {
  const project = temporaryFolder("handwritten");
  writeFileSync(join(project, "flameox.toml"), handWritten);
  session = await connectMcp(project, ["--init"]);
  const status = await callTool(session, "workload_configuration_status");
  expect({ status: status.envelope.result.status, diagnostics: status.envelope.result.diagnostics }).toEqual({
    status: "valid",
    diagnostics: [],
  });
  const created = await callTool(session, "configure_workload", { name: "added", operation: "create", argv: ["python3", "added.py"] });
  expect(created.envelope.result.action).toBe("created");
  const after = readFileSync(join(project, "flameox.toml"), "utf8");
  expect(after.startsWith(handWritten)).toBe(true);
  expect(after).toContain("[workloads.added]");
  const listed = await callTool(session, "list_declared_workflows");
  expect(listed.envelope.result.workflows.map((workflow: any) => workflow.name)).toEqual(["added", "existing"]);
  const experiments = await callTool(session, "list_declared_workflows", { kind: "experiment" });
  expect(experiments.envelope.result.workflows.map((workflow: any) => workflow.name)).toEqual(["speed"]);
});

test("malformed TOML, non-UTF-8 bytes and schema violations are refused and the file is untouched", async () => {
  const cases: [string, Uint8Array][] = [
    ["malformed", new TextEncoder().encode('[workloads.broken\nargv = ["x"]\n')],
    ["non-utf8", new Uint8Array([0x5b, 0x77, 0x5d, 0x0a, 0xff, 0xfe, 0x0a])],
    ["schema", new TextEncoder().encode('[workloads.bad]\nargv = ["x"]\nshell = "rm -rf /"\n')],
  ];
  for (const [name, bytes] of cases) {
    const project = temporaryFolder(`invalid-${name}`);
    writeFileSync(join(project, "flameox.toml"), bytes);
    session = await connectMcp(project, ["--init"]);
    const status = await callTool(session, "workload_configuration_status");
    expect(status.isError).toBe(false);
    expect(status.envelope.result.status).toBe("invalid");
    expect(status.envelope.result.diagnostics.length).toBeGreaterThan(0);
    const listed = await callTool(session, "list_declared_workflows");
    expect(listed.envelope.error.code).toBe("WORKSPACE_INVALID");
    expect(listed.envelope.error.recovery.next_tool).toBe("configure_workload");
    const replace = await callTool(session, "configure_workload", {
      name: "bad",
      operation: "replace",
      argv: ["python3", "fixed.py"],
      expected_configuration_id: status.envelope.result.configuration_id,
    });
    expect(replace.isError).toBe(true);
    expect(readFileSync(join(project, "flameox.toml"))).toEqual(Buffer.from(bytes));
    await session.close();
    session = undefined;
  }
});

test("configure_workload refuses environment entries execution would always refuse, naming each key, and writes nothing", async () => {
  const project = temporaryFolder("refused-environment");
  writeFileSync(join(project, "flameox.toml"), handWritten);
  session = await connectMcp(project, ["--init"]);
  const refused = await callTool(session, "configure_workload", {
    name: "preloaded",
    operation: "create",
    argv: ["python3", "work.py"],
    environment: { LD_PRELOAD: "/tmp/evil.so", DYLD_INSERT_LIBRARIES: "/tmp/evil.dylib", OMP_NUM_THREADS: "2" },
  });
  expect(refused.isError).toBe(true);
  expect(refused.envelope.error.code).toBe("EXECUTION_REFUSED");
  expect(refused.envelope.error.details.variables).toEqual(["DYLD_INSERT_LIBRARIES", "LD_PRELOAD"]);
  expect(refused.envelope.error.details.fields.map((field: { field: string }) => field.field)).toEqual([
    "environment.DYLD_INSERT_LIBRARIES",
    "environment.LD_PRELOAD",
  ]);
  expect(refused.envelope.error.recovery.next_tool).toBe("configure_workload");
  expect(readFileSync(join(project, "flameox.toml"), "utf8")).toBe(handWritten);
  // The same declaration without them is accepted: the refusal is about those keys, not the workload.
  const accepted = await callTool(session, "configure_workload", {
    name: "preloaded",
    operation: "create",
    argv: ["python3", "work.py"],
    environment: { OMP_NUM_THREADS: "2" },
  });
  expect(accepted.envelope.ok).toBe(true);
});

test("mcp serve --workspace binds an explicit external workspace without creating .diagnostics in the project", async () => {
  const project = temporaryFolder("external-project");
  const workspace = join(temporaryFolder("external-workspace"), "ws");
  session = await connectMcp(project, ["--init", "--workspace", workspace]);
  const status = await callTool(session, "workspace_status");
  expect(status.envelope.ok).toBe(true);
  // Agents see the roots without host paths: the project is ".", an external workspace "<workspace>".
  expect(status.envelope.result.project_root).toBe(".");
  expect(status.envelope.result.workspace_root).toBe("<workspace>");
  expect(existsSync(join(project, ".diagnostics"))).toBe(false);
  expect(existsSync(join(workspace, "workspace.json"))).toBe(true);
});

test("CLI global options work before the command, --quiet prints nothing, errors keep their exit codes", () => {
  const project = temporaryFolder("cli-globals");
  expect(runCli(["--project-root", project, "init"]).exitCode).toBe(0);
  const workspace = join(project, ".diagnostics");
  const json = runCli(["--workspace", workspace, "--project-root", project, "--json", "status"]);
  expect(json.exitCode).toBe(0);
  // The identity of the workspace named by --workspace, not some other one found by walking up.
  expect(json.json.workspace_id).toBe(JSON.parse(readFileSync(join(workspace, "workspace.json"), "utf8")).workspace_id);
  const quiet = runCli(["--workspace", workspace, "--quiet", "status"]);
  expect(quiet.exitCode).toBe(0);
  expect(quiet.stdout).toBe("");
  const missing = runCli(["--project-root", temporaryFolder("no-workspace"), "status", "--json"]);
  expect(missing.exitCode).toBe(2);
  expect(missing.json.error.code).toBe("WORKSPACE_NOT_FOUND");
  const help = runCli(["--help"]);
  expect(help.exitCode).toBe(0);
  expect(help.stdout).toContain("runtime evidence");
  const captureHelp = runCli(["capture", "plan", "--help"]);
  expect(captureHelp.stdout).toContain("--workload");
  expect(captureHelp.stdout).not.toContain("argv");
  const inspect = runCli(["mcp", "inspect", "--json"]);
  expect(sortedToolNames(inspect.json.tools.map((tool: { name: string }) => tool.name))).toEqual(sortedToolNames(offeredTools));
  expect(inspect.json.instructions).toContain("initialize_workspace");
  const version = runCli(["--version"]);
  expect(version.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
  const capabilities = runCli(["capabilities", "--json"]);
  expect(capabilities.exitCode).toBe(0);
  expect(capabilities.json.capabilities.map((capability: any) => capability.adapter)).toContain("py-spy");
  const validate = runCli(["--project-root", project, "validate", "--json"]);
  expect(validate.exitCode).toBe(0);
  expect(validate.json.valid).toBe(true);
});

test("catalog rebuild derives catalog.duckdb from the evidence, and status reports its freshness", async () => {
  const { repositoryRoot } = await import("../support/binary.ts");
  const project = temporaryFolder("catalog");
  expect(runCli(["init", project]).exitCode).toBe(0);
  const fixture = join(repositoryRoot, "test", "fixtures", "formats", "py-spy.speedscope.json");
  writeFileSync(join(project, "profile.speedscope.json"), readFileSync(fixture));
  expect(runCli(["--project-root", project, "import", join(project, "profile.speedscope.json"), "--json"]).exitCode).toBe(0);
  const before = runCli(["--project-root", project, "status", "--json"]).json;
  expect(before.catalog_exists).toBe(false);
  expect(runCli(["--project-root", project, "catalog", "validate", "--json"]).exitCode).toBe(5);
  const rebuilt = runCli(["--project-root", project, "catalog", "rebuild", "--json"]);
  expect(rebuilt.exitCode).toBe(0);
  expect(rebuilt.json.views.stacks).toBe(1);
  expect(rebuilt.json.fresh).toBe(true);
  const after = runCli(["--project-root", project, "status", "--json"]).json;
  expect(after.catalog_exists).toBe(true);
  expect(after.catalog_fresh).toBe(true);
  expect(after.storage_by_artifact_kind.sample_profile).toBeGreaterThan(0);
  expect(after.extractor_versions.profile).toBe("1");
  expect(runCli(["--project-root", project, "catalog", "validate", "--json"]).exitCode).toBe(0);
  // A new import moves the corpus on: the catalog is now stale, and validate says so with exit 1.
  writeFileSync(join(project, "second.collapsed"), "main;work 3\n");
  expect(runCli(["--project-root", project, "import", join(project, "second.collapsed"), "--json"]).exitCode).toBe(0);
  expect(runCli(["--project-root", project, "status", "--json"]).json.catalog_fresh).toBe(false);
  expect(runCli(["--project-root", project, "catalog", "validate", "--json"]).exitCode).toBe(1);
});

test("status reports an invalid workspace policy instead of claiming the workspace is valid; validate names it", () => {
  const project = temporaryFolder("bad-policy");
  expect(runCli(["init", project]).exitCode).toBe(0);
  expect(runCli(["--project-root", project, "status", "--json"]).json.workspace_valid).toBe(true);
  writeFileSync(join(project, ".diagnostics", "config.toml"), "[limits]\nmax_row_limt = 5\n");
  const status = runCli(["--project-root", project, "status", "--json"]).json;
  expect(status.workspace_valid).toBe(false);
  expect(status.warnings.some((warning: string) => warning.includes("policy"))).toBe(true);
  const validate = runCli(["--project-root", project, "validate", "--json"]);
  expect(validate.exitCode).toBe(1);
  expect(validate.json.issues.map((issue: any) => issue.code)).toContain("policy_invalid");
});
