import * as v from "valibot";
import { readOnly } from "../annotations.ts";
import { defineTool } from "../define-tool.ts";
import { identifier, evidenceRefTypes } from "./evidence-inputs.ts";

/** get_evidence and summarize_evidence (services.evidence). */
export const evidenceTools = [
  defineTool({
    name: "get_evidence",
    description:
      "Look up one piece of evidence by its type and id: pass the ref_type and its ID separately (ref_type one of analysis, artifact, comparison, generation (an evidence bundle id), observation, run, run_set, trial; ref_id the id a receipt or list returned).",
    input: v.strictObject({ ref_type: v.picklist(evidenceRefTypes), ref_id: v.pipe(v.string(), v.minLength(1)) }),
    annotations: readOnly,
    async handler(input, { services }) {
      const result = services.evidence.get({ ref_type: input.ref_type, ref_id: input.ref_id });
      return { result, text: `Retrieved ${result.ref_type} evidence ${result.ref_id}.` };
    },
  }),
  defineTool({
    name: "summarize_evidence",
    description:
      "Summarize runs (baseline_run_id, candidate_run_id, run_ids ≤20), recorded comparisons and analyses, and findings into one JSON summary plus Markdown for a report or PR comment, with a digest of the summary.",
    input: v.strictObject({
      request: v.strictObject({
        baseline_run_id: v.optional(v.nullable(identifier), null),
        candidate_run_id: v.optional(v.nullable(identifier), null),
        run_ids: v.optional(v.nullable(v.pipe(v.array(identifier), v.maxLength(20))), null),
        comparison_ids: v.optional(v.nullable(v.pipe(v.array(identifier), v.maxLength(10))), null),
        analysis_ids: v.optional(v.nullable(v.pipe(v.array(identifier), v.maxLength(20))), null),
        finding_ids: v.optional(v.nullable(v.pipe(v.array(identifier), v.maxLength(20))), null),
        output_excerpts: v.optional(v.picklist(["none", "internal"]), "none"),
        sensitive_context: v.optional(v.picklist(["redact", "include"]), "redact"),
      }),
    }),
    annotations: readOnly,
    async handler(input, { services }) {
      const result = await services.evidence.summarize(input.request);
      return { result, text: `Summarized evidence as ${result.summary_digest}.` };
    },
  }),
];
