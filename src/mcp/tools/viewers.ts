import { ViewerPlanRequest } from "../../domain/requests/evidence.ts";
import { readOnly } from "../annotations.ts";
import { defineTool } from "../define-tool.ts";
import { flameGraphResourceUri } from "../../domain/resource-uris.ts";

export const viewerTools = [
  defineTool({
    name: "get_native_viewer_plan",
    description: "Commands to open a run's evidence in viewers (HTML report, speedscope, Perfetto).",
    input: ViewerPlanRequest,
    annotations: readOnly,
    async handler(input, { services }) {
      const result = await services.reports.viewerPlan(input.run_or_artifact);
      return {
        result,
        ...(result.evidence.stacks && result.run_ids.length === 1 && !input.run_or_artifact.startsWith("sha256:")
          ? {
              links: [
                {
                  uri: flameGraphResourceUri(input.run_or_artifact),
                  name: "Flame graph",
                  description: "Static SVG flame graph of this run's stacks.",
                },
              ],
            }
          : {}),
      };
    },
  }),
];
