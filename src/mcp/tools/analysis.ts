import { FrameDrillDownRequest, HotspotsRequest } from "../../domain/requests/evidence.ts";
import { readOnly } from "../annotations.ts";
import { defineTool, type ToolContext } from "../define-tool.ts";
import type * as v from "valibot";

type DrillDown = v.InferOutput<typeof FrameDrillDownRequest>;

function drillDown(input: DrillDown) {
  return {
    run_or_artifact: input.run_or_artifact,
    frame_id: input.frame_id,
    limit: input.limit,
    cursor: input.cursor,
    unit: input.unit,
    thread: input.thread,
  };
}

/** get_frame_callers and get_frame_callees differ only in the direction they walk. */
function callEdgeTool(direction: "callers" | "callees", description: string) {
  return defineTool({
    name: `get_frame_${direction}`,
    description,
    input: FrameDrillDownRequest,
    annotations: readOnly,
    async handler(input, { services }: ToolContext) {
      const result = await services.analysis.callEdges(drillDown(input), direction);
      return { result };
    },
  });
}

export const analysisTools = [
  defineTool({
    name: "analyze_hotspots",
    description: "Time, samples or bytes per function or line. Next: get_frame_callers.",
    input: HotspotsRequest,
    annotations: readOnly,
    async handler(input, { services, progress }) {
      await progress(0, 2, "Hotspot snapshot pinned");
      const result = await services.analysis.hotspots(input);
      await progress(1, 2, "Hotspot query complete");
      await progress(2, 2, "Hotspot result ready");
      return {
        result,
        ...(result.flamegraph_uri
          ? { links: [{ uri: result.flamegraph_uri, name: "Flame graph", description: "Static SVG flame graph of this run's stacks." }] }
          : {}),
      };
    },
  }),
  callEdgeTool("callers", "Direct callers of a frame from analyze_hotspots, with weight and share."),
  callEdgeTool("callees", "Direct callees of a frame from analyze_hotspots, with weight and share."),
  defineTool({
    name: "get_stack_examples",
    description: "Heaviest full stacks through a frame from analyze_hotspots, root first.",
    input: FrameDrillDownRequest,
    annotations: readOnly,
    async handler(input, { services }) {
      const result = await services.analysis.stackExamples(drillDown(input));
      return { result };
    },
  }),
];
