import { FailuresRequest } from "../../domain/requests/evidence.ts";
import { readOnly } from "../annotations.ts";
import { defineTool } from "../define-tool.ts";

/** analyze_failures: failure clusters across runs (services.failureAnalysis). */
export const failureTools = [
  defineTool({
    name: "analyze_failures",
    description: "Failed runs, tests and logs clustered by signature, with examples. Next: get_run.",
    input: FailuresRequest,
    annotations: readOnly,
    async handler(input, { services, progress }) {
      await progress(0, 2, "Selecting runs");
      const result = await services.failureAnalysis.analyze(input, (step, message) => progress(step, 2, message));
      await progress(2, 2, "Failure clusters ready");
      return { result };
    },
  }),
];
