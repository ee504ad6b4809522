import { describe, expect, test } from "bun:test";
import { FlameoxError } from "../../../src/domain/errors.ts";
import { normalizeWorkloadDefinition } from "../../../src/config/project-config.ts";
import {
  isContainedRelativePath,
  resolveWorkloadInvocation,
  scanTemplate,
  workloadTemplateProblems,
} from "../../../src/config/workload-template.ts";

function thrown(action: () => unknown): FlameoxError {
  try {
    action();
  } catch (error) {
    if (error instanceof FlameoxError) return error;
    throw error;
  }
  throw new Error("expected a FlameoxError");
}

describe("scanTemplate", () => {
  test("placeholders and escaped braces", () => {
    const scan = scanTemplate("--size={size} {{literal}} {n_2}");
    expect(scan.ok).toBe(true);
    if (!scan.ok) return;
    expect(scan.placeholders).toEqual(["size", "n_2"]);
    expect(scan.parts).toEqual([
      { kind: "literal", text: "--size=" },
      { kind: "placeholder", name: "size" },
      { kind: "literal", text: " {literal} " },
      { kind: "placeholder", name: "n_2" },
    ]);
  });

  test.each([
    ["{a.b}", "not a plain parameter name"],
    ["{}", "empty placeholder"],
    ["{size:3}", "not a plain parameter name"],
    ["{0}", "not a plain parameter name"],
    ['{"json": 1}', "not a plain parameter name"],
    ["open {", 'unmatched "{"'],
    ["close }", 'unmatched "}"'],
    ["$(whoami)", "shell syntax"],
    ["${HOME}", "shell syntax"],
    ["`id`", "shell syntax"],
  ])("refuses %s", (template, fragment) => {
    const scan = scanTemplate(template);
    expect(scan.ok).toBe(false);
    if (!scan.ok) expect(scan.message).toContain(fragment);
  });

  test("undeclared placeholders are named, sorted", () => {
    expect(workloadTemplateProblems({ argv: ["run", "{zeta}", "{alpha}"], cwd: "{alpha}", parameters: {} })).toEqual([
      "template fields are not declared parameters: alpha, zeta",
    ]);
    expect(workloadTemplateProblems({ argv: ["run", "{size}"], environment: { X: "{size}" }, parameters: { size: [1] } })).toEqual([]);
  });
});

describe("resolveWorkloadInvocation", () => {
  const workload = normalizeWorkloadDefinition({
    argv: ["python", "bench.py", "--size", "{size}", "--fast={fast}", "{{raw}}"],
    cwd: "runs/{mode}",
    parameters: { size: [128, 256, 1.5], mode: ["small", "large"], fast: [false, true] },
    environment: { MODE: "{mode}-{size}" },
    oracle: { argv: ["check", "{mode}"] },
  });

  test("defaults are the first choices", () => {
    const invocation = resolveWorkloadInvocation(workload);
    expect(invocation).toEqual({
      argv: ["python", "bench.py", "--size", "128", "--fast=false", "{raw}"],
      cwd: "runs/small",
      environment: { MODE: "small-128" },
      parameters: { fast: false, mode: "small", size: 128 },
      oracleArgv: ["check", "small"],
    });
  });

  test("overrides among the choices, including textual forms of numbers", () => {
    const invocation = resolveWorkloadInvocation(workload, { size: "256", mode: "large", fast: true });
    expect(invocation.argv).toEqual(["python", "bench.py", "--size", "256", "--fast=true", "{raw}"]);
    expect(invocation.parameters).toEqual({ fast: true, mode: "large", size: 256 });
    expect(resolveWorkloadInvocation(workload, { size: 1.5 }).argv[3]).toBe("1.5");
  });

  test("unknown parameter → INVALID_CAPTURE_PLAN", () => {
    const error = thrown(() => resolveWorkloadInvocation(workload, { threads: 4, aaa: 1 }));
    expect(error.code).toBe("INVALID_CAPTURE_PLAN");
    expect(error.details).toMatchObject({
      parameter: "aaa",
      parameters: ["aaa", "threads"],
      allowed: ["fast", "mode", "size"],
      received: 1,
    });
  });

  test("value outside the choices → INVALID_CAPTURE_PLAN with allowed and received", () => {
    const error = thrown(() => resolveWorkloadInvocation(workload, { size: 512 }));
    expect(error.code).toBe("INVALID_CAPTURE_PLAN");
    expect(error.details).toEqual({ parameter: "size", allowed: [128, 256, 1.5], received: 512 });
    // true is not the string "true": the choice list holds booleans.
    expect(thrown(() => resolveWorkloadInvocation(workload, { mode: true })).details).toMatchObject({ parameter: "mode", received: true });
  });

  test("a rendered cwd that leaves the project is refused", () => {
    const escaping = normalizeWorkloadDefinition({ argv: ["x"], cwd: "a/{dir}", parameters: { dir: ["ok", "../.."] } });
    expect(resolveWorkloadInvocation(escaping).cwd).toBe("a/ok");
    expect(thrown(() => resolveWorkloadInvocation(escaping, { dir: "../.." })).code).toBe("EXECUTION_REFUSED");
  });

  test("contained relative paths", () => {
    for (const path of [".", "a", "a/b/..", "a/../b", "./x"]) expect(isContainedRelativePath(path)).toBe(true);
    for (const path of ["", "/abs", "..", "../x", "a/../..", "C:/x", "a\0b"]) expect(isContainedRelativePath(path)).toBe(false);
  });
});
