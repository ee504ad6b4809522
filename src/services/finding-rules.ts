import { comparisonInvalid, workspaceInvalid } from "../domain/errors.ts";
import type { EvidenceReference, EvidenceReferenceType, RecordFindingRequest } from "../domain/investigation.ts";
import type { EvidenceRecord } from "../store/evidence-record-store.ts";

/** What the finding rules look up: whether a cited reference exists, and a recorded comparison's result. */
export type FindingLookups = {
  referenceExists(refType: EvidenceReferenceType, refId: string): boolean;
  comparison(refId: string): EvidenceRecord | null;
};

type ComparisonVerdict = {
  validity: string;
  decision: string;
  mismatches: { code: string; message: string }[];
  reasons: { code: string; message: string }[];
};

/**
 * FINDING RULES (enforced on record_finding, in this order):
 *   1. Every evidence reference must exist (run, artifact, run_set, trial, experiment, recorded
 *      analysis or comparison) → WORKSPACE_INVALID naming the missing one.
 *   2. evidence_level 'observed' must not cite an analysis or comparison (those are derived).
 *   3. assessment 'supported' needs at least one 'supports' or 'validates' reference.
 *   4. assessment 'supported' with kind 'performance' needs a supporting recorded comparison.
 *   5. Every comparison cited as 'supports' or 'validates' by a supported finding must be valid and
 *      decisive (improved, regressed or equivalent) → COMPARISON_INVALID otherwise.
 */
export function checkFindingRules(request: RecordFindingRequest, evidence: EvidenceReference[], lookups: FindingLookups): void {
  requireExistingEvidence(request, evidence, lookups);
  if (request.evidence_level === "observed") requireDirectEvidence(request, evidence);
  if (request.assessment !== "supported") return;
  const supporting = evidence.filter((reference) => reference.relation === "supports" || reference.relation === "validates");
  if (supporting.length === 0) {
    throw workspaceInvalid("A 'supported' finding needs at least one evidence reference with relation 'supports' or 'validates'.", {
      details: { assessment: "supported", next_tool: "record_comparison" },
      remediation: [
        "Cite the evidence that supports the claim (for a performance claim: a recorded valid comparison), or record the finding as 'unassessed' or 'inconclusive'.",
      ],
      next: { tool: "record_finding", arguments: findingArguments(request, { assessment: "inconclusive" }) },
    });
  }
  const comparisons = supporting.filter((reference) => reference.ref_type === "comparison");
  if (request.kind === "performance" && comparisons.length === 0) {
    throw comparisonInvalid(
      "A supported performance finding needs a supporting recorded comparison: runs alone do not show that a difference is real.",
      {
        details: { kind: "performance", next_tool: "record_comparison" },
        remediation: [
          "Record a comparison of the baseline and candidate run sets with record_comparison and cite it with relation 'supports', or record the finding as 'inconclusive' (the call in recovery).",
        ],
        next: { tool: "record_finding", arguments: findingArguments(request, { assessment: "inconclusive" }) },
      },
    );
  }
  for (const reference of comparisons) requireDecisiveComparison(request, reference.ref_id, lookups);
}

/**
 * record_finding's arguments for the same finding with `changes`: what a recovery offers when the
 * finding can be recorded as it is, only weaker (inconclusive, derived, without missing references).
 */
function findingArguments(request: RecordFindingRequest, changes: Partial<RecordFindingRequest>): Record<string, unknown> {
  return Object.fromEntries(Object.entries({ ...request, ...changes }).filter(([, value]) => value !== null && value !== undefined));
}

