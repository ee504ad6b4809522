import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as v from "valibot";
import { sha256Hex } from "../../../src/domain/canonical-json.ts";
import { FlameoxError } from "../../../src/domain/errors.ts";
import { ConfigureWorkloadInputSchema, workloadDefinitionFromInput } from "../../../src/config/project-config-schema.ts";
import {
  normalizeWorkloadDefinition,
  parseProjectConfigText,
  readProjectConfig,
  workloadDefinitionId,
} from "../../../src/config/project-config.ts";

let root: string;
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "flameox-config-"));
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

const valid = `# project workloads
schema_version = 1

[workloads.bench]
argv = ["python", "bench.py", "--size", "{size}"]
timeout_seconds = 60

[workloads.bench.parameters]
size = [128, 256]

[experiments.size-effect]
workload = "bench"
factors = { size = [128, 256] }
treatment_factor = "size"
polarity = "lower_is_better"
`;

function invalidDiagnostics(text: string): string[] {
  const parsed = parseProjectConfigText(text);
  expect(parsed.ok).toBe(false);
  return parsed.ok ? [] : parsed.diagnostics;
}

describe("readProjectConfig", () => {
  test("missing", async () => {
    expect(await readProjectConfig(root)).toEqual({
      status: "missing",
      configPath: "flameox.toml",
      configurationId: null,
      diagnostics: ["No named workload configuration exists yet."],
    });
  });

  test("valid: defaults applied, configuration id is the digest of the raw bytes", async () => {
    await writeFile(join(root, "flameox.toml"), valid);
    const read = await readProjectConfig(root);
    expect(read.status).toBe("valid");
    expect(read.text).toBe(valid);
    expect(read.configurationId).toBe(`sha256:${sha256Hex(new TextEncoder().encode(valid))}`);
    expect(read.diagnostics).toEqual([]);
    const bench = read.config!.workloads.bench!;
    expect(bench).toMatchObject({ cwd: ".", timeout_seconds: 60, environment: {}, writable_paths: [], parameters: { size: [128, 256] } });
    expect(bench.requirements).toEqual({
      executables: [],
      python_distributions: [],
      capabilities: [],
      optional: [],
      active: [],
      allow_exploratory: false,
    });
    expect(read.config!.experiments["size-effect"]).toMatchObject({
      design: "randomized_complete_blocks",
      blocks: 10,
      warmups: 0,
      confidence_level: 0.99,
      random_seed: 0,
      practical_threshold: 0.05,
    });
    expect(read.config!.experiments["size-effect"]!.polarity).toBe("lower_is_better");
  });

  test("valid with no workloads says so", async () => {
    await writeFile(join(root, "flameox.toml"), "schema_version = 1\n");
    const read = await readProjectConfig(root);
    expect(read.status).toBe("valid");
    expect(read.diagnostics).toEqual(["No named workloads are declared yet."]);
  });

  test("non-UTF-8 bytes are refused", async () => {
    const bytes = new Uint8Array([
      ...new TextEncoder().encode('[workloads.a]\nargv = ["'),
      0xff,
      0xfe,
      ...new TextEncoder().encode('"]\n'),
    ]);
    await writeFile(join(root, "flameox.toml"), bytes);
    const read = await readProjectConfig(root);
    expect(read.status).toBe("invalid");
    expect(read.configurationId).toBe(`sha256:${sha256Hex(bytes)}`);
    expect(read.diagnostics[0]).toContain("not valid UTF-8");
    expect(read.diagnostics[0]).toContain("offset 23");
  });

  test("malformed TOML is refused with line and column", async () => {
    await writeFile(join(root, "flameox.toml"), '[workloads.a]\nargv = ["x",\n');
    const read = await readProjectConfig(root);
    expect(read.status).toBe("invalid");
    expect(read.text).toBe('[workloads.a]\nargv = ["x",\n');
    expect(read.diagnostics[0]).toMatch(/^flameox\.toml:\d+:\d+: TOML syntax error/);
  });
});

