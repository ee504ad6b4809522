// Every capture adapter declares its first answer and where a receipt sends an agent next, in one place.
import { expect, test } from "bun:test";
import * as v from "valibot";
import { captureAdapters } from "../../../src/adapters/capture-adapters.ts";
import { adapterDescriptors } from "../../../src/adapters/registry.ts";
import { toolsByName } from "../../../src/mcp/registry.ts";
import { defaultNextStep } from "../../../src/services/receipt-next-step.ts";

const stackAdapters = new Set(["py-spy", "perf", "v8"]);

test("each adapter's receipt names a tool that exists and accepts the arguments it is given", () => {
  for (const name of captureAdapters.keys()) {
    const next = defaultNextStep(name, "run-1", "workload");
    const tool = toolsByName().get(next.tool);
    expect({ adapter: name, tool: tool?.name }).toEqual({ adapter: name, tool: next.tool });
    const parsed = v.safeParse(tool!.input, next.arguments);
    expect({ adapter: name, valid: parsed.success }).toEqual({ adapter: name, valid: true });
  }
});

test("only adapters that record stacks point at analyze_hotspots; tests and coverage never do", () => {
  for (const descriptor of adapterDescriptors) {
    const pointsAtHotspots = descriptor.defaultAnalysis.tool === "analyze_hotspots";
    expect({ adapter: descriptor.name, pointsAtHotspots }).toEqual({
      adapter: descriptor.name,
      pointsAtHotspots: stackAdapters.has(descriptor.name),
    });
  }
  expect(defaultNextStep("pytest", "run-1", "tests")).toEqual({
    tool: "analyze_failures",
    arguments: { filter: { workload_name: "tests" } },
  });
  expect(defaultNextStep("coverage", "run-1", "cov")).toEqual({ tool: "analyze_execution", arguments: { run_or_artifact: "run-1" } });
  expect(defaultNextStep("command", "run-1", "job")).toEqual({ tool: "get_run", arguments: { run_id: "run-1" } });
});