/** Rule 1. */
function requireExistingEvidence(request: RecordFindingRequest, evidence: EvidenceReference[], lookups: FindingLookups): void {
  const missing = evidence.filter((reference) => !lookups.referenceExists(reference.ref_type, reference.ref_id));
  if (missing.length > 0) {
    const first = missing[0]!;
    const nextTool =
      first.ref_type === "comparison" ? "record_comparison" : first.ref_type === "analysis" ? "record_analysis" : "list_runs";
    // The recovery records the finding without what does not exist: unassessed (nothing may be left to
    // support it) and derived only if derived evidence remains with an 'observed' level.
    const remaining = (request.evidence ?? []).filter((reference) => lookups.referenceExists(reference.ref_type, reference.ref_id));
    const derivedLeft = remaining.some((reference) => reference.ref_type === "analysis" || reference.ref_type === "comparison");
    // A finding citing nothing is an invalid finding, so WORKSPACE_INVALID (not a lookup's not-found).
    throw workspaceInvalid(
      `Evidence reference ${first.ref_type} ${first.ref_id} does not exist${missing.length > 1 ? ` (and ${missing.length - 1} more)` : ""}; a finding may only cite evidence that exists.`,
      {
        next: {
          tool: "record_finding",
          arguments: findingArguments(request, {
            evidence: remaining,
            ...(request.assessment === "supported" ? { assessment: "unassessed" as const } : {}),
            ...(request.evidence_level === "observed" && derivedLeft ? { evidence_level: "derived" as const } : {}),
          }),
        },
        details: {
          missing: missing.map((reference) => ({ ref_type: reference.ref_type, ref_id: reference.ref_id })),
          next_tool: nextTool,
        },
        remediation: [
          first.ref_type === "comparison"
            ? "Persist the comparison with record_comparison and cite the comparison_id it returns (compare_run_sets results are not persisted)."
            : first.ref_type === "analysis"
              ? "Persist the analysis with record_analysis and cite the analysis id it returns."
              : "Cite ids returned by list_runs, freeze_run_set, get_experiment or list_experiment_trials.",
        ],
      },
    );
  }
}

/** Rule 2. */
function requireDirectEvidence(request: RecordFindingRequest, evidence: EvidenceReference[]): void {
  const derived = evidence.filter((reference) => reference.ref_type === "analysis" || reference.ref_type === "comparison");
  if (derived.length > 0) {
    throw workspaceInvalid(
      `An 'observed' finding cites only direct evidence (runs, artifacts, trials, run sets); ${derived[0]!.ref_type} ${derived[0]!.ref_id} is derived.`,
      {
        details: { evidence_level: "observed", derived: derived.map((reference) => reference.ref_id) },
        remediation: ["Use evidence_level='derived' when the finding rests on an analysis or comparison."],
        next: { tool: "record_finding", arguments: findingArguments(request, { evidence_level: "derived" }) },
      },
    );
  }
}

/** Rule 5: a supporting comparison must be valid and decisive (improved, regressed or equivalent). */
function requireDecisiveComparison(request: RecordFindingRequest, comparisonId: string, lookups: FindingLookups): void {
  const result = lookups.comparison(comparisonId)?.result as ComparisonVerdict | undefined;
  if (!result) return;
  const decisive = result.decision === "improved" || result.decision === "regressed" || result.decision === "equivalent";
  if (result.validity === "valid" && decisive) return;
  const why =
    result.validity !== "valid" && result.mismatches[0]
      ? ` (${result.mismatches[0].message})`
      : !decisive && result.reasons[0]
        ? ` (${result.reasons[0].message})`
        : "";
  throw comparisonInvalid(`Comparison ${comparisonId} cannot support a finding: it is ${result.validity} and ${result.decision}${why}.`, {
    details: {
      comparison_id: comparisonId,
      validity: result.validity,
      decision: result.decision,
      mismatches: result.mismatches.map((mismatch) => mismatch.code),
      reasons: result.reasons.map((reason) => reason.code),
    },
    remediation: [
      "Collect more or cleaner trials (plan_experiment/run_experiment) and record a new comparison, or record the finding as 'inconclusive' (the call in recovery).",
    ],
    next: { tool: "record_finding", arguments: findingArguments(request, { assessment: "inconclusive" }) },
  });
}
