import { afterEach, describe, expect, test, setDefaultTimeout } from "bun:test";
import { readdirSync, readFileSync, statSync, writeFileSync, mkdirSync } from "node:fs";
import { join, relative } from "node:path";
import { callTool, connectMcp, temporaryFolder, type McpSession } from "../support/binary.ts";

// Every step starts the compiled binary. The suite's default per-test deadline is 30 s (scripts/test-deadline.ts).
setDefaultTimeout(60_000);

let session: McpSession | undefined;
afterEach(async () => {
  await session?.close();
  session = undefined;
});

function snapshotTree(root: string, skip: (path: string) => boolean): Map<string, string> {
  const files = new Map<string, string>();
  const walk = (folder: string) => {
    for (const entry of readdirSync(folder, { withFileTypes: true })) {
      const path = join(folder, entry.name);
      const rel = relative(root, path);
      if (skip(rel)) continue;
      if (entry.isDirectory()) walk(path);
      else files.set(rel, `${statSync(path).mode}:${new Bun.CryptoHasher("sha256").update(readFileSync(path)).digest("hex")}`);
    }
  };
  walk(root);
  return files;
}

function sampleProject(): string {
  const project = temporaryFolder("first-run");
  writeFileSync(join(project, "app.py"), "print('hello')\n");
  mkdirSync(join(project, "src"));
  writeFileSync(join(project, "src", "keep.txt"), "unchanged\n");
  return project;
}

