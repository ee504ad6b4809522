/**
 * analyze_scaling on real runs: scale.py's cost is linear or quadratic in n (two series of one experiment,
 * 5 sizes spanning 16×, 3 blocks, user CPU time), and a py-spy experiment over a workload whose linear and
 * quadratic functions are interleaved, where the quadratic one must grow fastest.
 *
 * How the false-failure bounds were obtained: test/unit/analysis/scaling-growth.test.ts replays both
 * designs (test/support/experiment-designs.ts) on 10,000 seeded synthetic runs each. With twice the CPU-time
 * noise measured on this machine (12 % relative plus 6 ms additive per run), the fits keep ΔAICc > 2 between
 * O(n) and O(n²) in every seed, and with Poisson sampling plus 30 % per-run jitter of each function's
 * samples quadratic_part grows fastest in every seed. Under the measured noise the smallest ΔAICc seen is
 * 12, six times the threshold. Before, the quadratic series' smallest sizes cost less than twice the
 * start-up and its few milliseconds of user-time noise, and 0.4 % of simulated runs failed.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from "bun:test";
import type { Services } from "../../../src/services/services.ts";
import type { ExperimentReceipt } from "../../../src/services/experiment-service.ts";
import { hotspotGrowthDesign, scalingGrowthDesign } from "../../support/experiment-designs.ts";
import { experimentProject } from "./project.ts";

// Real trials and py-spy captures. The suite's default per-test deadline is 30 s (scripts/test-deadline.ts).
setDefaultTimeout(120_000);

const toml = `
[workloads.scale]
argv = ["$PYTHON", "-S", "scale.py", "{shape}", "{n}"]
parameters = { shape = ["linear", "quadratic", "both"], n = [${[...new Set([...scalingGrowthDesign.sizes, ...hotspotGrowthDesign.sizes])].sort((a, b) => a - b).join(", ")}] }

[experiments.growth]
workload = "scale"
factors = { shape = ["linear", "quadratic"], n = [${scalingGrowthDesign.sizes.join(", ")}] }
treatment_factor = "n"
blocks = ${scalingGrowthDesign.blocks}
random_seed = 3

[experiments.profiled]
workload = "scale"
factors = { shape = ["both"], n = [${hotspotGrowthDesign.sizes.join(", ")}] }
treatment_factor = "n"
blocks = ${hotspotGrowthDesign.blocks}
`;

let services: Services;
let growth: ExperimentReceipt;

beforeAll(async () => {
  ({ services } = await experimentProject("scaling", toml));
  const plan = await services.experiments.plan({ experiment_name: "growth", adapter: "command", parameters: {} });
  growth = await services.experiments.run(plan.plan_id);
}, 120_000);

afterAll(() => services.close());

describe("analyze_scaling", () => {
  test("tells O(n) from O(n²)", async () => {
    expect(growth.counts.succeeded).toBe(2 * scalingGrowthDesign.sizes.length * scalingGrowthDesign.blocks);
    // CPU time rather than wall time: the verdict is about the program's growth, and other work on this
    // 2-core machine inflates wall time of single runs at random.
    const result = await services.scaling.analyze({ experiment_id: growth.experiment_id, metric: "runtime.cpu_user_ns" });
    expect(result.size_parameter).toBe("n");
    expect(result.counts.sizes).toBe(5);
    expect(result.missing_sizes).toEqual([]);
    const byShape = Object.fromEntries(result.series.map((series) => [String(series.factors.shape), series]));
    const delta = (shape: string, model: string) => byShape[shape]!.fit.models.find((fit) => fit.model === model)!.delta_aicc;
    // Linear vs n log n is not what this test is about (over 16x they are close); O(n) vs O(n^2) is.
    expect(["linear", "n_log_n"]).toContain(String(byShape.linear!.fit.best_model));
    expect(delta("linear", "quadratic")).toBeGreaterThan(2);
    expect(byShape.quadratic!.fit.best_model).toBe("quadratic");
    expect(delta("quadratic", "linear")).toBeGreaterThan(2);
    expect(result.hotspot_evidence.status).toBe("unavailable");
    expect(result.limitations.join(" ")).toContain("extrapolate");
  });

  test("run_experiment's receipt for a sweep of numeric sizes sends the agent to analyze_scaling with complete arguments", async () => {
    // Two factors (shape and n): each shape is a series, so the sweep over n is still a scaling question.
    expect(growth.comparison).toBeNull();
    expect(growth.next_tool).toBe("analyze_scaling");
    expect(growth.next_arguments).toEqual({ experiment_id: growth.experiment_id, size_parameter: "n" });
    const result = await services.scaling.analyze(growth.next_arguments);
    expect(result.counts.sizes).toBe(scalingGrowthDesign.sizes.length);
  });

  test("reads only existing runs: a run set missing sizes reports what is missing and runs nothing", async () => {
    const trials = services.experiments.listTrials({ experiment_id: growth.experiment_id, limit: 1000, cursor: null }).trials;
    const linearSmall = trials.filter((trial) => trial.factors.shape === "linear" && Number(trial.factors.n) <= 1000);
    const runSet = services.runSets.freeze({ run_ids: linearSmall.map((trial) => trial.run_id!) });
    const before = services.runs.listRuns({ limit: 1, cursor: null, filter: null }).total;
    const result = await services.scaling.analyze({ run_set_id: runSet.run_set_id });
    expect(result.size_parameter).toBe("n");
    expect(result.counts.sizes).toBe(3);
    expect(services.runs.listRuns({ limit: 1, cursor: null, filter: null }).total).toBe(before);
    const recorded = await services.analysisRecords.record({ recipe: "scaling", experiment_id: growth.experiment_id });
    expect(recorded.ref_type).toBe("analysis");
    const stored = services.comparisons.getEvidence("analysis", recorded.ref_id);
    expect(stored.inputs.experiment_id).toBe(growth.experiment_id);
    expect(stored.result_digest).toMatch(/^sha256:/);
  });

  test("with stack samples, the quadratic function is the hotspot that grows fastest", async () => {
    const plan = await services.experiments.plan({
      experiment_name: "profiled",
      adapter: "py-spy",
      adapter_options: { rate: 1000 },
      parameters: {},
    });
    const receipt = await services.experiments.run(plan.plan_id);
    expect(receipt.counts.attempted).toBe(hotspotGrowthDesign.sizes.length * hotspotGrowthDesign.blocks);
    const result = await services.scaling.analyze({ experiment_id: receipt.experiment_id });
    expect(result.hotspot_evidence.status).toBe("available");
    const series = result.series[0]!;
    expect(series.fastest_growing_hotspot?.function).toBe("quadratic_part");
    // py-spy attaches after the process starts; the three parts run interleaved, so a late attach removes
    // the same share of each and shifts every exponent alike. constant_part's is not asserted (it is ~0).
    const linear = series.hotspot_growth.find((entry) => entry.function === "linear_part")!;
    expect(series.fastest_growing_hotspot!.exponent!).toBeGreaterThan(linear.exponent!);
  }, 60_000);
});
