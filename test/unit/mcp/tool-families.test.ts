import { expect, test } from "bun:test";
import { FlameoxError } from "../../../src/domain/errors.ts";
import { inspectServer } from "../../../src/mcp/inspect.ts";
import { allTools, listedTools } from "../../../src/mcp/registry.ts";
import { parseToolFamilies, toolFamilies, toolFamilyNames, toolsOfFamilies } from "../../../src/mcp/tool-families.ts";

test("every tool is in exactly one family, and the families in order are the registry", () => {
  const names = toolFamilyNames.flatMap((family) => toolFamilies[family].map((tool) => tool.name));
  expect(names).toEqual(allTools.map((tool) => tool.name));
  expect(new Set(names).size).toBe(names.length);
  for (const family of toolFamilyNames) expect(toolFamilies[family].length).toBeGreaterThan(0);
});

test("--tools parsing: registry order, repeats ignored, unknown names are INVALID_ARGUMENTS naming the valid ones", () => {
  expect(parseToolFamilies(undefined)).toBeNull();
  expect(parseToolFamilies("runs,capture,runs")).toEqual(["capture", "runs"]);
  let error: unknown;
  try {
    parseToolFamilies("capture,bogus");
  } catch (caught) {
    error = caught;
  }
  expect(error).toBeInstanceOf(FlameoxError);
  expect((error as FlameoxError).code).toBe("INVALID_ARGUMENTS");
  expect((error as FlameoxError).message).toContain('"bogus"');
  expect((error as FlameoxError).remediation.join(" ")).toContain(toolFamilyNames.join(", "));
  expect(() => parseToolFamilies("")).toThrow(FlameoxError);
});

test("a selection lists only its families' tools; inspect shows the families and what each holds", () => {
  const selected = listedTools(["capture", "runs"]).map((tool) => tool.name);
  expect(selected).toEqual(toolsOfFamilies(["capture", "runs"]).map((tool) => tool.name));
  expect(selected).toContain("plan_capture");
  expect(selected).not.toContain("analyze_hotspots");
  const inspection = inspectServer(["runs"]);
  expect(inspection.families).toEqual([{ name: "runs", tools: toolFamilies.runs.map((tool) => tool.name) }]);
  expect(inspection.tools.map((tool) => tool.name)).toEqual(toolFamilies.runs.map((tool) => tool.name));
  expect(inspectServer().families.map((family) => family.name)).toEqual(toolFamilyNames);
});
