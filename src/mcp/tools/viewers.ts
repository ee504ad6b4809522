import * as v from "valibot";
import { readOnly } from "../annotations.ts";
import { defineTool } from "../define-tool.ts";
import { flameGraphResourceUri } from "../../domain/resource-uris.ts";

export const viewerTools = [
  defineTool({
    name: "get_native_viewer_plan",
    description:
      "Which viewers can show a run's or artifact's evidence, with the exact commands that prepare each file: `flameox report ID --output FILE` (self-contained offline HTML with flame graph, differential graph, timeline and tables) and `flameox export ID --format speedscope|pprof|collapsed|chrome --output FILE` for speedscope, pprof, Perfetto UI and the Firefox Profiler. Says which local viewer commands are installed. Read-only: it writes nothing and never launches a viewer or browser; hand the commands to the person. For a picture without leaving MCP, read the flamegraph_uri resource that analyze_hotspots links.",
    input: v.strictObject({ run_or_artifact: v.pipe(v.string(), v.minLength(1), v.maxLength(200)) }),
    annotations: readOnly,
    async handler(input, { services }) {
      const result = await services.reports.viewerPlan(input.run_or_artifact);
      return {
        result,
        text:
          result.viewers.length > 0
            ? `Report: ${result.report_command.join(" ")}; viewers: ${result.viewers.map((viewer) => viewer.name).join(", ")}.`
            : "No stack or trace evidence to view yet.",
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
