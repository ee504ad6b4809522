/**
 * The sides of a comparison before the statistics: which members failed, which were excluded, which
 * are eligible; the metric values the eligible runs have; and what about the samples themselves
 * (units, empty sides, missing values) makes the comparison invalid or exploratory.
 */
import { isFailedOutcome, type MemberFacts } from "./comparison.ts";
import { toNumber } from "./evidence-query.ts";
import type { Mismatch, Sample } from "./statistics/compare.ts";

export type Side = "baseline" | "candidate";
export const sides: readonly Side[] = ["baseline", "candidate"];

export type PerSide<T> = Record<Side, T>;

export type FailedTrial = {
  side: Side;
  run_id: string;
  trial_id: string | null;
  outcome: string;
  reason: string | null;
};

/** A member's place and reason as frozen in its run set, with the facts read about its run. */
export type SideMember = {
  member: { run_id: string; trial_id: string | null; block_id: string | null; included: boolean; reason: string | null };
  facts: MemberFacts;
};

export type Partition = {
  failed: PerSide<number>;
  excluded: PerSide<number>;
  failedTrials: FailedTrial[];
  eligibleRuns: PerSide<{ run_id: string; block: string | null }[]>;
};

/**
 * A failed outcome, or an included member whose oracle failed, counts as failed; an excluded member is
 * excluded; the rest are eligible, paired by block only when both sides come from one experiment.
 */
export function partitionMembers(members: PerSide<SideMember[]>, pairByBlock: boolean): Partition {
  const partition: Partition = {
    failed: { baseline: 0, candidate: 0 },
    excluded: { baseline: 0, candidate: 0 },
    failedTrials: [],
    eligibleRuns: { baseline: [], candidate: [] },
  };
  for (const side of sides) {
    for (const { member, facts } of members[side]) {
      if (isFailedOutcome(facts.outcome) || (member.included && facts.validation_status === "failed")) {
        partition.failed[side] += 1;
        partition.failedTrials.push({
          side,
          run_id: member.run_id,
          trial_id: member.trial_id,
          outcome: facts.validation_status === "failed" && !isFailedOutcome(facts.outcome) ? "validation_failed" : facts.outcome,
          reason: member.reason,
        });
      } else if (!member.included) {
        partition.excluded[side] += 1;
      } else {
        partition.eligibleRuns[side].push({ run_id: member.run_id, block: pairByBlock ? member.block_id : null });
      }
    }
  }
  return partition;
}

/** The distinct units a per-run metric query reported (each row lists its units comma-separated). */
export function metricUnitsOf(rows: { units: string }[]): string[] {
  return [
    ...new Set(
      rows.flatMap((row) =>
        String(row.units ?? "")
          .split(",")
          .filter((unit) => unit !== ""),
      ),
    ),
  ].sort();
}

/** Each eligible run's value of the metric, or a count of the runs that have none. */
export function samplesOf(
  eligibleRuns: Partition["eligibleRuns"],
  rows: { run_id: string; value: unknown }[],
): { samples: PerSide<Sample[]>; missingMetric: PerSide<number> } {
  const valueByRun = new Map(rows.map((row) => [row.run_id, toNumber(row.value)]));
  const samples: PerSide<Sample[]> = { baseline: [], candidate: [] };
  const missingMetric = { baseline: 0, candidate: 0 };
  for (const side of sides) {
    for (const entry of eligibleRuns[side]) {
      const value = valueByRun.get(entry.run_id);
      if (value === undefined) missingMetric[side] += 1;
      else samples[side].push({ run_id: entry.run_id, value, block: entry.block });
    }
  }
  return { samples, missingMetric };
}

/** Units that differ (from each other or from the requested one), a side without samples, runs without the metric. */
export function sampleMismatches(input: {
  metric: string;
  requestedUnit: string | null;
  units: string[];
  samples: PerSide<Sample[]>;
  missingMetric: PerSide<number>;
  partition: Partition;
}): Mismatch[] {
  const { metric, units, partition } = input;
  const mismatches: Mismatch[] = [];
  if (input.requestedUnit && units.length > 0 && units.some((unit) => unit !== input.requestedUnit)) {
    mismatches.push({
      code: "unit_mismatch",
      severity: "invalidating",
      message: `The metric ${metric} is recorded in ${units.join(", ")}, not the requested ${input.requestedUnit}.`,
    });
  } else if (units.length > 1) {
    mismatches.push({
      code: "unit_mismatch",
      severity: "invalidating",
      message: `The metric ${metric} is recorded in several units (${units.join(", ")}); values in different units cannot be compared.`,
    });
  }
  for (const side of sides) {
    if (input.samples[side].length === 0) {
      mismatches.push({
        code: "no_eligible_samples",
        severity: "invalidating",
        message: `The ${side} has no eligible value of ${metric} (${partition.eligibleRuns[side].length} eligible run(s), ${partition.failed[side]} failed, ${partition.excluded[side]} excluded).`,
      });
    } else if (input.missingMetric[side] > 0) {
      mismatches.push({
        code: "missing_metric",
        severity: "exploratory",
        message: `${input.missingMetric[side]} eligible ${side} run(s) have no ${metric} value and were skipped.`,
      });
    }
  }
  return mismatches;
}
