import { GetEvidenceRequest, SummarizeEvidenceRequest } from "../../domain/requests/evidence.ts";
import { readOnly } from "../annotations.ts";
import { defineTool } from "../define-tool.ts";

/** get_evidence and summarize_evidence (services.evidence). */
export const evidenceTools = [
  defineTool({
    name: "get_evidence",
    description: "One evidence record (run, artifact, trial, analysis...) by type and id.",
    input: GetEvidenceRequest,
    annotations: readOnly,
    async handler(input, { services }) {
      const result = services.evidence.get(input);
      return { result };
    },
  }),
  defineTool({
    name: "summarize_evidence",
    description: "Runs, comparisons, analyses and findings as JSON and Markdown for a report.",
    input: SummarizeEvidenceRequest,
    annotations: readOnly,
    async handler(input, { services }) {
      const result = await services.evidence.summarize(input.request);
      return { result };
    },
  }),
];
