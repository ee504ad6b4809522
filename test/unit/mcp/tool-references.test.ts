/**
 * Text that sends an agent to a tool names only tools that exist: the server instructions, every tool's
 * description and field descriptions, the resource templates, and every string in src/ (error recoveries'
 * next_tool values and their arguments, remediation text). A contract tool this release does not register
 * may appear in none of them.
 */
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { serverInstructions } from "../../../src/mcp/instructions.ts";
import { allTools, listedTools } from "../../../src/mcp/registry.ts";
import { resourceTemplates } from "../../../src/mcp/resources.ts";
import { offeredTools, sortedToolNames } from "../../support/contract.ts";
import { scanSource, typeScriptFiles } from "../../support/source-scan.ts";

const registered = new Set(allTools.map((tool) => tool.name));

/**
 * Snake_case words shaped like a tool name: they begin with a verb that registered tools begin with. Verbs
 * that also begin field and code names (run_id, plan_id, start_ns, workload_name, workspace_found, …) are
 * left out, so a word is only flagged when it can mean nothing but a tool.
 */
const toolVerbs = [...new Set(allTools.map((tool) => tool.name.split("_")[0]!))].filter(
  (verb) => !["run", "record", "import", "plan", "start", "workspace", "workload"].includes(verb),
);
const toolShaped = new RegExp(`\\b(?:${toolVerbs.join("|")})(?:_[a-z0-9]+)+\\b`, "g");

/** Tool-shaped words that name something else: DuckDB functions, recovery kinds, fields. */
const notTools = new Set([
  "get_bit",
  "list_position",
  "list_has_any",
  "extract_evidence",
  "extract_required_evidence",
  "prepare_command",
  "list_type",
]);

/** The words of a text shaped like a tool name that are not registered tools (a contract tool this release lacks, a typo, a removed tool). */
function unregisteredToolNames(text: string): string[] {
  const words = text.match(toolShaped) ?? [];
  return [...new Set(words.filter((word) => !registered.has(word) && !notTools.has(word)))];
}

function descriptions(schema: unknown): string[] {
  if (typeof schema !== "object" || schema === null) return [];
  const node = schema as Record<string, unknown>;
  return [
    ...(typeof node.description === "string" ? [node.description] : []),
    ...Object.values((node.properties ?? {}) as Record<string, unknown>).flatMap(descriptions),
    ...descriptions(node.items),
    ...descriptions(node.additionalProperties),
    ...((node.anyOf ?? []) as unknown[]).flatMap(descriptions),
  ];
}

test("the registry is exactly the offered tools (the contract's implemented ones and the invented ones), none of the rest", () => {
  expect(sortedToolNames([...registered])).toEqual(sortedToolNames(offeredTools));
});

test("the instructions, tool descriptions, field descriptions and resource templates name only registered tools", () => {
  const texts: { where: string; text: string }[] = [
    { where: "instructions", text: serverInstructions },
    ...listedTools().flatMap((tool) => [
      { where: `${tool.name} description`, text: tool.description },
      ...descriptions(tool.inputSchema).map((text) => ({ where: `${tool.name} inputSchema`, text })),
    ]),
    ...resourceTemplates.map((template) => ({
      where: `template ${template.uriTemplate}`,
      text: `${template.uriTemplate} ${template.name} ${template.description}`,
    })),
  ];
  const found = texts.flatMap(({ where, text }) => unregisteredToolNames(text).map((name) => `${where}: ${name}`));
  expect(found).toEqual([]);
  // The instructions do walk through the setup path, so the check above is about real references.
  expect(serverInstructions).toContain("start_capability_setup");
});

test("no string in src/ (recoveries' next_tool and arguments, remediation, descriptions) names an unregistered tool", () => {
  const source = resolve(import.meta.dir, "../../../src");
  const found = typeScriptFiles(source).flatMap((path) =>
    scanSource(readFileSync(path, "utf8")).strings.flatMap((text) =>
      unregisteredToolNames(text).map((name) => `${relative(join(source, ".."), path)}: ${name}`),
    ),
  );
  expect(found).toEqual([]);
});

test("the check finds a planted reference: a text naming an unregistered tool, and only that one", () => {
  expect(unregisteredToolNames("Call get_no_such_tool next, or list_runs.")).toEqual(["get_no_such_tool"]);
  expect(unregisteredToolNames("Call list_runs, then get_run; snake_case_words and run_id that are no tool pass.")).toEqual([]);
});