describe("parseProjectConfigText refusals", () => {
  test("duplicate keys and duplicate tables", () => {
    expect(invalidDiagnostics('[workloads.a]\nargv = ["x"]\nargv = ["y"]\n')[0]).toContain("defined twice");
    expect(invalidDiagnostics('[workloads.a]\nargv = ["x"]\n[workloads.a]\ncwd = "."\n')[0]).toMatch(
      /flameox\.toml:3:\d+: .*defined twice/,
    );
  });

  test("unknown keys are named with their path", () => {
    expect(invalidDiagnostics('[workloads.a]\nargv = ["x"]\nshell = "bash"\n')).toEqual([
      'workloads.a: unknown key "shell" is not allowed here',
    ]);
    expect(invalidDiagnostics("colour = 1\n")).toEqual(['(top level): unknown key "colour" is not allowed here']);
    expect(invalidDiagnostics('[workloads.a]\nargv = ["x"]\n[workloads.a.oracle]\nkind = "x"\n')).toEqual([
      'workloads.a.oracle: unknown key "kind" is not allowed here',
    ]);
  });

  test.each([
    ["[workloads.a]\nargv = []\n", "workloads.a.argv: argv needs at least the executable"],
    ['[workloads.a]\nargv = ["x", 3]\n', "workloads.a.argv.1: expected string (received 3)"],
    ['[workloads.a]\nargv = ["x"]\ncwd = "/etc"\n', "workloads.a.cwd: cwd must be project-relative"],
    ['[workloads.a]\nargv = ["x"]\ncwd = "../other"\n', "workloads.a.cwd: cwd must be project-relative"],
    ['[workloads.a]\nargv = ["x"]\ntimeout_seconds = 0\n', "workloads.a.timeout_seconds: timeout_seconds must be > 0"],
    ['[workloads.a]\nargv = ["x"]\ntimeout_seconds = 86401\n', "workloads.a.timeout_seconds: timeout_seconds must be <= 86400"],
    [
      '[workloads.a]\nargv = ["x"]\n[workloads.a.parameters]\nsize = []\n',
      "workloads.a.parameters.size: a parameter needs at least one choice",
    ],
    [
      '[workloads.a]\nargv = ["x"]\n[workloads.a.environment]\n"BAD NAME" = "1"\n',
      'workloads.a.environment."BAD NAME": environment names must match',
    ],
    [
      '[workloads.a]\nargv = ["x"]\nwritable_paths = [".git/hooks"]\n',
      "workloads.a.writable_paths.0: writable paths must not start with .git",
    ],
    ['[workloads.a]\nargv = ["x", "{size}"]\n', "workloads.a: template fields are not declared parameters: size"],
    ['[workloads.a]\nargv = ["sh", "-c", "echo $(date)"]\n', "workloads.a: argv.2: template contains shell syntax"],
    ['[workloads."a b"]\nargv = ["x"]\n', 'workloads."a b": names must match'],
    ["schema_version = 2\n", "schema_version: schema_version must be 1"],
    ['[workloads.a]\nargv = ["x"]\nstarted = 1979-05-27\n', 'workloads.a: unknown key "started"'],
    ['[workloads.a]\nargv = ["x"]\ntimeout_seconds = nan\n', "workloads.a.timeout_seconds"],
    [
      '[workloads.a]\nargv = ["x"]\n[workloads.a.requirements]\nexecutables = ["perf"]\noptional = ["gdb"]\n',
      "every optional requirement must also be declared",
    ],
    [
      '[workloads.a]\nargv = ["x"]\n[workloads.a.requirements]\npython_distributions = ["git+https://example.invalid/x"]\n',
      "index specifiers only",
    ],
  ])("schema violation %#", (text, fragment) => {
    const diagnostics = invalidDiagnostics(text);
    expect(diagnostics.some((diagnostic) => diagnostic.includes(fragment))).toBe(true);
  });

  test("cross references: experiments naming unknown workloads", () => {
    const diagnostics = invalidDiagnostics('[workloads.a]\nargv = ["x"]\n[experiments.e]\nworkload = "missing"\nvariants = ["v"]\n');
    expect(diagnostics).toEqual(['experiments.e.workload: experiment references unknown workload "missing"']);
  });

  test("experiment rules", () => {
    expect(invalidDiagnostics('[workloads.a]\nargv = ["x"]\n[experiments.e]\nworkload = "a"\nfactors = { n = [1, 2], m = [3] }\n')).toEqual(
      ["experiments.e: treatment_factor is required when more than one factor is declared"],
    );
    expect(invalidDiagnostics('[workloads.a]\nargv = ["x"]\n[experiments.e]\nworkload = "a"\n')).toEqual([
      "experiments.e: an experiment needs factors, scaling_parameter with scaling_values, or legacy variants",
    ]);
    expect(
      invalidDiagnostics('[workloads.a]\nargv = ["x"]\n[experiments.e]\nworkload = "a"\nvariants = ["v"]\nconfidence_level = 1\n')[0],
    ).toContain("experiments.e.confidence_level: confidence_level must be < 1");
    expect(
      invalidDiagnostics('[workloads.a]\nargv = ["x"]\n[experiments.e]\nworkload = "a"\nvariants = ["v"]\npolarity = "up"\n')[0],
    ).toContain("experiments.e.polarity");
  });

  test("a missing required key is reported as missing, not as an unknown key", () => {
    expect(invalidDiagnostics('[workloads.a]\nargv = ["x"]\n[experiments.noworkload]\nvariants = ["v"]\n')).toEqual([
      'experiments.noworkload: required key "workload" is missing',
    ]);
    expect(invalidDiagnostics('[workloads.a]\ncwd = "."\n')).toEqual(['workloads.a: required key "argv" is missing']);
  });

  test("a scaling experiment needs no variants; one factor is the treatment without naming it", () => {
    const parsed = parseProjectConfigText(`[workloads.a]
argv = ["x", "{n}"]
parameters = { n = [1, 2, 4] }

[experiments.scale]
workload = "a"
scaling_parameter = "n"
scaling_values = [1, 2, 4]

[experiments.one]
workload = "a"
factors = { n = [1, 2] }
`);
    if (!parsed.ok) throw new Error(parsed.diagnostics.join("; "));
    expect(parsed.config.experiments.scale!.variants).toBeUndefined();
    expect(parsed.config.experiments.one!.treatment_factor).toBe("n");
  });

  test("diagnostics are bounded to 8 entries of at most 512 characters", () => {
    const many = Array.from({ length: 20 }, (_, index) => `[workloads.w${index}]\nargv = []\nunknown_${"x".repeat(600)} = 1\n`).join("");
    const diagnostics = invalidDiagnostics(many);
    expect(diagnostics.length).toBe(8);
    for (const diagnostic of diagnostics) expect(diagnostic.length).toBeLessThanOrEqual(512);
  });
});

