import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { chmod, mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { FlameoxError } from "../../../src/domain/errors.ts";
import {
  configurationIdOfText,
  parseProjectConfigText,
  readProjectConfig,
  workloadDefinitionId,
} from "../../../src/config/project-config.ts";
import { planWorkloadEdit, renderWorkloadTable, writeProjectConfigAtomically } from "../../../src/config/workload-edit.ts";
import { normalizeWorkloadDefinition } from "../../../src/config/project-config.ts";
import { scanTomlHeaders, tableSpans } from "../../../src/config/toml-text.ts";

function refusal(action: () => unknown): FlameoxError {
  try {
    action();
  } catch (error) {
    if (error instanceof FlameoxError) return error;
    throw error;
  }
  throw new Error("expected a FlameoxError");
}

async function asyncRefusal(action: () => Promise<unknown>): Promise<FlameoxError> {
  try {
    await action();
  } catch (error) {
    if (error instanceof FlameoxError) return error;
    throw error;
  }
  throw new Error("expected a FlameoxError");
}

// A deliberately awkward file: comments everywhere, odd spacing, a multi-line string holding
// text that looks like table headers, and tables on both sides of the workload being edited.
const before = `# Project workloads — hand-maintained.
schema_version = 1   # keep this

[workloads.first]
argv = ["echo", "first"]   # inline comment
timeout_seconds = 10

# ---- the workload under edit ----
[workloads.bench]
argv = [
  "python",
  "bench.py",   # the script
  "--size", "{size}",
]
cwd = "."

[workloads.bench.parameters]
size = [1, 2]

# notes about bench's environment
[ workloads . bench . environment ]
NOTE = """
[workloads.fake]
# not a comment, part of the string
"""

# ---- experiments ----
[experiments.sweep]   # trailing
workload = "bench"
variants = ["a", "b"]

[workloads.last]
argv = ['literal', "x"]
`;

const replacement = {
  argv: ["python", "bench.py", "--size", "{size}", "--threads", "{threads}"],
  parameters: { size: [1, 2, 4], threads: [1, 8] },
};

describe("toml layout scanning", () => {
  test("headers inside strings and arrays are not headers", () => {
    expect(scanTomlHeaders(before).map((header) => header.path.join("."))).toEqual([
      "workloads.first",
      "workloads.bench",
      "workloads.bench.parameters",
      "workloads.bench.environment",
      "experiments.sweep",
      "workloads.last",
    ]);
    expect(scanTomlHeaders("[a.\"x.y\"]\n[[b.c]]\n['d'.e]\n").map((header) => [header.path, header.arrayOfTables])).toEqual([
      [["a", "x.y"], false],
      [["b", "c"], true],
      [["d", "e"], false],
    ]);
  });

  test("spans stop before comments that introduce the next table", () => {
    const spans = tableSpans(before, ["workloads", "bench"]);
    expect(spans.length).toBe(3);
    const last = before.slice(spans[2]!.start, spans[2]!.end);
    expect(last.startsWith("[ workloads . bench . environment ]")).toBe(true);
    expect(last.endsWith('"""\n')).toBe(true);
    expect(before.slice(spans[0]!.start, spans[0]!.end)).not.toContain("notes about");
  });
});

describe("planWorkloadEdit", () => {
  test("replace rewrites only the workload's tables, every other byte is identical", () => {
    const plan = planWorkloadEdit({
      currentText: before,
      name: "bench",
      definition: replacement,
      operation: "replace",
      expectedConfigurationId: configurationIdOfText(before),
    });
    expect(plan.action).toBe("updated");
    const spans = tableSpans(before, ["workloads", "bench"]);
    const table = renderWorkloadTable("bench", normalizeWorkloadDefinition(replacement));
    const expected =
      before.slice(0, spans[0]!.start) +
      table +
      before.slice(spans[0]!.end, spans[1]!.start) +
      before.slice(spans[1]!.end, spans[2]!.start) +
      before.slice(spans[2]!.end);
    expect(plan.text).toBe(expected);
    // Spelled out, the parts that must survive.
    for (const kept of [
      '# Project workloads — hand-maintained.\nschema_version = 1   # keep this\n\n[workloads.first]\nargv = ["echo", "first"]   # inline comment\ntimeout_seconds = 10\n\n# ---- the workload under edit ----\n[workloads.bench]\n',
      "# notes about bench's environment\n",
      '\n# ---- experiments ----\n[experiments.sweep]   # trailing\nworkload = "bench"\nvariants = ["a", "b"]\n\n[workloads.last]\nargv = [\'literal\', "x"]\n',
    ]) {
      expect(plan.text).toContain(kept);
    }
    expect(plan.text.endsWith("[workloads.last]\nargv = ['literal', \"x\"]\n")).toBe(true);
    expect(plan.text).not.toContain("NOTE");
    expect(plan.configurationId).toBe(configurationIdOfText(plan.text));
    const reparsed = parseProjectConfigText(plan.text);
    expect(reparsed.ok).toBe(true);
    if (!reparsed.ok) return;
    expect(Object.keys(reparsed.config.workloads).sort()).toEqual(["bench", "first", "last"]);
    expect(reparsed.config.workloads.bench!.parameters).toEqual({ size: [1, 2, 4], threads: [1, 8] });
    expect(reparsed.config.workloads.bench!.environment).toEqual({});
    expect(plan.workloadDefinitionId).toBe(workloadDefinitionId("bench", reparsed.config.workloads.bench!));
  });

  test("create appends one table after a blank line and keeps all existing bytes", () => {
    const plan = planWorkloadEdit({
      currentText: before,
      name: "fresh",
      definition: { argv: ["make", "test"], cwd: "sub", timeout_seconds: 90 },
      operation: "create",
    });
    expect(plan.action).toBe("created");
    expect(plan.text).toBe(`${before}\n[workloads.fresh]\nargv = ["make", "test"]\ncwd = "sub"\ntimeout_seconds = 90\n`);
    // No trailing newline in the original: one is added, then the blank separator line.
    const noNewline = '[workloads.a]\nargv = ["x"]';
    expect(planWorkloadEdit({ currentText: noNewline, name: "b", definition: { argv: ["y"] }, operation: "create" }).text).toBe(
      `${noNewline}\n\n[workloads.b]\nargv = ["y"]\n`,
    );
  });

  test("create on no file writes schema_version and the table", () => {
    const plan = planWorkloadEdit({ currentText: null, name: "bench", definition: { argv: ["x"] }, operation: "create" });
    expect(plan).toMatchObject({ action: "created", previousConfigurationId: null });
    expect(plan.text).toBe('schema_version = 1\n\n[workloads.bench]\nargv = ["x"]\n');
  });

  test("create of an identical definition is unchanged, even spelled differently", () => {
    const plan = planWorkloadEdit({
      currentText: before,
      name: "first",
      definition: { argv: ["echo", "first"], timeout_seconds: 10, cwd: ".", environment: {}, requirements: { allow_exploratory: false } },
      operation: "create",
    });
    expect(plan.action).toBe("unchanged");
    expect(plan.text).toBe(before);
    expect(plan.configurationId).toBe(configurationIdOfText(before));
  });

  test("create over a different existing definition is refused", () => {
    const error = refusal(() =>
      planWorkloadEdit({ currentText: before, name: "first", definition: { argv: ["echo", "changed"] }, operation: "create" }),
    );
    expect(error.code).toBe("EXECUTION_REFUSED");
    expect(error.details.next_tool).toBe("workload_configuration_status");
    expect(error.nextTool).toBe("workload_configuration_status");
  });

  test("replace of an undeclared workload is a revision conflict pointing at configure_workload", () => {
    const error = refusal(() =>
      planWorkloadEdit({
        currentText: before,
        name: "ghost",
        definition: { argv: ["x"] },
        operation: "replace",
        expectedConfigurationId: configurationIdOfText(before),
      }),
    );
    expect(error.code).toBe("REVISION_CONFLICT");
    expect(error.nextTool).toBe("configure_workload");
    expect(
      refusal(() => planWorkloadEdit({ currentText: null, name: "ghost", definition: { argv: ["x"] }, operation: "replace" })).code,
    ).toBe("REVISION_CONFLICT");
  });

  test("replace with a missing or stale expected_configuration_id is a revision conflict carrying the current id", () => {
    const current = configurationIdOfText(before);
    for (const expectedConfigurationId of [undefined, null, `sha256:${"0".repeat(64)}`]) {
      const error = refusal(() =>
        planWorkloadEdit({ currentText: before, name: "bench", definition: replacement, operation: "replace", expectedConfigurationId }),
      );
      expect(error.code).toBe("REVISION_CONFLICT");
      expect(error.details.configuration_id).toBe(current);
      expect(error.nextTool).toBe("workload_configuration_status");
    }
  });

  test("replace with the same definition is unchanged", () => {
    const plan = planWorkloadEdit({
      currentText: before,
      name: "first",
      definition: { argv: ["echo", "first"], timeout_seconds: 10 },
      operation: "replace",
      expectedConfigurationId: configurationIdOfText(before),
    });
    expect(plan.action).toBe("unchanged");
    expect(plan.text).toBe(before);
  });

  test("definitions with bad templates are refused before any edit", () => {
    for (const argv of [
      ["sh", "-c", "echo $(id)"],
      ["x", "{a.b}"],
      ["x", "{}"],
      ["x", "{undeclared}"],
    ]) {
      const error = refusal(() => planWorkloadEdit({ currentText: before, name: "t", definition: { argv }, operation: "create" }));
      expect(error.code).toBe("INVALID_ARGUMENTS");
    }
  });

  test("an edit that would invalidate the project is refused with configure_workload context", () => {
    const withFault = `[workloads.svc]
argv = ["svc", "--upstream", "{endpoint}"]
[workloads.svc.parameters]
endpoint = ["127.0.0.1:9000"]

[fault_experiments.latency]
workload = "svc"
endpoint_parameter = "endpoint"
upstream_host = "127.0.0.1"
upstream_port = 9000
endpoint_template = "{host}:{port}"
scenarios = { slow = { type = "latency", latency_ms = 50 } }
`;
    expect(parseProjectConfigText(withFault).ok).toBe(true);
    const error = refusal(() =>
      planWorkloadEdit({
        currentText: withFault,
        name: "svc",
        definition: { argv: ["svc"] },
        operation: "replace",
        expectedConfigurationId: configurationIdOfText(withFault),
      }),
    );
    expect(error.code).toBe("WORKSPACE_INVALID");
    expect(error.details).toMatchObject({ invalid_configuration: true, next_tool: "configure_workload" });
    expect(String(error.details.diagnostic)).toContain("fault_experiments.latency.endpoint_parameter");
  });

  test("an invalid file can be repaired by a create that makes it valid", () => {
    const broken = '# keep me\n[experiments.e]\nworkload = "bench"\nvariants = ["v"]\n';
    expect(parseProjectConfigText(broken).ok).toBe(false);
    const plan = planWorkloadEdit({ currentText: broken, name: "bench", definition: { argv: ["x"] }, operation: "create" });
    expect(plan.action).toBe("created");
    expect(plan.text.startsWith(broken)).toBe(true);
    expect(parseProjectConfigText(plan.text).ok).toBe(true);
  });

  test("an invalid file that a create cannot repair is refused for manual repair", () => {
    const broken = '[workloads.a]\nargv = ["x"]\nshell = true\n';
    const error = refusal(() => planWorkloadEdit({ currentText: broken, name: "b", definition: { argv: ["y"] }, operation: "create" }));
    expect(error.code).toBe("WORKSPACE_INVALID");
    expect(error.details.invalid_configuration).toBe(true);
    expect(error.details.next_tool).toBeUndefined();
    expect(String(error.details.diagnostic)).toContain('unknown key "shell"');
    const replace = refusal(() =>
      planWorkloadEdit({
        currentText: broken,
        name: "a",
        definition: { argv: ["y"] },
        operation: "replace",
        expectedConfigurationId: configurationIdOfText(broken),
      }),
    );
    expect(replace.code).toBe("WORKSPACE_INVALID");
    expect(replace.details).toMatchObject({ invalid_configuration: true, next_tool: "configure_workload" });
  });

  test("a create may repair the broken declaration of the same workload in place", () => {
    const broken = '# header\n[workloads.a]\nargv = ["x"]\nshell = true\n\n# tail\n[workloads.b]\nargv = ["y"]\n';
    const plan = planWorkloadEdit({ currentText: broken, name: "a", definition: { argv: ["x"] }, operation: "create" });
    expect(plan.text).toBe('# header\n[workloads.a]\nargv = ["x"]\n\n# tail\n[workloads.b]\nargv = ["y"]\n');
  });

  test("a workload declared inline cannot be replaced surgically", () => {
    const inline = '[workloads]\ninl = { argv = ["x"] }\n';
    const error = refusal(() =>
      planWorkloadEdit({
        currentText: inline,
        name: "inl",
        definition: { argv: ["y"] },
        operation: "replace",
        expectedConfigurationId: configurationIdOfText(inline),
      }),
    );
    expect(error.code).toBe("EXECUTION_REFUSED");
  });

  test("the rendered table round-trips every field", () => {
    const definition = normalizeWorkloadDefinition({
      argv: ["py", "-c", 'print("a\\tb")', "{n}", "{{x}}"],
      cwd: "sub dir",
      timeout_seconds: 12.5,
      parameters: { n: [1, 2.5, "three", true] },
      environment: { Z: "z", A_B: "line\nbreak\u007f" },
      oracle: { strength: "contract_check", argv: ["check", "{n}"], receipt_schema: "flameox.oracle-receipt.v1" },
      requirements: {
        executables: ["py"],
        capabilities: ["perf"],
        optional: ["perf"],
        active: ["perf"],
        allow_exploratory: true,
        python_distributions: ["numpy[extra]>=1.0"],
      },
      writable_paths: ["out"],
      identity: { python_modules: ["numpy"], native_files: ["lib.so"], environment: { required: ["cuda.driver"] } },
    });
    const plan = planWorkloadEdit({ currentText: null, name: "all.fields", definition, operation: "create" });
    expect(plan.text).toContain('[workloads."all.fields"]');
    const parsed = parseProjectConfigText(plan.text);
    expect(parsed.ok).toBe(true);
    if (parsed.ok) expect(parsed.config.workloads["all.fields"]).toEqual(definition);
  });
});

describe("writeProjectConfigAtomically", () => {
  let root: string;
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), "flameox-edit-"));
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  test("creates a new file with mode 0644 and returns the new id", async () => {
    const text = 'schema_version = 1\n\n[workloads.a]\nargv = ["x"]\n';
    const result = await writeProjectConfigAtomically(root, text, null);
    expect(await readFile(join(root, "flameox.toml"), "utf8")).toBe(text);
    expect(result.configurationId).toBe(configurationIdOfText(text));
    expect((await stat(join(root, "flameox.toml"))).mode & 0o777).toBe(0o644);
    expect(await readdir(root)).toEqual(["flameox.toml"]);
  });

  test("end to end: read, plan, write; the file mode is preserved", async () => {
    const path = join(root, "flameox.toml");
    await writeFile(path, before);
    await chmod(path, 0o600);
    const read = await readProjectConfig(root);
    const plan = planWorkloadEdit({
      currentText: read.text!,
      name: "bench",
      definition: replacement,
      operation: "replace",
      expectedConfigurationId: read.configurationId,
    });
    await writeProjectConfigAtomically(root, plan.text, plan.previousConfigurationId);
    expect(await readFile(path, "utf8")).toBe(plan.text);
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    const after = await readProjectConfig(root);
    expect(after.status).toBe("valid");
    expect(after.configurationId).toBe(plan.configurationId);
  });

  test("a file changed since the plan is a revision conflict and nothing is written", async () => {
    const path = join(root, "flameox.toml");
    await writeFile(path, before);
    const plan = planWorkloadEdit({ currentText: before, name: "fresh", definition: { argv: ["x"] }, operation: "create" });
    await writeFile(path, `${before}# someone else edited\n`);
    const error = await asyncRefusal(() => writeProjectConfigAtomically(root, plan.text, plan.previousConfigurationId));
    expect(error.code).toBe("REVISION_CONFLICT");
    expect(error.details.configuration_id).toBe(configurationIdOfText(`${before}# someone else edited\n`));
    expect(await readFile(path, "utf8")).toBe(`${before}# someone else edited\n`);
    expect(await readdir(root)).toEqual(["flameox.toml"]);
    // Expecting no file when one exists is a conflict too.
    expect((await asyncRefusal(() => writeProjectConfigAtomically(root, plan.text, null))).code).toBe("REVISION_CONFLICT");
  });
});
