/**
 * The compatibility half of `compare_run_sets`: which differences between the runs of two sets make
 * a comparison invalid or merely exploratory, and how per-run metric values are read. The statistics
 * half is `statistics/compare.ts` (compareSamples); `deriveValidity` merges both.
 *
 * VALIDITY RULE (`compatibilityRuleVersion`). Checked over every member that entered the comparison
 * (included members; excluded members only count). `invalidating` ⇒ validity `invalid`, otherwise any
 * mismatch ⇒ `exploratory`, none ⇒ `valid`:
 *   invalidating
 *     workload_definition_mismatch  runs measured different workload definitions (or some have none):
 *                                   the ratio would compare two different programs' costs.
 *     environment_mismatch          baseline and candidate ran in different environments (machine,
 *                                   interpreter): the difference could be the machine, not the change.
 *     source_changed_within_side    one side's runs come from more than one source state: the side is
 *                                   not one treatment. (Baseline and candidate may differ: that is
 *                                   usually the change under test.)
 *     collector_mismatch            adapters or adapter options differ between or within sides.
 *     failed_validation             an included run's oracle failed: its output is wrong, its time is
 *                                   not a measurement of the same work.
 *     oracle_outputs_differ         cross-treatment-equivalence receipts disagree between sides on the
 *                                   observed value of a case (the treatments computed different results).
 *     unit_mismatch                 the metric comes in more than one unit.
 *     no_eligible_samples           a side has no value of the metric at all.
 *   exploratory
 *     failed_trials                 some attempted trials/runs failed or timed out (counted per side):
 *                                   survivors may be a biased sample. compareSamples also makes the
 *                                   decision inconclusive (reason failed_trials) by its own rule.
 *     environment_varies_within_side, environment_unknown, source_unknown
 *                                   identity that could not be pinned.
 *     validation_incomplete         an included run's oracle was inconclusive or unsupported.
 *     missing_metric                some eligible runs have no value of the metric (they are skipped).
 */
import type { Mismatch } from "./statistics/compare.ts";
import { type EvidenceQuery, sqlString } from "./evidence-query.ts";

export const compatibilityRuleVersion = "flameox.compatibility.v1";

/** What the comparison needs to know about one run-set member. */
export type MemberFacts = {
  run_id: string;
  trial_id: string | null;
  block_id: string | null;
  included: boolean;
  /** succeeded | failed | timed_out | cancelled | … : the run's (or trial's) outcome. */
  outcome: string;
  workload_definition_id: string | null;
  environment_id: string | null;
  source_state_id: string | null;
  adapter: string | null;
  adapter_options_digest: string;
  validation_status: string;
  /** case_id → observed value (canonical text) from a cross-treatment-equivalence oracle receipt. */
  oracle_observations: Record<string, string> | null;
};

export function isFailedOutcome(outcome: string): boolean {
  return outcome !== "succeeded" && outcome !== "not_applicable";
}

function distinct(values: (string | null)[]): (string | null)[] {
  return [...new Set(values)];
}

function short(value: string | null): string {
  if (value === null) return "(none)";
  return value.length > 23 ? `${value.slice(0, 19)}…${value.slice(-4)}` : value;
}

type Eligible = { baseline: MemberFacts[]; candidate: MemberFacts[] };

/** Applies the rule above to the eligible (included, succeeded) members of each side. */
export function compatibilityMismatches(sides: Eligible, failed: { baseline: number; candidate: number }): Mismatch[] {
  const eligible = {
    baseline: sides.baseline.filter((member) => member.included && !isFailedOutcome(member.outcome)),
    candidate: sides.candidate.filter((member) => member.included && !isFailedOutcome(member.outcome)),
  };
  const all = [...eligible.baseline, ...eligible.candidate];
  const mismatches: Mismatch[] = [
    ...definitionMismatches(eligible),
    ...environmentMismatches(eligible),
    ...sourceMismatches(eligible),
    ...collectorMismatches(all),
    ...validationMismatches(all),
  ];
  const differing = differingObservations(eligible.baseline, eligible.candidate);
  if (differing.length > 0) {
    mismatches.push({
      code: "oracle_outputs_differ",
      severity: "invalidating",
      message: `Cross-treatment oracle receipts disagree between baseline and candidate on ${differing.length} case(s) (${differing.slice(0, 5).join(", ")}): the treatments did not compute the same result.`,
    });
  }
  if (failed.baseline + failed.candidate > 0) {
    mismatches.push({
      code: "failed_trials",
      severity: "exploratory",
      message: `${failed.baseline} baseline and ${failed.candidate} candidate trial(s)/run(s) failed or timed out; they are counted, not measured, and the survivors may be a biased sample.`,
    });
  }
  return mismatches;
}

function definitionMismatches(eligible: Eligible): Mismatch[] {
  const all = [...eligible.baseline, ...eligible.candidate];
  if (distinct(all.map((member) => member.workload_definition_id)).length <= 1) return [];
  const ids = (members: MemberFacts[]) =>
    distinct(members.map((member) => member.workload_definition_id))
      .map(short)
      .join(", ");
  return [
    {
      code: "workload_definition_mismatch",
      severity: "invalidating",
      message: `The runs measured different workload definitions (baseline ${ids(eligible.baseline)}; candidate ${ids(eligible.candidate)}): a ratio of two different programs' costs says nothing about a change. Compare runs of one workload definition.`,
    },
  ];
}

