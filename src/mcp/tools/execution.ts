import { ExecutionRequest } from "../../domain/requests/evidence.ts";
import { readOnly } from "../annotations.ts";
import { defineTool } from "../define-tool.ts";

/** analyze_execution: statements covered and missed, lines and arcs that ran, per file (services.executionAnalysis). */
export const executionTools = [
  defineTool({
    name: "analyze_execution",
    description: "Coverage per file (missed_line_ranges), or what ran in one of two runs only.",
    input: ExecutionRequest,
    annotations: readOnly,
    async handler(input, { services, progress }) {
      await progress(0, 2, "Coverage evidence pinned");
      const result = await services.executionAnalysis.analyze(input);
      await progress(1, 2, "Coverage queries complete");
      await progress(2, 2, "Execution result ready");
      return { result };
    },
  }),
];
