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
import { contractToolsNotYetImplemented, implementedContractTools, offeredTools, sortedToolNames } from "../../support/contract.ts";
import { scanSource, typeScriptFiles } from "../../support/source-scan.ts";

const registered = new Set(allTools.map((tool) => tool.name));
const contractTools = new Set<string>([...implementedContractTools, ...contractToolsNotYetImplemented]);

/** The snake_case words of a text that are contract tool names but not registered tools. */
function unregisteredToolNames(text: string): string[] {
  const words = text.match(/\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b/g) ?? [];
  return [...new Set(words.filter((word) => contractTools.has(word) && !registered.has(word)))];
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
  expect(contractToolsNotYetImplemented.filter((name) => registered.has(name))).toEqual([]);
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

test("no string in src/ (recoveries' next_tool and arguments, remediation, descriptions) names an unregistered contract tool", () => {
  const source = resolve(import.meta.dir, "../../../src");
  const found = typeScriptFiles(source).flatMap((path) =>
    scanSource(readFileSync(path, "utf8")).strings.flatMap((text) =>
      unregisteredToolNames(text).map((name) => `${relative(join(source, ".."), path)}: ${name}`),
    ),
  );
  expect(found).toEqual([]);
});

test("the check finds a planted reference: a text naming an unregistered contract tool, and only that one", () => {
  const missing = contractToolsNotYetImplemented[0];
  if (missing === undefined) return;
  expect(unregisteredToolNames(`Call ${missing} next, or list_runs.`)).toEqual([missing]);
  expect(unregisteredToolNames("Call list_runs, then get_run; snake_case_words that are no tool pass.")).toEqual([]);
});
