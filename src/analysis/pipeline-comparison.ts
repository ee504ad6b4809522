/**
 * Two registrations of a producer's pipeline compared stage by stage: which stages both have, which
 * moved, whose status changed, whose output artifact or size changed, and where the producer's own
 * summaries (or flameox's evidence of the outputs) differ. Pure over the two records.
 */
import type { ArtifactPipeline, PipelineStage, StageClassification, StageComparison } from "../domain/pipelines.ts";

export const stageClassifications: StageClassification[] = [
  "identical",
  "content_changed",
  "changed",
  "added",
  "missing",
  "uninspectable",
  "incompatible",
];

const summaryDifferenceLimit = 10;
/** A summary value is shown at most this long in a difference; the pipeline resource has it whole. */
const shownValueLength = 80;

/** The fields that make two registrations the same pipeline; producer_version may differ (that is often the question). */
const identityFields = ["pipeline_name", "pipeline_schema", "producer"] as const;

export type StageComparisonSet = {
  compatible: boolean;
  identity_differences: { field: string; baseline: string; candidate: string }[];
  stages: StageComparison[];
  counts: Record<StageClassification, number>;
  first_divergent_stage: string | null;
};

/** `evidenceOf` gives the row counts per evidence table of an artifact, or null when nothing was extracted from it. */
export function compareStages(
  baseline: ArtifactPipeline,
  candidate: ArtifactPipeline,
  evidenceOf: (artifactId: string) => Record<string, number> | null,
): StageComparisonSet {
  const identity_differences = [...identityFields, "producer_version" as const]
    .filter((field) => baseline[field] !== candidate[field])
    .map((field) => ({ field, baseline: baseline[field], candidate: candidate[field] }));
  const compatible = !identity_differences.some((difference) => difference.field !== "producer_version");
  const counts = Object.fromEntries(stageClassifications.map((name) => [name, 0])) as Record<StageClassification, number>;
  if (!compatible) return { compatible, identity_differences, stages: [], counts, first_divergent_stage: null };
  const candidateByName = new Map(candidate.stages.map((stage) => [stage.name, stage]));
  const baselineNames = new Set(baseline.stages.map((stage) => stage.name));
  const common = baseline.stages.filter((stage) => candidateByName.has(stage.name)).map((stage) => stage.name);
  const commonInCandidate = candidate.stages.filter((stage) => baselineNames.has(stage.name)).map((stage) => stage.name);
  const stages: StageComparison[] = [
    ...baseline.stages.map((stage) => {
      const other = candidateByName.get(stage.name) ?? null;
      const reordered = other !== null && common.indexOf(stage.name) !== commonInCandidate.indexOf(stage.name);
      return compareStage(stage, other, reordered, evidenceOf);
    }),
    ...candidate.stages.filter((stage) => !baselineNames.has(stage.name)).map((stage) => compareStage(null, stage, false, evidenceOf)),
  ];
  for (const stage of stages) counts[stage.classification] += 1;
  const first = stages.find((stage) => stage.classification !== "identical");
  return { compatible, identity_differences, stages, counts, first_divergent_stage: first?.name ?? null };
}

function compareStage(
  baseline: PipelineStage | null,
  candidate: PipelineStage | null,
  reordered: boolean,
  evidenceOf: (artifactId: string) => Record<string, number> | null,
): StageComparison {
  const side = <Value>(pick: (stage: PipelineStage) => Value) => ({
    baseline: baseline ? pick(baseline) : null,
    candidate: candidate ? pick(candidate) : null,
  });
  const bytes = side((stage) => stage.byte_length);
  const summaries = baseline && candidate ? summaryDifferences(baseline, candidate) : [];
  const evidence =
    baseline?.artifact_id && candidate?.artifact_id
      ? { baseline: evidenceOf(baseline.artifact_id), candidate: evidenceOf(candidate.artifact_id) }
      : null;
  const status = side((stage) => stage.status);
  return {
    name: (baseline ?? candidate)!.name,
    classification: classify(baseline, candidate, summaries.length),
    ordinal: side((stage) => stage.ordinal),
    reordered,
    status,
    status_changed: baseline !== null && candidate !== null && status.baseline !== status.candidate,
    artifact_id: side((stage) => stage.artifact_id),
    byte_length: { ...bytes, delta: bytes.baseline !== null && bytes.candidate !== null ? bytes.candidate - bytes.baseline : null },
    summary_differences: summaries.slice(0, summaryDifferenceLimit),
    summary_differences_total: summaries.length,
    evidence: evidence?.baseline && evidence.candidate ? { baseline: evidence.baseline, candidate: evidence.candidate } : null,
  };
}

function classify(baseline: PipelineStage | null, candidate: PipelineStage | null, summaryDifferenceCount: number): StageClassification {
  if (!baseline) return "added";
  if (!candidate) return "missing";
  if (baseline.format !== candidate.format || baseline.format_schema !== candidate.format_schema) return "incompatible";
  if (
    baseline.extractor &&
    candidate.extractor &&
    (baseline.extractor !== candidate.extractor || baseline.extractor_version !== candidate.extractor_version)
  )
    return "incompatible";
  if (!baseline.artifact_id || !candidate.artifact_id) return "uninspectable";
  if (baseline.artifact_id === candidate.artifact_id) return "identical";
  return summaryDifferenceCount > 0 ? "changed" : "content_changed";
}

/** Keys whose values differ, in key order; only when both sides carry a summary from the same extractor. */
function summaryDifferences(baseline: PipelineStage, candidate: PipelineStage): StageComparison["summary_differences"] {
  if (!baseline.structural_summary || !candidate.structural_summary) return [];
  const left = baseline.structural_summary;
  const right = candidate.structural_summary;
  return [...new Set([...Object.keys(left), ...Object.keys(right)])]
    .sort()
    .filter((key) => left[key] !== right[key])
    .map((key) => ({ key, baseline: shown(left[key]), candidate: shown(right[key]) }));
}

function shown(value: string | number | boolean | undefined): string | number | boolean | null {
  if (value === undefined) return null;
  return typeof value === "string" && value.length > shownValueLength ? `${value.slice(0, shownValueLength)}…` : value;
}