describe("workloadDefinitionId", () => {
  test("hand-written TOML and an agent-written definition get the same id", () => {
    const handWritten = `[workloads.bench]
argv = [ "python", "bench.py", "--size", "{size}" ]   # trailing comment
cwd = "."
timeout_seconds = 300.0
environment = {}
[workloads.bench.parameters]
size = [ 128, 256 ]
[workloads.bench.requirements]
executables = []
allow_exploratory = false
`;
    const parsed = parseProjectConfigText(handWritten);
    expect(parsed.ok).toBe(true);
    if (!parsed.ok) return;
    const input = v.parse(ConfigureWorkloadInputSchema, {
      name: "bench",
      operation: "create",
      argv: ["python", "bench.py", "--size", "{size}"],
      parameters: { size: [128, 256] },
      environment: null,
      oracle: null,
    });
    const fromAgent = workloadDefinitionId(input.name, workloadDefinitionFromInput(input));
    expect(workloadDefinitionId("bench", parsed.config.workloads.bench!)).toBe(fromAgent);
    expect(fromAgent).toMatch(/^sha256:[0-9a-f]{64}$/);
    // The name is part of the identity, and so is every field.
    expect(workloadDefinitionId("other", parsed.config.workloads.bench!)).not.toBe(fromAgent);
    expect(workloadDefinitionId("bench", { ...parsed.config.workloads.bench!, timeout_seconds: 301 })).not.toBe(fromAgent);
  });

  test("an invalid definition is INVALID_ARGUMENTS naming the field", () => {
    try {
      normalizeWorkloadDefinition({ argv: ["x", "{nope}"], cwd: "/abs" });
      throw new Error("expected a refusal");
    } catch (error) {
      expect(error).toBeInstanceOf(FlameoxError);
      const flameox = error as FlameoxError;
      expect(flameox.code).toBe("INVALID_ARGUMENTS");
      expect(flameox.message).toContain("cwd");
    }
  });
});

describe("ConfigureWorkloadInputSchema", () => {
  test("property order and required fields", () => {
    expect(Object.keys(ConfigureWorkloadInputSchema.entries)).toEqual([
      "name",
      "operation",
      "argv",
      "cwd",
      "timeout_seconds",
      "parameters",
      "environment",
      "oracle",
      "requirements",
      "writable_paths",
      "identity",
      "expected_configuration_id",
    ]);
    expect(v.safeParse(ConfigureWorkloadInputSchema, { name: "a", operation: "create", argv: ["x"] }).success).toBe(true);
    expect(v.safeParse(ConfigureWorkloadInputSchema, { name: "a", operation: "create" }).success).toBe(false);
    expect(v.safeParse(ConfigureWorkloadInputSchema, { name: "-a", operation: "create", argv: ["x"] }).success).toBe(false);
    expect(v.safeParse(ConfigureWorkloadInputSchema, { name: "a", operation: "upsert", argv: ["x"] }).success).toBe(false);
    expect(
      v.safeParse(ConfigureWorkloadInputSchema, { name: "a", operation: "replace", argv: ["x"], expected_configuration_id: "sha256:abc" })
        .success,
    ).toBe(false);
    expect(v.safeParse(ConfigureWorkloadInputSchema, { name: "a", operation: "create", argv: ["x"], extra: 1 }).success).toBe(false);
  });
});
