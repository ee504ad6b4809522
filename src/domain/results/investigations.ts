/**
 * The results of the investigation, hypothesis and finding tools as valibot schemas. The domain types
 * (domain/investigation.ts) are inferred from them, so what the service returns and what each tool
 * publishes as its outputSchema are one definition.
 */
import * as v from "valibot";
import { assessments, confidences, evidenceLevels, evidenceReferenceTypes, evidenceRelations, lifecycles } from "../investigation.ts";

export const EvidenceReferenceSchema = v.object({
  ref_type: v.picklist(evidenceReferenceTypes),
  ref_id: v.string(),
  relation: v.picklist(evidenceRelations),
  resource_uri: v.string(),
});

export const InvestigationSchema = v.object({
  schema_version: v.literal(1),
  investigation_id: v.string(),
  question: v.string(),
  symptom: v.nullable(v.string()),
  parent_investigation_id: v.nullable(v.string()),
  status: v.literal("open"),
  created_at: v.string(),
  resource_uri: v.string(),
});

export const HypothesisSchema = v.object({
  schema_version: v.literal(1),
  hypothesis_id: v.string(),
  investigation_id: v.string(),
  revision: v.number(),
  claim: v.string(),
  prediction: v.string(),
  discriminating_condition: v.string(),
  assessment: v.picklist(assessments),
  lifecycle: v.picklist(lifecycles),
  created_at: v.string(),
  first_created_at: v.string(),
  resource_uri: v.string(),
});

export const FindingSchema = v.object({
  schema_version: v.literal(1),
  finding_id: v.string(),
  revision: v.number(),
  investigation_id: v.nullable(v.string()),
  hypothesis_id: v.nullable(v.string()),
  kind: v.string(),
  title: v.string(),
  claim: v.string(),
  evidence_level: v.picklist(evidenceLevels),
  confidence: v.picklist(confidences),
  assessment: v.picklist(assessments),
  lifecycle: v.picklist(lifecycles),
  limitations: v.array(v.string()),
  next_experiments: v.array(v.record(v.string(), v.unknown())),
  evidence: v.array(EvidenceReferenceSchema),
  created_at: v.string(),
  first_created_at: v.string(),
  resource_uri: v.string(),
});

export const RecordedFindingSchema = v.object({
  finding: FindingSchema,
  evidence: v.array(EvidenceReferenceSchema),
  corpus_commit_id: v.string(),
});

const pageEntries = {
  schema_version: v.literal(1),
  corpus_commit_id: v.string(),
  total: v.number(),
  returned: v.number(),
  truncated: v.boolean(),
  next_cursor: v.nullable(v.string()),
};

/** A keyset page of `Key` rows: the shape every bounded listing shares. */
export function listPageSchema<Key extends string, Item extends v.GenericSchema>(key: Key, item: Item) {
  const rows = { [key]: v.array(item) } as Record<Key, v.ArraySchema<Item, undefined>>;
  return v.object({ ...pageEntries, ...rows });
}

export const InvestigationPageSchema = listPageSchema("investigations", InvestigationSchema);
export const FindingPageSchema = listPageSchema("findings", FindingSchema);
