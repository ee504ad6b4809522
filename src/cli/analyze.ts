import { defineCommand } from "citty";
import { cliOptions, cliServices } from "./context.ts";
import { emit, renderTable } from "./output.ts";
import { pageLimits } from "../domain/requests/limits.ts";
import { pageArguments, pageOf } from "./arguments.ts";
import { unitArgument } from "./report.ts";
import { moreAnalyzeCommands } from "./evidence.ts";

function percent(share: number): string {
  return `${(share * 100).toFixed(1)}%`;
}

export const analyzeCommand = defineCommand({
  meta: { name: "analyze", description: "Bounded analyses over stored evidence." },
  subCommands: {
    hotspots: defineCommand({
      meta: { name: "hotspots", description: "Rank functions (or lines) by self or total weight." },
      args: {
        run_or_artifact: { type: "positional", required: true, description: "Run id or artifact id (sha256:…)." },
        ...pageArguments(pageLimits.hotspots),
        "group-by": { type: "string", default: "function", description: "function | line" },
        "order-by": { type: "string", default: "self", description: "self | total" },
        unit: { type: "string", description: "ns | samples | bytes | retained_bytes" },
        thread: { type: "string", description: "Only this thread." },
        "per-thread": { type: "boolean", description: "Rank per thread." },
      },
      async run({ args }) {
        const result = await cliServices().analysis.hotspots({
          run_or_artifact: String(args.run_or_artifact),
          ...pageOf(args, pageLimits.hotspots),
          group_by: args["group-by"] === "line" ? "line" : "function",
          order_by: args["order-by"] === "total" ? "total" : "self",
          unit: unitArgument(args.unit),
          thread: (args.thread as string | undefined) ?? null,
          per_thread: Boolean(args["per-thread"]),
        });
        emit(cliOptions(), result, () =>
          [
            `${result.total} ${result.group_by === "line" ? "lines" : "functions"} in ${result.unit ?? "no unit"}; showing ${result.returned} by ${result.order_by} (hidden self share ${percent(result.hidden_self_share)})`,
            renderTable(
              result.hotspots.map((hotspot) => ({
                rank: hotspot.rank,
                self: percent(hotspot.self_share),
                total: percent(hotspot.total_share),
                function: hotspot.function,
                location: hotspot.file ? `${hotspot.file}${hotspot.line !== null ? `:${hotspot.line}` : ""}` : "",
                frame_id: hotspot.frame_id,
              })),
              ["rank", "self", "total", "function", "location", "frame_id"],
            ),
          ].join("\n"),
        );
      },
    }),
    ...moreAnalyzeCommands,
  },
});

const drillArguments = {
  run_or_artifact: { type: "positional", required: true, description: "Run id or artifact id." },
  frame_id: { type: "positional", required: true, description: "frame_id from analyze hotspots." },
  ...pageArguments(pageLimits.frameDrillDown),
  unit: { type: "string", description: "ns | samples | bytes | retained_bytes" },
  thread: { type: "string", description: "Only this thread." },
} as const;

function drillRequest(args: Record<string, unknown>) {
  return {
    run_or_artifact: String(args.run_or_artifact),
    frame_id: String(args.frame_id),
    ...pageOf(args, pageLimits.frameDrillDown),
    unit: unitArgument(args.unit),
    thread: (args.thread as string | undefined) ?? null,
  };
}

export const stacksCommand = defineCommand({
  meta: { name: "stacks", description: "Drill into a hotspot: callers, callees, example stacks." },
  subCommands: {
    callers: defineCommand({
      meta: { name: "callers", description: "Frames that call the given frame." },
      args: drillArguments,
      async run({ args }) {
        const result = await cliServices().analysis.callEdges(drillRequest(args), "callers");
        emit(cliOptions(), result, () =>
          renderTable(
            result.edges.map((edge) => ({ share: percent(edge.share_of_frame), function: edge.function, frame_id: edge.frame_id })),
            ["share", "function", "frame_id"],
          ),
        );
      },
    }),
    callees: defineCommand({
      meta: { name: "callees", description: "Frames the given frame calls." },
      args: drillArguments,
      async run({ args }) {
        const result = await cliServices().analysis.callEdges(drillRequest(args), "callees");
        emit(cliOptions(), result, () =>
          renderTable(
            result.edges.map((edge) => ({ share: percent(edge.share_of_frame), function: edge.function, frame_id: edge.frame_id })),
            ["share", "function", "frame_id"],
          ),
        );
      },
    }),
    examples: defineCommand({
      meta: { name: "examples", description: "The heaviest stacks through the given frame." },
      args: drillArguments,
      async run({ args }) {
        const result = await cliServices().analysis.stackExamples(drillRequest(args));
        emit(cliOptions(), result, () =>
          result.examples
            .map(
              (example) =>
                `${percent(example.share)}${example.thread ? ` [${example.thread}]` : ""}\n${example.frames.map((frame) => `    ${frame.function}`).join("\n")}`,
            )
            .join("\n\n"),
        );
      },
    }),
  },
});
