/** Requests of investigations, hypotheses and findings: `flameox investigations|hypotheses|findings` parse the same schemas. */
import * as v from "valibot";
import { assessments, confidences, evidenceLevels, evidenceReferenceTypes, evidenceRelations, lifecycles } from "../investigation.ts";
import { cursor, described, identifier, limit, name, optionalOrNull, text } from "./fields.ts";
import { pageLimits } from "./limits.ts";

const expectedRevision = optionalOrNull(described(v.pipe(v.number(), v.integer(), v.minValue(1)), "Revising: current revision."));
const lifecycle = v.optional(described(v.picklist(lifecycles), "Lifecycle."), "active");
const optionalInvestigation = optionalOrNull(identifier("Investigation id."));
const optionalHypothesis = optionalOrNull(identifier("Hypothesis id."));

export const CreateInvestigationRequest = v.strictObject({
  question: text(500, "The question."),
  symptom: optionalOrNull(text(2000, "What was observed.")),
  parent_investigation_id: optionalOrNull(identifier("Parent investigation.")),
});

export const ListInvestigationsRequest = v.strictObject({ limit: limit(pageLimits.investigations), cursor });

export const GetInvestigationRequest = v.strictObject({ investigation_id: identifier("Investigation id.") });

export const RecordHypothesisRequest = v.strictObject({
  investigation_id: identifier("Investigation id."),
  claim: text(500, "The claim."),
  prediction: text(500, "Observable if true."),
  discriminating_condition: text(500, "Rules out alternatives."),
  hypothesis_id: optionalOrNull(identifier("Revising: its id.")),
  expected_revision: expectedRevision,
  assessment: v.optional(described(v.picklist(assessments), "Assessment."), "unassessed"),
  lifecycle,
});

export const GetHypothesisRequest = v.strictObject({ hypothesis_id: identifier("Hypothesis id.") });

export const EvidenceReferenceRequest = v.strictObject({
  ref_type: described(v.picklist(evidenceReferenceTypes), "Record type."),
  ref_id: identifier("Record id."),
  relation: described(v.picklist(evidenceRelations), "Bearing on the claim."),
});

export const RecordFindingRequest = v.strictObject({
  kind: name("Topic, e.g. performance."),
  title: text(500, "Title."),
  claim: text(500, "The claim."),
  evidence_level: described(v.picklist(evidenceLevels), "derived: from an analysis."),
  confidence: described(v.picklist(confidences), "Confidence."),
  assessment: described(v.picklist(assessments), "supported needs evidence."),
  lifecycle,
  investigation_id: optionalInvestigation,
  hypothesis_id: optionalHypothesis,
  limitations: v.optional(
    described(v.pipe(v.array(v.pipe(v.string(), v.minLength(1), v.maxLength(500))), v.maxLength(20)), "Limitations."),
    [],
  ),
  next_experiments: v.optional(
    described(
      v.pipe(
        v.array(v.record(v.pipe(v.string(), v.maxLength(100)), v.union([v.string(), v.number(), v.boolean(), v.null()]))),
        v.maxLength(20),
      ),
      "Follow-ups.",
    ),
    [],
  ),
  evidence: v.optional(described(v.pipe(v.array(EvidenceReferenceRequest), v.maxLength(50)), "Evidence cited."), []),
  finding_id: optionalOrNull(identifier("Revising: its id.")),
  expected_revision: expectedRevision,
});

export const GetFindingRequest = v.strictObject({ finding_id: identifier("Finding id.") });

export const ListFindingsRequest = v.strictObject({
  limit: limit(pageLimits.findings),
  cursor,
  investigation_id: optionalOrNull(identifier("Only this investigation.")),
  assessment: optionalOrNull(described(v.picklist(assessments), "Only this assessment.")),
});