function environmentMismatches(eligible: Eligible): Mismatch[] {
  const mismatches: Mismatch[] = [];
  if ([...eligible.baseline, ...eligible.candidate].some((member) => member.environment_id === null)) {
    mismatches.push({
      code: "environment_unknown",
      severity: "exploratory",
      message: "Some runs have no environment identity, so a machine or interpreter difference cannot be ruled out.",
    });
  }
  const known = (members: MemberFacts[]) => distinct(members.map((member) => member.environment_id)).filter((id) => id !== null);
  const knownBaseline = known(eligible.baseline);
  const knownCandidate = known(eligible.candidate);
  if (knownBaseline.length > 0 && knownCandidate.length > 0 && !knownBaseline.some((id) => knownCandidate.includes(id))) {
    mismatches.push({
      code: "environment_mismatch",
      severity: "invalidating",
      message: `Baseline and candidate ran in different environments (${knownBaseline.map(short).join(", ")} vs ${knownCandidate.map(short).join(", ")}): the difference could be the machine or interpreter, not the change.`,
    });
  } else if (knownBaseline.length > 1 || knownCandidate.length > 1) {
    mismatches.push({
      code: "environment_varies_within_side",
      severity: "exploratory",
      message: "A side's runs come from more than one environment identity.",
    });
  }
  return mismatches;
}

function sourceMismatches(eligible: Eligible): Mismatch[] {
  const mismatches: Mismatch[] = [];
  for (const side of ["baseline", "candidate"] as const) {
    const sources = distinct(eligible[side].map((member) => member.source_state_id));
    const known = sources.filter((id) => id !== null);
    if (known.length > 1) {
      mismatches.push({
        code: "source_changed_within_side",
        severity: "invalidating",
        message: `The ${side} runs come from ${known.length} different source states (${known.map(short).join(", ")}): the side is not one treatment. Freeze runs of one source state per side.`,
      });
    }
    if (sources.includes(null) && eligible[side].length > 0) {
      mismatches.push({ code: "source_unknown", severity: "exploratory", message: `Some ${side} runs have no source identity.` });
    }
  }
  return mismatches;
}

function collectorMismatches(all: MemberFacts[]): Mismatch[] {
  const collectors = distinct(all.map((member) => `${member.adapter ?? "(import)"} ${member.adapter_options_digest}`));
  if (collectors.length <= 1) return [];
  return [
    {
      code: "collector_mismatch",
      severity: "invalidating",
      message: `The runs were collected with different adapters or adapter options (${distinct(all.map((member) => member.adapter))
        .map((adapter) => adapter ?? "(import)")
        .join(", ")}): collector overhead differs, so their costs are not comparable.`,
    },
  ];
}

function validationMismatches(all: MemberFacts[]): Mismatch[] {
  const mismatches: Mismatch[] = [];
  const failedValidation = all.filter((member) => member.validation_status === "failed");
  if (failedValidation.length > 0) {
    mismatches.push({
      code: "failed_validation",
      severity: "invalidating",
      message: `${failedValidation.length} included run(s) failed validation (${failedValidation
        .slice(0, 5)
        .map((member) => member.run_id)
        .join(", ")}): their output was wrong, so their cost is not a measurement of the same work.`,
    });
  }
  const incomplete = all.filter((member) => member.validation_status === "inconclusive" || member.validation_status === "unsupported");
  if (incomplete.length > 0) {
    mismatches.push({
      code: "validation_incomplete",
      severity: "exploratory",
      message: `${incomplete.length} included run(s) have an inconclusive or unsupported oracle result.`,
    });
  }
  return mismatches;
}

function differingObservations(baseline: MemberFacts[], candidate: MemberFacts[]): string[] {
  const collect = (members: MemberFacts[]) => {
    const byCase = new Map<string, Set<string>>();
    for (const member of members) {
      for (const [caseId, observed] of Object.entries(member.oracle_observations ?? {})) {
        const values = byCase.get(caseId) ?? new Set<string>();
        values.add(observed);
        byCase.set(caseId, values);
      }
    }
    return byCase;
  };
  const left = collect(baseline);
  const right = collect(candidate);
  const differing: string[] = [];
  for (const [caseId, values] of left) {
    const other = right.get(caseId);
    if (!other) continue;
    if (values.size !== 1 || other.size !== 1 || [...values][0] !== [...other][0]) differing.push(caseId);
  }
  return differing.sort();
}

/** Per run: the median of the metric's non-warm-up values, with its unit(s). */
export function metricPerRunSql(metric: string, runIds: readonly string[]): string {
  const list = runIds.length === 0 ? "NULL" : runIds.map(sqlString).join(", ");
  return `SELECT run_id, median(value) AS value, count(*) AS value_count, string_agg(DISTINCT unit, ',') AS units
          FROM measurements
          WHERE name = ${sqlString(metric)} AND NOT coalesce(is_warmup, false) AND run_id IN (${list})
          GROUP BY run_id`;
}

/** The measurement names the runs have, those most runs share first: what a comparison could use instead. */
export function metricNamesSql(runIds: readonly string[], limit: number): string {
  const list = runIds.length === 0 ? "NULL" : runIds.map(sqlString).join(", ");
  return `SELECT name, count(DISTINCT run_id) AS runs FROM measurements
          WHERE NOT coalesce(is_warmup, false) AND run_id IN (${list})
          GROUP BY name ORDER BY runs DESC, name LIMIT ${limit}`;
}

/**
 * The per-run metric values, kept by the store for the pinned bundles: a comparison over hundreds of
 * small bundles reads their files once, and asking again (another seed, a recorded comparison) reads the kept rows.
 */
export async function metricPerRun(
  evidence: EvidenceQuery,
  metric: string,
  runIds: readonly string[],
): Promise<{ run_id: string; value: unknown; units: string }[]> {
  return evidence.rowsFrom(metricPerRunSql(metric, runIds), (values) => `SELECT run_id, value, value_count, units FROM ${values}`);
}
