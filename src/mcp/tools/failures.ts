import * as v from "valibot";
import { readOnly } from "../annotations.ts";
import { defineTool } from "../define-tool.ts";
import { strictLimit, runFilter } from "./evidence-inputs.ts";

/** analyze_failures: failure clusters across runs (services.failureAnalysis). */
export const failureTools = [
  defineTool({
    name: "analyze_failures",
    description:
      "Failure clusters across runs: failed, timed-out and cancelled runs grouped by workload and signature (failure code, exit status or signal), and failed/errored/crashed tests from extracted pytest outcomes grouped by normalized error message, with counts, runs and examples. filter narrows the runs like list_runs.",
    input: v.strictObject({ limit: strictLimit, filter: runFilter }),
    annotations: readOnly,
    async handler(input, { services, progress }) {
      await progress(0, 2, "Selecting runs");
      const result = await services.failureAnalysis.analyze({ limit: input.limit, filter: input.filter ?? null }, (step, message) =>
        progress(step, 2, message),
      );
      await progress(2, 2, "Failure clusters ready");
      return { result, text: `Returned ${result.returned} failure clusters.` };
    },
  }),
];
