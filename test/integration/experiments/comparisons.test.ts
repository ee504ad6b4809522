/**
 * compare_run_sets on real runs of this machine: ONE experiment of 30 randomized complete blocks × 3
 * treatments (base, same = identical work, more = 4× the iterations) of a CPU-bound Python workload, 90 real
 * trials, compared on the workloads' user CPU time (runtime.cpu_user_ns): more work is more CPU, while wall
 * time on a shared 2-core machine also measures whatever else runs.
 *
 * How the verdicts' false-failure bound was obtained (design and noise in test/support/experiment-designs.ts):
 * - more vs base: measured ratio 3.4 with a robust SD of 0.074 for the per-block log ratios (a standard error
 *   of about 0.014 for their mean), so the estimate and its 99 % t interval (half-width 2.76 standard errors)
 *   sit ~70 standard errors above the 25 % practical threshold. The verdict can only be lost to a blocking
 *   reason. too_many_outliers needs ≥ 7 of 30 pairs beyond a modified z of 3.5: 3 of 150 measured pairs were
 *   (2 %), and at that rate 7 of 30 has binomial probability 2e-6 (the rate would have to double, to 4 %, to
 *   reach 1e-4). high_variation needs both the SD and the robust spread of the log ratios to grow from about
 *   0.074 to 0.354.
 * - same vs base: a directional verdict needs the whole interval beyond ±25 %, i.e. the mean of 30 log
 *   ratios 0.26 away from 0, about 19 standard errors; blockers only make it inconclusive, which is allowed.
 * The decision rule's power and false-positive rate are measured on seeded synthetic samples in
 * test/unit/analysis/statistics/decision-rule.test.ts.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { FlameoxError } from "../../../src/domain/errors.ts";
import type { Services } from "../../../src/services/services.ts";
import type { ExperimentReceipt } from "../../../src/services/experiment-service.ts";
import type { Trial } from "../../../src/store/experiment-store.ts";
import { comparisonDesign } from "../../support/experiment-designs.ts";
import { experimentProject } from "./project.ts";

// Real trials. The suite's default per-test deadline is 30 s (scripts/test-deadline.ts).
setDefaultTimeout(120_000);

const toml = `
[workloads.busy]
argv = ["$PYTHON", "-S", "busy.py", "{variant}"]
parameters = { variant = ["base", "same", "more"] }

[workloads.busy-copy]
argv = ["$PYTHON", "-S", "busy.py", "{variant}"]
timeout_seconds = 299
parameters = { variant = ["base", "same", "more"] }

# A trial takes ~20 ms of CPU; 6 s leaves it a 100x margin on a loaded machine, and the hanging trial
# (flaky.py sleeps 30 s) costs 6 s of idle wall time.
[workloads.flaky]
argv = ["$PYTHON", "-S", "flaky.py", "{size}"]
timeout_seconds = 6
parameters = { size = [10, 11] }
oracle = { strength = "cross_treatment_equivalence", argv = ["$PYTHON", "-S", "oracle.py", "{size}"], receipt_schema = "flameox.oracle-receipt.v1" }

[experiments.work]
workload = "busy"
factors = { variant = ["base", "same", "more"] }
treatment_factor = "variant"
blocks = ${comparisonDesign.blocks}
primary_metric = "runtime.cpu_user_ns"
polarity = "lower_is_better"
practical_threshold = ${comparisonDesign.practicalThreshold}
random_seed = 11

[experiments.flaky]
workload = "flaky"
factors = { size = [10, 11] }
treatment_factor = "size"
blocks = 4
polarity = "lower_is_better"
practical_threshold = 0.03
random_seed = 5
`;

let services: Services;
let root: string;
let work: ExperimentReceipt;
let trials: Trial[];
const progress: { step: number; total: number; message: string }[] = [];

beforeAll(async () => {
  ({ services, root } = await experimentProject("compare", toml));
  const plan = await services.experiments.plan({ experiment_name: "work", adapter: "command", parameters: {} });
  work = await services.experiments.run(plan.plan_id, { progress: (step, total, message) => void progress.push({ step, total, message }) });
  trials = services.experiments.listTrials({ experiment_id: work.experiment_id, limit: 1000, cursor: null }).trials;
}, 120_000);

afterAll(() => services.close());

function subsample(treatment: string, blocks: Set<string>, label: string): string {
  const members = trials
    .filter((trial) => trial.treatment === treatment && blocks.has(trial.block_id))
    .map((trial) => ({ run_id: trial.run_id!, trial_id: trial.trial_id }));
  return services.runSets.freezeMembers(members, { experiment_id: work.experiment_id, treatment, sample: label }).run_set_id;
}

describe("experiment execution", () => {
  test("every trial is recorded in the realized order with progress per trial", () => {
    expect(work.counts.attempted).toBe(90);
    expect(work.counts.succeeded).toBe(90);
    expect(trials).toHaveLength(90);
    expect(new Set(trials.map((trial) => trial.trial_id)).size).toBe(90);
    for (const block of new Set(trials.map((trial) => trial.block_id))) {
      expect(
        trials
          .filter((trial) => trial.block_id === block)
          .map((trial) => trial.treatment)
          .sort(),
      ).toEqual(["base", "more", "same"]);
    }
    // Whole steps are the trials; a slow machine adds heartbeat steps in between (every 5 s), always increasing.
    const steps = progress.map((entry) => entry.step);
    expect(steps.filter((step) => Number.isInteger(step))).toEqual([...Array(95).keys()]);
    expect(steps.every((step, index) => index === 0 || step > steps[index - 1]!)).toBe(true);
    expect(new Set(progress.map((entry) => entry.total))).toEqual(new Set([94]));
    expect(work.run_sets.map((entry) => entry.treatment)).toEqual(["base", "same", "more"]);
    // Three named treatments: no automatic comparison, so the receipt names the first two run sets to compare.
    expect(work.next_tool).toBe("compare_run_sets");
    expect(work.next_arguments).toEqual({
      baseline_run_set_id: work.run_sets[0]!.run_set_id,
      candidate_run_set_id: work.run_sets[1]!.run_set_id,
    });
    const experiment = services.experiments.getExperiment(work.experiment_id);
    expect(experiment.order_digest).toMatch(/^sha256:/);
    expect(experiment.random_seed).toBe(11);
  });

  test("the same seed realizes the same order; trial ids are unique per execution", async () => {
    const first = await services.experiments.plan({ experiment_name: "work", adapter: "command", parameters: {} });
    const second = await services.experiments.plan({ experiment_name: "work", adapter: "command", parameters: {} });
    expect(second.order).toEqual(first.order);
    expect(second.order_digest).toBe(first.order_digest);
    // The plan lists the first trials of the order run_experiment recorded; its digest covers the whole order.
    expect(first.order_truncated).toBe(true);
    expect(first.order.map((trial) => `${trial.block_id}:${trial.treatment}`)).toEqual(
      trials.slice(0, first.order.length).map((trial) => `${trial.block_id}:${trial.treatment}`),
    );
    expect(first.order_digest).toBe(services.experiments.getExperiment(work.experiment_id).order_digest);
    expect(first.order_summary.trials).toBe(trials.length);
    expect(Object.values(first.order_summary.trials_per_treatment).reduce((sum, count) => sum + count, 0)).toBe(
      trials.filter((trial) => !trial.warmup).length,
    );
    expect(first.plan_id).not.toBe(second.plan_id);
  });

  test("a consumed plan is refused", async () => {
    const plan = await services.experiments.plan({ experiment_name: "flaky", adapter: "command", parameters: {} });
    await services.experiments.run(plan.plan_id);
    const error = await services.experiments.run(plan.plan_id).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(FlameoxError);
    expect((error as FlameoxError).code).toBe("INVALID_CAPTURE_PLAN");
  }, 60_000);
});

describe("decisions on this machine's noise", () => {
  test("a candidate doing 4× the work is regressed, its whole interval far beyond the threshold", async () => {
    const result = await services.comparisons.compare({ baseline: work.run_sets[0]!.run_set_id, candidate: work.run_sets[2]!.run_set_id });
    expect(result.decision).toBe("regressed");
    expect(result.validity).toBe("valid");
    expect(result.pairing).toBe("paired");
    expect(result.counts.pairs).toBe(30);
    expect(result.ci?.method).toBe("student_t_paired_log_ratio");
    expect(result.decision_rule).toBe("t_interval_of_log_ratio_beyond_practical_threshold.v2");
    expect(result.ci!.lower).toBeGreaterThan(1 + comparisonDesign.practicalThreshold);
    // Measured 3.4; the bounds are over 15 standard errors of the median log ratio away.
    expect(result.estimate!).toBeGreaterThan(2.5);
    expect(result.estimate!).toBeLessThan(5);
  }, 60_000);

  test("two identical treatments are neither regressed nor improved", async () => {
    const result = await services.comparisons.compare({ baseline: work.run_sets[0]!.run_set_id, candidate: work.run_sets[1]!.run_set_id });
    expect(["equivalent", "inconclusive"]).toContain(result.decision);
    expect(result.estimate!).toBeGreaterThan(0.8);
    expect(result.estimate!).toBeLessThan(1.25);
  }, 60_000);

  test("three samples per side is inconclusive and says why", async () => {
    const blocks = new Set(["b1", "b2", "b3"]);
    const result = await services.comparisons.compare({
      baseline: subsample("base", blocks, "three"),
      candidate: subsample("more", blocks, "three"),
    });
    expect(result.decision).toBe("inconclusive");
    expect(result.counts.pairs).toBe(3);
    expect(result.reasons.map((reason) => reason.code)).toContain("too_few_samples");
    expect(result.reasons.find((reason) => reason.code === "too_few_samples")!.message).toContain("3 complete pair");
  });

  test("two single runs compare descriptively: their ratio, no interval, validity exploratory", async () => {
    const base = trials.find((trial) => trial.treatment === "base")!;
    const more = trials.find((trial) => trial.treatment === "more")!;
    const result = await services.comparisons.compare({ baseline: base.run_id!, candidate: more.run_id!, metric: "runtime.cpu_user_ns" });
    expect(result.baseline.kind).toBe("run");
    expect(result.counts.eligible).toEqual({ baseline: 1, candidate: 1 });
    expect(result.decision).toBe("descriptive");
    expect(result.validity).toBe("exploratory");
    expect(result.ci).toBeNull();
    expect(result.reasons.map((reason) => reason.code)).toContain("descriptive_only");
    // One run of 4x the iterations: measured 3.4x the CPU time; a single pair's log ratio has an SD of 0.074.
    expect(result.estimate!).toBeGreaterThan(2);
    expect(result.next_tool).toBe("plan_experiment");
  });
});

describe("validity", () => {
  test("a comparison across different workload definitions is invalid and says why", async () => {
    const runIds: string[] = [];
    for (let index = 0; index < 5; index += 1) {
      const plan = await services.captures.plan({
        workload_name: "busy-copy",
        adapter: "command",
        parameters: { variant: "base" },
        adapter_options: {},
        preflight_mode: "auto",
        capture_mode: "auto",
      });
      runIds.push((await services.captures.execute(plan.plan_id)).run_id);
    }
    const other = services.runSets.freeze({ run_ids: runIds });
    const result = await services.comparisons.compare({ baseline: work.run_sets[0]!.run_set_id, candidate: other.run_set_id });
    expect(result.validity).toBe("invalid");
    const mismatch = result.mismatches.find((entry) => entry.code === "workload_definition_mismatch");
    expect(mismatch?.severity).toBe("invalidating");
    expect(mismatch?.message).toContain("different workload definitions");
    expect(result.pairing).toBe("unpaired");
  }, 30_000);

  test("failed and timed-out trials are recorded, counted and reported; they make the comparison exploratory and inconclusive", async () => {
    writeFileSync(join(root, "fail-once"), "");
    writeFileSync(join(root, "hang-once"), "");
    const plan = await services.experiments.plan({ experiment_name: "flaky", adapter: "command", parameters: {} });
    const receipt = await services.experiments.run(plan.plan_id);
    expect(receipt.counts.attempted).toBe(8);
    expect(receipt.counts.failed).toBe(1);
    expect(receipt.counts.timed_out).toBe(1);
    expect(receipt.counts.succeeded).toBe(6);
    expect(receipt.first_failure_trial_id).toBe(`${receipt.experiment_id}.t1`);
    const listed = services.experiments.listTrials({ experiment_id: receipt.experiment_id, limit: 3, cursor: null });
    expect(listed.total).toBe(8);
    expect(listed.truncated).toBe(true);
    const next = services.experiments.listTrials({ experiment_id: receipt.experiment_id, limit: 3, cursor: listed.next_cursor });
    expect(next.trials[0]!.ordinal).toBe(4);
    const all = [...listed.trials, ...next.trials];
    expect(all[0]!.outcome).toBe("failed");
    expect(all[0]!.failure_class).toBe("process_failure");
    expect(all[1]!.outcome).toBe("timed_out");
    // Successful trials ran the oracle, which wrote a typed receipt to its private path.
    const passed = all.find((trial) => trial.outcome === "succeeded")!;
    expect(passed.validation_status).toBe("passed");
    expect(passed.oracle?.receipt?.status).toBe("pass");
    expect(passed.oracle?.receipt?.raw_artifact_id).toMatch(/^sha256:/);
    const run = services.runs.getRun(passed.run_id!);
    expect(run.validation_status).toBe("passed");
    expect(run.artifacts.map((artifact) => artifact.role)).toContain("validation_receipt");

    const comparison = services.comparisons.getEvidence("comparison", receipt.comparison_id!).result as Record<string, any>;
    expect(comparison.counts.failed.baseline + comparison.counts.failed.candidate).toBe(2);
    expect(comparison.failed_trials.map((entry: { outcome: string }) => entry.outcome).sort()).toEqual(["failed", "timed_out"]);
    expect(comparison.validity).toBe("exploratory");
    expect(comparison.mismatches.map((entry: { code: string }) => entry.code)).toContain("failed_trials");
    expect(comparison.mismatches.every((entry: { severity: string }) => entry.severity !== "invalidating")).toBe(true);
    expect(comparison.decision).toBe("inconclusive");
    expect(comparison.reasons.map((entry: { code: string }) => entry.code)).toContain("failed_trials");
  }, 60_000);
});

describe("recorded comparisons and findings", () => {
  test("a finding is supported only with a valid decisive comparison; stale revisions conflict", async () => {
    const investigation = services.investigations.createInvestigation({ question: "Did the extra work slow busy.py down?" });
    const hypothesis = services.investigations.recordHypothesis({
      investigation_id: investigation.investigation_id,
      claim: "more is slower",
      prediction: "ratio > 1.25",
      discriminating_condition: "CI of the ratio above 1.25",
    });
    const revised = services.investigations.recordHypothesis({
      investigation_id: investigation.investigation_id,
      hypothesis_id: hypothesis.hypothesis_id,
      expected_revision: 1,
      claim: "more takes about 3.4x the CPU time",
      prediction: "ratio > 1.25",
      discriminating_condition: "CI of the ratio above 1.25",
    });
    expect(revised.revision).toBe(2);
    expect(() =>
      services.investigations.recordHypothesis({
        investigation_id: investigation.investigation_id,
        hypothesis_id: hypothesis.hypothesis_id,
        expected_revision: 1,
        claim: "x",
        prediction: "y",
        discriminating_condition: "z",
      }),
    ).toThrow(expect.objectContaining({ code: "REVISION_CONFLICT" }));

    const decisive = await services.comparisons.record({ baseline: work.run_sets[0]!.run_set_id, candidate: work.run_sets[2]!.run_set_id });
    expect(decisive.decision).toBe("regressed");
    expect(decisive.validity).toBe("valid");
    const again = await services.comparisons.record({ baseline: work.run_sets[0]!.run_set_id, candidate: work.run_sets[2]!.run_set_id });
    expect(again.ref_id).toBe(decisive.ref_id);
    expect(again.created).toBe(false);
    const stored = services.comparisons.getEvidence("comparison", decisive.ref_id);
    expect(stored.result_digest).toBe(decisive.result_digest);
    expect(stored.corpus_commit_id).toBe(decisive.corpus_commit_id);

    const blocks = new Set(["b1", "b2", "b3"]);
    const weak = await services.comparisons.record({
      baseline: subsample("base", blocks, "weak"),
      candidate: subsample("more", blocks, "weak"),
    });
    expect(weak.decision).toBe("inconclusive");

    const base = {
      kind: "performance",
      title: "extra work regresses busy.py",
      claim: "4x the iterations make busy.py slower",
      evidence_level: "derived" as const,
      confidence: "high" as const,
      investigation_id: investigation.investigation_id,
    };
    expect(() => services.investigations.recordFinding({ ...base, assessment: "supported" })).toThrow(
      expect.objectContaining({ code: "WORKSPACE_INVALID" }),
    );
    expect(() =>
      services.investigations.recordFinding({
        ...base,
        assessment: "supported",
        evidence: [{ ref_type: "run_set", ref_id: work.run_sets[2]!.run_set_id, relation: "supports" }],
      }),
    ).toThrow(expect.objectContaining({ code: "COMPARISON_INVALID" }));
    expect(() =>
      services.investigations.recordFinding({
        ...base,
        assessment: "supported",
        evidence: [{ ref_type: "comparison", ref_id: weak.ref_id, relation: "supports" }],
      }),
    ).toThrow(expect.objectContaining({ code: "COMPARISON_INVALID" }));
    expect(() =>
      services.investigations.recordFinding({
        ...base,
        assessment: "supported",
        evidence: [{ ref_type: "comparison", ref_id: `sha256:${"0".repeat(64)}`, relation: "supports" }],
      }),
    ).toThrow(expect.objectContaining({ code: "WORKSPACE_INVALID" }));
    expect(() =>
      services.investigations.recordFinding({
        ...base,
        evidence_level: "observed",
        assessment: "supported",
        evidence: [{ ref_type: "comparison", ref_id: decisive.ref_id, relation: "supports" }],
      }),
    ).toThrow(expect.objectContaining({ code: "WORKSPACE_INVALID" }));
    const supported = services.investigations.recordFinding({
      ...base,
      assessment: "supported",
      evidence: [
        { ref_type: "comparison", ref_id: decisive.ref_id, relation: "supports" },
        { ref_type: "experiment", ref_id: work.experiment_id, relation: "context" },
      ],
    });
    expect(supported.finding.revision).toBe(1);
    expect(supported.finding.evidence[0]!.resource_uri).toBe(`flameox://evidence/comparison/${encodeURIComponent(decisive.ref_id)}`);
    const update = services.investigations.recordFinding({
      ...base,
      assessment: "supported",
      finding_id: supported.finding.finding_id,
      expected_revision: 1,
      confidence: "medium",
      evidence: supported.finding.evidence,
    });
    expect(update.finding.revision).toBe(2);
    expect(() =>
      services.investigations.recordFinding({
        ...base,
        assessment: "supported",
        finding_id: supported.finding.finding_id,
        expected_revision: 1,
        evidence: supported.finding.evidence,
      }),
    ).toThrow(expect.objectContaining({ code: "REVISION_CONFLICT" }));
    const listed = services.investigations.listFindings({ limit: 10, cursor: null, investigation_id: investigation.investigation_id });
    expect(listed.total).toBe(1);
    expect(listed.findings[0]!.revision).toBe(2);
  }, 60_000);
});
