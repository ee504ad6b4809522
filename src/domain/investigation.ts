/** The records of an investigation: the question, its hypotheses and the findings that cite evidence. */
import type * as v from "valibot";
import type {
  RecordFindingRequest as RecordFindingSchema,
  RecordHypothesisRequest as RecordHypothesisSchema,
} from "./requests/investigations.ts";
import type { EvidenceReferenceSchema, FindingSchema, HypothesisSchema, InvestigationSchema } from "./results/investigations.ts";

export const evidenceReferenceTypes = ["analysis", "artifact", "comparison", "experiment", "run", "run_set", "trial"] as const;
export type EvidenceReferenceType = (typeof evidenceReferenceTypes)[number];
export const evidenceRelations = ["supports", "contradicts", "context", "validates"] as const;
export type EvidenceRelation = (typeof evidenceRelations)[number];
export const assessments = ["unassessed", "supported", "refuted", "inconclusive"] as const;
export type Assessment = (typeof assessments)[number];
export const lifecycles = ["active", "superseded", "retracted"] as const;
export const evidenceLevels = ["observed", "derived", "inferred"] as const;
export const confidences = ["high", "medium", "low", "unknown"] as const;

export type EvidenceReferenceInput = { ref_type: EvidenceReferenceType; ref_id: string; relation: EvidenceRelation };
export type EvidenceReference = v.InferOutput<typeof EvidenceReferenceSchema>;
export type Investigation = v.InferOutput<typeof InvestigationSchema>;
export type Hypothesis = v.InferOutput<typeof HypothesisSchema>;
export type Finding = v.InferOutput<typeof FindingSchema>;

/** What a caller may send; the schemas live with the other requests (requests/investigations.ts). */
export type RecordHypothesisRequest = v.InferInput<typeof RecordHypothesisSchema>;
export type RecordFindingRequest = v.InferInput<typeof RecordFindingSchema>;

export type ListPage<Key extends string, Item> = {
  schema_version: 1;
  corpus_commit_id: string;
  total: number;
  returned: number;
  truncated: boolean;
  next_cursor: string | null;
} & Record<Key, Item[]>;
