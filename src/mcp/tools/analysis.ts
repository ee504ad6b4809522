import * as v from "valibot";
import { readOnly } from "../annotations.ts";
import { defineTool } from "../define-tool.ts";

const runOrArtifact = v.pipe(v.string(), v.minLength(1), v.maxLength(200));
const limit = v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(1000));
const cursor = v.optional(v.nullable(v.pipe(v.string(), v.minLength(1), v.maxLength(4000))), null);
const unit = v.optional(v.nullable(v.picklist(["ns", "samples", "bytes"])), null);
const thread = v.optional(v.nullable(v.pipe(v.string(), v.maxLength(500))), null);

const drillDownInput = v.strictObject({
  run_or_artifact: runOrArtifact,
  frame_id: v.pipe(v.string(), v.minLength(1), v.maxLength(200)),
  limit: v.optional(limit, 20),
  cursor,
  unit,
  thread,
});

export const analysisTools = [
  defineTool({
    name: "analyze_hotspots",
    description:
      "Rank where time (or samples, or bytes) goes in a run's or artifact's stack evidence: self and total weight per function (group_by='function', default) or per source line ('line'), shares of the total, optionally per thread or for one thread. Units are never mixed (unit picks one; units_available lists them). Bounded: limit (1..1000), total, truncated, next_cursor, and hidden_self_share = the share of self weight not shown so far. Drill down with get_frame_callers, get_frame_callees and get_stack_examples using a returned frame_id.",
    input: v.strictObject({
      run_or_artifact: runOrArtifact,
      limit: v.optional(limit, 20),
      group_by: v.optional(v.picklist(["function", "line"]), "function"),
      order_by: v.optional(v.picklist(["self", "total"]), "self"),
      unit,
      thread,
      per_thread: v.optional(v.boolean(), false),
      cursor,
    }),
    annotations: readOnly,
    async handler(input, { services, progress }) {
      await progress(0, 2, "Hotspot snapshot pinned");
      const result = await services.analysis.hotspots({
        run_or_artifact: input.run_or_artifact,
        limit: input.limit,
        group_by: input.group_by,
        order_by: input.order_by,
        unit: input.unit ?? null,
        thread: input.thread ?? null,
        per_thread: input.per_thread,
        cursor: input.cursor ?? null,
      });
      await progress(1, 2, "Hotspot query complete");
      await progress(2, 2, "Hotspot result ready");
      const top = result.hotspots[0];
      return {
        result,
        text: `Returned ${result.returned} of ${result.total} hotspots${top ? `; top by ${result.order_by}: ${top.function} (${(100 * (result.order_by === "self" ? top.self_share : top.total_share)).toFixed(1)}%)` : ""}.`,
        ...(result.flamegraph_uri
          ? { links: [{ uri: result.flamegraph_uri, name: "Flame graph", description: "Static SVG flame graph of this run's stacks." }] }
          : {}),
      };
    },
  }),
  defineTool({
    name: "get_frame_callers",
    description:
      "Who calls a frame: the frames directly above it in every stack containing it, with weight and share of the frame's total (a root frame's caller is '<root>'). frame_id comes from analyze_hotspots of the same run or artifact. Bounded with limit, total, truncated, next_cursor.",
    input: drillDownInput,
    annotations: readOnly,
    async handler(input, { services }) {
      const result = await services.analysis.callEdges(
        {
          run_or_artifact: input.run_or_artifact,
          frame_id: input.frame_id,
          limit: input.limit,
          cursor: input.cursor ?? null,
          unit: input.unit ?? null,
          thread: input.thread ?? null,
        },
        "callers",
      );
      return { result, text: `Returned ${result.returned} callers of ${result.frame.function}.` };
    },
  }),
  defineTool({
    name: "get_frame_callees",
    description:
      "What a frame calls: the frames directly below it in every stack containing it, with weight and share of the frame's total ('<self>' is time spent in the frame itself). frame_id comes from analyze_hotspots. Bounded with limit, total, truncated, next_cursor.",
    input: drillDownInput,
    annotations: readOnly,
    async handler(input, { services }) {
      const result = await services.analysis.callEdges(
        {
          run_or_artifact: input.run_or_artifact,
          frame_id: input.frame_id,
          limit: input.limit,
          cursor: input.cursor ?? null,
          unit: input.unit ?? null,
          thread: input.thread ?? null,
        },
        "callees",
      );
      return { result, text: `Returned ${result.returned} callees of ${result.frame.function}.` };
    },
  }),
  defineTool({
    name: "get_stack_examples",
    description:
      "The heaviest distinct full stacks (root first, at most 64 frames nearest the leaf) that pass through a frame, with weight, share and thread. frame_id comes from analyze_hotspots. Bounded with limit, total, truncated, next_cursor.",
    input: drillDownInput,
    annotations: readOnly,
    async handler(input, { services }) {
      const result = await services.analysis.stackExamples({
        run_or_artifact: input.run_or_artifact,
        frame_id: input.frame_id,
        limit: input.limit,
        cursor: input.cursor ?? null,
        unit: input.unit ?? null,
        thread: input.thread ?? null,
      });
      return { result, text: `Returned ${result.returned} stack examples through ${result.frame.function}.` };
    },
  }),
];
