import * as v from "valibot";
import { readOnly } from "../annotations.ts";
import { defineTool } from "../define-tool.ts";
import { runOrArtifact, limitDefaulting } from "./evidence-inputs.ts";

/** analyze_execution: lines and arcs that ran, per file (services.executionAnalysis). */
export const executionTools = [
  defineTool({
    name: "analyze_execution",
    description:
      "Which code ran: executed lines and branch arcs per project file from coverage evidence (extract_coverage), with contexts. With comparison_run_or_artifact, the lines and arcs executed in only one of the two runs per file. Bounded by limit (files); missing coverage is an error naming the next tool.",
    input: v.strictObject({
      run_or_artifact: runOrArtifact,
      limit: limitDefaulting(50),
      comparison_run_or_artifact: v.optional(
        v.nullable(v.pipe(runOrArtifact, v.description("Optional second run or artifact ID for a compatible comparison."))),
        null,
      ),
    }),
    annotations: readOnly,
    async handler(input, { services, progress }) {
      await progress(0, 2, "Coverage evidence pinned");
      const result = await services.executionAnalysis.analyze({
        run_or_artifact: input.run_or_artifact,
        limit: input.limit,
        comparison_run_or_artifact: input.comparison_run_or_artifact ?? null,
      });
      await progress(1, 2, "Coverage queries complete");
      await progress(2, 2, "Execution result ready");
      return { result, text: `Returned ${result.returned} of ${result.total} observations.` };
    },
  }),
];
