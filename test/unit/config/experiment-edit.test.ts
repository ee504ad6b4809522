import { describe, expect, test } from "bun:test";
import * as v from "valibot";
import { ConfigureExperimentInputSchema, experimentDefinitionFromInput } from "../../../src/config/experiment-edit-input.ts";
import { planExperimentEdit, renderExperimentTable } from "../../../src/config/experiment-edit.ts";
import { configurationIdOfText, parseProjectConfigText } from "../../../src/config/project-config.ts";
import { FlameoxError } from "../../../src/domain/errors.ts";

function refusal(action: () => unknown): FlameoxError {
  try {
    action();
  } catch (error) {
    if (error instanceof FlameoxError) return error;
    throw error;
  }
  throw new Error("expected a FlameoxError");
}

// Comments and layout on every side of the experiment under edit, and a hand-written sub-table.
const before = `# Project — hand-maintained.
schema_version = 1   # keep

[workloads.bench]
argv = ["python", "bench.py", "{variant}", "{n}"]   # the script
[workloads.bench.parameters]
variant = ["base", "candidate"]
n = [100, 200, 400]

# ---- experiments ----
[experiments.ab]
workload = "bench"   # compared treatments below
treatment_factor = "variant"

[experiments.ab.factors]
variant = ["base", "candidate"]

# trailing notes stay where they are
[workloads.other]
argv = ["true"]
`;

const ab = { workload: "bench", factors: { variant: ["base", "candidate"] } };

