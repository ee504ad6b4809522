/**
 * Every `flameox://` resource URI is built here, so the names agents read in results and the
 * templates the MCP server answers can never drift apart.
 */
import type { EvidenceReferenceType } from "./investigation.ts";

const part = encodeURIComponent;

export function runResourceUri(runId: string): string {
  return `flameox://runs/${part(runId)}`;
}

export function flameGraphResourceUri(runId: string): string {
  return `${runResourceUri(runId)}/flamegraph.svg`;
}

export function artifactResourceUri(artifactId: string): string {
  return `flameox://artifacts/${part(artifactId)}`;
}

export function experimentResourceUri(experimentId: string): string {
  return `flameox://experiments/${part(experimentId)}`;
}

export function trialCollectionResourceUri(experimentId: string): string {
  return `${experimentResourceUri(experimentId)}/trials`;
}

export function trialResourceUri(experimentId: string, trialId: string): string {
  return `${trialCollectionResourceUri(experimentId)}/${part(trialId)}`;
}

export function runSetResourceUri(runSetId: string): string {
  return `flameox://run-sets/${part(runSetId)}`;
}

export function investigationResourceUri(investigationId: string): string {
  return `flameox://investigations/${part(investigationId)}`;
}

export function hypothesisResourceUri(hypothesisId: string): string {
  return `flameox://hypotheses/${part(hypothesisId)}`;
}

export function findingResourceUri(findingId: string): string {
  return `flameox://findings/${part(findingId)}`;
}

/** A recorded analysis or comparison (get_evidence's ref_type and ref_id). */
export function evidenceResourceUri(refType: string, refId: string): string {
  return `flameox://evidence/${part(refType)}/${part(refId)}`;
}

/** The resource of anything a finding can cite. Trial ids are `<experiment_id>.t<ordinal>`, so a trial's URI follows from its id. */
export function referenceResourceUri(refType: EvidenceReferenceType, refId: string): string {
  switch (refType) {
    case "run":
      return runResourceUri(refId);
    case "artifact":
      return artifactResourceUri(refId);
    case "analysis":
    case "comparison":
      return evidenceResourceUri(refType, refId);
    case "experiment":
      return experimentResourceUri(refId);
    case "run_set":
      return runSetResourceUri(refId);
    case "trial":
      return trialResourceUri(refId.slice(0, refId.lastIndexOf(".t")), refId);
  }
}

export function pipelineResourceUri(pipelineId: string): string {
  return `flameox://pipelines/${part(pipelineId)}`;
}

export function reductionResourceUri(reductionId: string): string {
  return `flameox://reductions/${part(reductionId)}`;
}
