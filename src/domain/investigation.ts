/** The records of an investigation: the question, its hypotheses and the findings that cite evidence. */
export const evidenceReferenceTypes = ["analysis", "artifact", "comparison", "experiment", "run", "run_set", "trial"] as const;
export type EvidenceReferenceType = (typeof evidenceReferenceTypes)[number];
export const evidenceRelations = ["supports", "contradicts", "context", "validates"] as const;
export type EvidenceRelation = (typeof evidenceRelations)[number];
export const assessments = ["unassessed", "supported", "refuted", "inconclusive"] as const;
export type Assessment = (typeof assessments)[number];
export const lifecycles = ["active", "superseded", "retracted"] as const;

export type EvidenceReferenceInput = { ref_type: EvidenceReferenceType; ref_id: string; relation: EvidenceRelation };
export type EvidenceReference = EvidenceReferenceInput & { resource_uri: string };

export type Investigation = {
  schema_version: 1;
  investigation_id: string;
  question: string;
  symptom: string | null;
  parent_investigation_id: string | null;
  status: "open";
  created_at: string;
  resource_uri: string;
};

export type Hypothesis = {
  schema_version: 1;
  hypothesis_id: string;
  investigation_id: string;
  revision: number;
  claim: string;
  prediction: string;
  discriminating_condition: string;
  assessment: Assessment;
  lifecycle: (typeof lifecycles)[number];
  created_at: string;
  first_created_at: string;
  resource_uri: string;
};

export type Finding = {
  schema_version: 1;
  finding_id: string;
  revision: number;
  investigation_id: string | null;
  hypothesis_id: string | null;
  kind: string;
  title: string;
  claim: string;
  evidence_level: "observed" | "derived" | "inferred";
  confidence: "high" | "medium" | "low" | "unknown";
  assessment: Assessment;
  lifecycle: (typeof lifecycles)[number];
  limitations: string[];
  next_experiments: Record<string, unknown>[];
  evidence: EvidenceReference[];
  created_at: string;
  first_created_at: string;
  resource_uri: string;
};

export type RecordHypothesisRequest = {
  investigation_id: string;
  claim: string;
  prediction: string;
  discriminating_condition: string;
  hypothesis_id?: string | null;
  expected_revision?: number | null;
  assessment?: Assessment;
  lifecycle?: (typeof lifecycles)[number];
};

export type RecordFindingRequest = {
  kind: string;
  title: string;
  claim: string;
  evidence_level: Finding["evidence_level"];
  confidence: Finding["confidence"];
  assessment: Assessment;
  lifecycle?: Finding["lifecycle"];
  investigation_id?: string | null;
  hypothesis_id?: string | null;
  limitations?: string[];
  next_experiments?: Record<string, unknown>[];
  evidence?: EvidenceReferenceInput[];
  finding_id?: string | null;
  expected_revision?: number | null;
};

export type ListPage<Key extends string, Item> = {
  schema_version: 1;
  corpus_commit_id: string;
  total: number;
  returned: number;
  truncated: boolean;
  next_cursor: string | null;
} & Record<Key, Item[]>;