describe("first-run sequence over stdio against the compiled binary", () => {
  test("status → initialize → configuration → configure → list → get, and nothing outside .diagnostics/flameox.toml changes", async () => {
    const project = sampleProject();
    const before = snapshotTree(project, () => false);
    session = await connectMcp(project);

    const instructions = session.client.getInstructions() ?? "";
    for (const phrase of [
      "workspace_status",
      "initialize_workspace",
      "workload_configuration_status",
      "configure_workload",
      "never executes it",
      "list_declared_workflows",
      "get_declared_workflow",
      "capture_mode='auto'",
      "execute_capture_plan",
      "consumed capture plan",
    ]) {
      expect(instructions).toContain(phrase);
    }

    // A fresh project's first call is an answer, not an error; the contract's code stays visible in it.
    const missing = await callTool(session, "workspace_status");
    expect(missing.isError).toBe(false);
    expect(missing.envelope.ok).toBe(true);
    expect(missing.envelope.result).toMatchObject({
      workspace_found: false,
      code: "WORKSPACE_NOT_FOUND",
      next_tool: "initialize_workspace",
      next_arguments: {},
    });
    expect(missing.text).toContain("initialize_workspace");

    const initialized = await callTool(session, "initialize_workspace");
    expect(initialized.isError).toBe(false);
    expect(initialized.envelope.result.created).toBe(true);
    const again = await callTool(session, "initialize_workspace");
    expect(again.envelope.result.created).toBe(false);
    expect(again.envelope.result.workspace_id).toBe(initialized.envelope.result.workspace_id);

    const status = await callTool(session, "workspace_status");
    expect(status.envelope.ok).toBe(true);
    expect(status.envelope.result.workspace_id).toBe(initialized.envelope.result.workspace_id);
    expect(status.raw.content).toHaveLength(1);

    const configuration = await callTool(session, "workload_configuration_status");
    expect(configuration.envelope.result).toEqual({
      schema_version: 1,
      status: "missing",
      config_path: "flameox.toml",
      configuration_id: null,
      workload_names: [],
      diagnostics: ["No named workload configuration exists yet."],
      next_tool: "configure_workload",
    });

    const configured = await callTool(session, "configure_workload", {
      name: "hello",
      operation: "create",
      argv: ["python3", "app.py", "--size", "{size}"],
      parameters: { size: [10, 100] },
      timeout_seconds: 60,
    });
    expect(configured.isError).toBe(false);
    expect(configured.envelope.result.action).toBe("created");
    expect(configured.envelope.result.configuration_source).toBe("agent");
    expect(configured.envelope.result.changed_paths).toEqual(["flameox.toml"]);
    expect(configured.envelope.result.next_tool).toBe("list_declared_workflows");
    expect(configured.envelope.result.workload_definition_id).toMatch(/^sha256:[0-9a-f]{64}$/);

    const repeat = await callTool(session, "configure_workload", {
      name: "hello",
      operation: "create",
      argv: ["python3", "app.py", "--size", "{size}"],
      parameters: { size: [10, 100] },
      timeout_seconds: 60,
    });
    expect(repeat.envelope.result.action).toBe("unchanged");
    expect(repeat.envelope.result.changed_paths).toEqual([]);

    const listed = await callTool(session, "list_declared_workflows");
    expect(listed.envelope.result.workflows.map((workflow: any) => workflow.name)).toEqual(["hello"]);
    expect(listed.envelope.result.workflows[0].parameter_names).toEqual(["size"]);
    expect(listed.envelope.result.total).toBe(1);
    expect(listed.envelope.result.truncated).toBe(false);

    const detail = await callTool(session, "get_declared_workflow", { kind: "workload", name: "hello" });
    expect(detail.envelope.ok).toBe(true);
    expect(detail.envelope.result.allowed_parameters).toEqual({ size: [10, 100] });
    expect(detail.envelope.result.adapter_options.map((option: any) => option.adapter)).toContain("py-spy");
    // py-spy's ptrace permission is checked by plan_capture's default preflight, so discovery offers it as ready.
    const pySpy = detail.envelope.result.adapter_options.find((option: any) => option.adapter === "py-spy");
    expect(pySpy.planning_disposition).toBe("ready");
    expect(pySpy.required_preflight_mode).toBe(pySpy.capability_status === "unknown" ? "auto" : "passive");

    const after = snapshotTree(project, (rel) => rel === ".diagnostics" || rel.startsWith(".diagnostics/") || rel === "flameox.toml");
    expect(after).toEqual(before);
  });

  test("a stale configuration_id is a REVISION_CONFLICT and the file is untouched", async () => {
    const project = sampleProject();
    session = await connectMcp(project, ["--init"]);
    await callTool(session, "configure_workload", { name: "one", operation: "create", argv: ["python3", "app.py"] });
    const first = await callTool(session, "workload_configuration_status");
    const staleId = first.envelope.result.configuration_id;
    await callTool(session, "configure_workload", { name: "two", operation: "create", argv: ["python3", "app.py", "two"] });
    const bytes = readFileSync(join(project, "flameox.toml"));
    const conflict = await callTool(session, "configure_workload", {
      name: "one",
      operation: "replace",
      argv: ["python3", "app.py", "changed"],
      expected_configuration_id: staleId,
    });
    expect(conflict.isError).toBe(true);
    expect(conflict.envelope.error.code).toBe("REVISION_CONFLICT");
    expect(readFileSync(join(project, "flameox.toml"))).toEqual(bytes);

    const current = await callTool(session, "workload_configuration_status");
    const replaced = await callTool(session, "configure_workload", {
      name: "one",
      operation: "replace",
      argv: ["python3", "app.py", "changed"],
      expected_configuration_id: current.envelope.result.configuration_id,
    });
    expect(replaced.envelope.result.action).toBe("updated");
  });

  test("unknown fields and wrong types are INVALID_ARGUMENTS tool results naming each field", async () => {
    const project = sampleProject();
    session = await connectMcp(project, ["--init"]);
    const unknown = await callTool(session, "list_capabilities", { refresh: true });
    expect(unknown.isError).toBe(true);
    expect(unknown.envelope.error.code).toBe("INVALID_ARGUMENTS");
    expect(unknown.envelope.error.details.fields).toEqual([
      { field: "refresh", message: "Unknown argument field.", type: "extra_forbidden" },
    ]);

    const wrongType = await callTool(session, "list_declared_workflows", { limit: "ten", kind: 3 });
    expect(wrongType.envelope.error.code).toBe("INVALID_ARGUMENTS");
    const fields = wrongType.envelope.error.details.fields.map((field: any) => field.field).sort();
    expect(fields).toEqual(["kind", "limit"]);

    const missing = await callTool(session, "configure_workload", { operation: "create", argv: ["x"] });
    expect(missing.envelope.error.details.fields).toContainEqual({ field: "name", message: "Field required", type: "missing" });
    expect(missing.envelope.error.recovery.kind).toBe("manual");
  });
});
