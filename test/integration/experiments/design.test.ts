/**
 * plan_experiment's account of a design (the smallest detectable change and the warnings for designs too
 * small for a verdict), and warm-up rounds on real trials: recorded, members of their treatment's run set,
 * never measured. The warm-up experiment's comparison is not asserted (5 blocks of identical work), only
 * what was counted.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { minimumDetectableRatio } from "../../../src/analysis/statistics/design-power.ts";
import type { Services } from "../../../src/services/services.ts";
import { join } from "node:path";
import { experimentProject, repositoryRoot } from "./project.ts";

// Real trials (14 short ones). The suite's default per-test deadline is 30 s (scripts/test-deadline.ts).
setDefaultTimeout(120_000);

const toml = `
[workloads.busy]
argv = ["$PYTHON", "-S", "busy.py", "{variant}"]
parameters = { variant = ["base", "same", "more"] }

# The venv's own interpreter (not its realpath, which is the bare base Python): pyperf is installed there.
[workloads.timed]
argv = ["${join(repositoryRoot, ".tools", "venv", "bin", "python")}", "busy.py", "{variant}"]
parameters = { variant = ["base", "more"] }

[experiments.timed]
workload = "timed"
factors = { variant = ["base", "more"] }
blocks = 3

[experiments.defaults]
workload = "busy"
factors = { variant = ["base", "more"] }
primary_metric = "runtime.cpu_user_ns"

[experiments.small]
workload = "busy"
factors = { variant = ["base", "more"] }
blocks = 3

[experiments.strict]
workload = "busy"
factors = { variant = ["base", "more"] }
blocks = 5
confidence_level = 0.999
primary_metric = "bench_throughput"

[experiments.sweep]
workload = "busy"
factors = { variant = ["base", "same", "more"] }
blocks = 2

[experiments.large]
workload = "busy"
factors = { variant = ["base", "same"] }
blocks = 500

[experiments.warm]
workload = "busy"
factors = { variant = ["base", "same"] }
blocks = 5
warmups = 2
primary_metric = "runtime.cpu_user_ns"
`;

let services: Services;
beforeAll(async () => {
  ({ services } = await experimentProject("design", toml));
});
afterAll(() => services.close());

const plan = (name: string) => services.experiments.plan({ experiment_name: name, adapter: "command", parameters: {} });

describe("plan_experiment says what a design can detect", () => {
  test("the defaults: 10 blocks detect ×1.26 at 10 % noise, polarity from the metric, no warning beyond trusted-local execution", async () => {
    const planned = await plan("defaults");
    expect(planned.blocks).toBe(10);
    expect(planned.statistics).toMatchObject({ polarity: "lower_is_better", confidence_level: 0.99, practical_threshold: 0.05 });
    expect(planned.detectable_change).toMatchObject({ samples_per_side: 10, assumed_noise_cv: 0.1, power: 0.8, pairing: "paired" });
    expect(planned.detectable_change!.ratio).toBeCloseTo(
      minimumDetectableRatio({ samples_per_side: 10, pairing: "paired", noise_cv: 0.1, confidence_level: 0.99, practical_threshold: 0.05 }),
      12,
    );
    expect(planned.detectable_change!.ratio!).toBeCloseTo(1.263, 3);
    expect(planned.warnings).toHaveLength(1);
  });

  test("fewer than 5 blocks can never reach a verdict; the warning says how many blocks would detect 20 %", async () => {
    const planned = await plan("small");
    expect(planned.detectable_change!.ratio).toBeNull();
    const blocks = planned.detectable_change!.blocks_for_20_percent!;
    expect(blocks).toBeGreaterThan(10);
    expect(
      planned.warnings.some((warning) => warning.includes("blocks = 3") && warning.includes(`${blocks} blocks would detect a 20 % change`)),
    ).toBe(true);
  });

  test("a design that detects only large changes and a metric without a direction are both warned about", async () => {
    const planned = await plan("strict");
    expect(planned.detectable_change!.ratio!).toBeGreaterThan(1.5);
    expect(planned.statistics.polarity).toBe("neutral");
    expect(planned.warnings.some((warning) => warning.startsWith("This design detects only changes of ×"))).toBe(true);
    expect(planned.warnings.some((warning) => warning.startsWith("polarity is neutral for metric bench_throughput"))).toBe(true);
  });

  test("under pyperf, an experiment that names no metric compares the benchmark's own timings, lower is better", async () => {
    // pyperf calibrates its loops to a fixed duration, so the process's wall time would hardly move with the work.
    const planned = await services.experiments.plan({ experiment_name: "timed", adapter: "pyperf", parameters: {} });
    expect(planned.statistics).toMatchObject({ primary_metric: "pyperf.workload", polarity: "lower_is_better" });
    expect(planned.warnings).toContain(
      "primary_metric is the default categorical_outcome; performance comparisons use pyperf.workload (lower is better) instead.",
    );
    const named = await services.experiments.plan({
      experiment_name: "timed",
      adapter: "pyperf",
      adapter_options: { name: "sorting" },
      parameters: {},
    });
    expect(named.statistics.primary_metric).toBe("pyperf.sorting");
    // A declared metric stays what it is, and other adapters keep the process's wall time.
    expect((await plan("small")).statistics.primary_metric).toBe("runtime.wall_time_ns");
  });

  test("a sweep of more than two treatments reports the detectable change but no verdict warnings", async () => {
    const planned = await plan("sweep");
    expect(planned.detectable_change!.ratio).toBeNull();
    expect(planned.warnings.some((warning) => warning.includes("blocks = 2"))).toBe(false);
  });
});

describe("a plan's order stays bounded", () => {
  test("1,000 trials: the plan lists the first few, counts all of them, and fits the 8,000-character result budget", async () => {
    const planned = await plan("large");
    expect(planned.trial_count).toBe(1000);
    expect(planned.order).toHaveLength(6);
    expect(planned.order_truncated).toBe(true);
    expect(planned.order_summary).toMatchObject({
      trials: 1000,
      blocks: 500,
      trials_per_block: { minimum: 2, maximum: 2 },
      trials_per_treatment: { base: 500, same: 500 },
    });
    expect(planned.order_summary.first_in_block.base! + planned.order_summary.first_in_block.same!).toBe(500);
    // Wrapped in the envelope ({schema_version, ok, result, error}: 60 characters).
    expect(JSON.stringify(planned).length + 60).toBeLessThanOrEqual(8_000);
  });
});

describe("warm-up rounds", () => {
  test("run first, are recorded like every trial, and stay out of the measured samples", async () => {
    const planned = await plan("warm");
    expect(planned.trial_count).toBe(14);
    expect(planned.order.slice(0, 4).every((trial) => trial.warmup)).toBe(true);
    const receipt = await services.experiments.run(planned.plan_id);
    expect(receipt.counts.succeeded).toBe(14);
    for (const { run_set_id } of receipt.run_sets) {
      const runSet = services.runSets.get(run_set_id);
      expect(runSet.counts).toEqual({ members: 7, included: 5, excluded: 2 });
      expect(runSet.members.filter((member) => !member.included).map((member) => member.reason)).toEqual([
        "warm-up trial",
        "warm-up trial",
      ]);
    }
    const comparison = services.comparisons.getEvidence("comparison", receipt.comparison_id!).result as Record<string, any>;
    expect(comparison.counts.pairs).toBe(5);
    // The receipt names what it compared and sends the agent to the recorded comparison, arguments complete.
    expect(receipt.comparison?.metric).toBe("runtime.cpu_user_ns");
    expect(receipt.next_tool).toBe("get_evidence");
    expect(receipt.next_arguments).toEqual({ ref_type: "comparison", ref_id: receipt.comparison_id });
    expect(comparison.counts.excluded).toEqual({ baseline: 2, candidate: 2 });
    expect(comparison.counts.failed).toEqual({ baseline: 0, candidate: 0 });
  });
});

describe("an experiment under pyperf", () => {
  test("is compared on the benchmark's own timings, which every trial recorded", async () => {
    const planned = await services.experiments.plan({
      experiment_name: "timed",
      adapter: "pyperf",
      adapter_options: { processes: 1, values: 2, warmups: 0 },
      parameters: {},
    });
    const receipt = await services.experiments.run(planned.plan_id);
    expect(receipt.counts.succeeded).toBe(6);
    expect(receipt.comparison?.metric).toBe("pyperf.workload");
    const comparison = services.comparisons.getEvidence("comparison", receipt.comparison_id!).result as Record<string, any>;
    expect(comparison.metric).toBe("pyperf.workload");
    expect(comparison.counts.pairs).toBe(3);
  });
});