describe("planExperimentEdit", () => {
  test("create appends one canonical table and keeps every other byte; only non-default keys are written", () => {
    const plan = planExperimentEdit({
      currentText: before,
      name: "scale",
      definition: {
        workload: "bench",
        scaling_parameter: "n",
        scaling_values: [100, 200, 400],
        blocks: 3,
        primary_metric: "runtime.cpu_user_ns",
      },
      operation: "create",
    });
    expect(plan.action).toBe("created");
    expect(plan.text.startsWith(before)).toBe(true);
    expect(plan.text.slice(before.length)).toBe(
      '\n[experiments.scale]\nworkload = "bench"\nscaling_parameter = "n"\nscaling_values = [100, 200, 400]\nblocks = 3\nprimary_metric = "runtime.cpu_user_ns"\n',
    );
    const parsed = parseProjectConfigText(plan.text);
    if (!parsed.ok) throw new Error(parsed.diagnostics.join("; "));
    expect(parsed.config.experiments.scale).toEqual(plan.definition);
    expect(plan.definition.variants).toBeUndefined();
    expect(plan.experimentDefinitionId).toMatch(/^sha256:/);
  });

  test("an identical definition, spelled with or without its defaults, is unchanged", () => {
    for (const definition of [ab, { ...ab, treatment_factor: "variant", blocks: 10, confidence_level: 0.99, practical_threshold: 0.05 }]) {
      const plan = planExperimentEdit({ currentText: before, name: "ab", definition, operation: "create" });
      expect(plan.action).toBe("unchanged");
      expect(plan.text).toBe(before);
      expect(plan.configurationId).toBe(configurationIdOfText(before));
    }
  });

  test("create over a different definition is refused and points at the declaration", () => {
    const error = refusal(() =>
      planExperimentEdit({ currentText: before, name: "ab", definition: { ...ab, blocks: 5 }, operation: "create" }),
    );
    expect(error.code).toBe("EXECUTION_REFUSED");
    expect(error.nextTool).toBe("get_declared_workflow");
    expect(error.details.existing_experiment_definition_id).toMatch(/^sha256:/);
  });

  test("replace is a compare-and-swap on the configuration id and rewrites only that experiment's tables", () => {
    const current = configurationIdOfText(before);
    for (const expectedConfigurationId of [undefined, `sha256:${"0".repeat(64)}`]) {
      const stale = refusal(() =>
        planExperimentEdit({
          currentText: before,
          name: "ab",
          definition: { ...ab, blocks: 5 },
          operation: "replace",
          expectedConfigurationId,
        }),
      );
      expect(stale.code).toBe("REVISION_CONFLICT");
      expect(stale.details.configuration_id).toBe(current);
      expect(stale.nextTool).toBe("get_declared_workflow");
    }
    const plan = planExperimentEdit({
      currentText: before,
      name: "ab",
      definition: { ...ab, blocks: 5, warmups: 1, polarity: "lower_is_better" },
      operation: "replace",
      expectedConfigurationId: current,
    });
    expect(plan.action).toBe("updated");
    const [head, tail] = before.split("[experiments.ab]\n");
    expect(plan.text.startsWith(head!)).toBe(true);
    expect(plan.text.endsWith(tail!.slice(tail!.indexOf("# trailing notes")))).toBe(true);
    expect(plan.text).toContain(
      '[experiments.ab]\nworkload = "bench"\nfactors = { variant = ["base", "candidate"] }\ntreatment_factor = "variant"\nblocks = 5\nwarmups = 1\npolarity = "lower_is_better"\n',
    );
    expect(plan.text).not.toContain("[experiments.ab.factors]");
    const ghost = refusal(() =>
      planExperimentEdit({ currentText: before, name: "ghost", definition: ab, operation: "replace", expectedConfigurationId: current }),
    );
    expect(ghost.code).toBe("REVISION_CONFLICT");
    expect(ghost.nextTool).toBe("configure_experiment");
  });

  test("an undeclared workload, parameter or choice is refused before anything is written", () => {
    const workload = refusal(() =>
      planExperimentEdit({ currentText: before, name: "x", definition: { ...ab, workload: "nope" }, operation: "create" }),
    );
    expect(workload.code).toBe("WORKSPACE_INVALID");
    expect(workload.message).toContain("No workload named 'nope'");
    const parameter = refusal(() =>
      planExperimentEdit({
        currentText: before,
        name: "x",
        definition: { workload: "bench", factors: { size: [1, 2] } },
        operation: "create",
      }),
    );
    expect(parameter.code).toBe("INVALID_ARGUMENTS");
    expect(parameter.details.fields).toEqual([
      { field: "factors.size", message: "workload 'bench' has no parameter 'size' (declared: variant, n)", type: "unknown_parameter" },
    ]);
    const choice = refusal(() =>
      planExperimentEdit({
        currentText: before,
        name: "x",
        definition: { workload: "bench", scaling_parameter: "n", scaling_values: [100, 300] },
        operation: "create",
      }),
    );
    expect(choice.details.fields).toEqual([
      { field: "scaling_values", message: "300 not among the choices of 'n': 100, 200, 400", type: "undeclared_choice" },
    ]);
    const noFile = refusal(() => planExperimentEdit({ currentText: null, name: "x", definition: ab, operation: "create" }));
    expect(noFile.message).toContain("No workload named 'bench'");
  });

  test("the table's own rules are INVALID_ARGUMENTS naming the problem; a missing workload is reported as missing", () => {
    const rules = refusal(() =>
      planExperimentEdit({ currentText: before, name: "x", definition: { ...ab, treatment_factor: "n" }, operation: "create" }),
    );
    expect(rules.code).toBe("INVALID_ARGUMENTS");
    expect(rules.details.fields).toEqual([
      { field: "(definition)", message: 'treatment_factor "n" is not one of the factors', type: "raw_check" },
    ]);
    const missing = refusal(() =>
      planExperimentEdit({ currentText: before, name: "x", definition: { factors: ab.factors }, operation: "create" }),
    );
    expect(missing.details.fields).toEqual([{ field: "workload", message: "required key is missing", type: "strict_object" }]);
  });

  test("an experiment written in hand-made layout round-trips through its canonical table", () => {
    const plan = planExperimentEdit({ currentText: before, name: "ab", definition: ab, operation: "create" });
    const rendered = renderExperimentTable("ab", plan.definition);
    expect(rendered).toBe(
      '[experiments.ab]\nworkload = "bench"\nfactors = { variant = ["base", "candidate"] }\ntreatment_factor = "variant"\n',
    );
  });
});

describe("configure_experiment's input", () => {
  test("carries only the table's keys into the definition", () => {
    const input = v.parse(ConfigureExperimentInputSchema, {
      name: "ab",
      operation: "replace",
      workload: "bench",
      factors: { variant: ["base", "candidate"] },
      random_seed: 3,
      expected_configuration_id: `sha256:${"a".repeat(64)}`,
    });
    expect(experimentDefinitionFromInput(input)).toEqual({
      workload: "bench",
      factors: { variant: ["base", "candidate"] },
      random_seed: 3,
    });
    expect(v.safeParse(ConfigureExperimentInputSchema, { name: "ab", operation: "create", workload: "b", seed: 1 }).success).toBe(false);
  });
});
