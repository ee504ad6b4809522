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

/**
 * Words with the left-out verbs are flagged where the text can only mean a tool: after "call", "use",
 * "then" (and the like), before "(", or as a recovery's `tool:` / `next_tool:` value in the source.
 */
const ambiguousVerbs = "(?:run|record|import|plan|start|workspace|workload)(?:_[a-z0-9]+)+";
const ambiguousInProse = new RegExp(
  `\\b(?:[Cc]all|[Cc]alling|[Uu]se|[Tt]hen|[Tt]ry|[Rr]un|via)\\s+\`?(${ambiguousVerbs})\\b(?!\`?\\s*[=:])`,
  "g",
);
const ambiguousCalled = new RegExp(`\\b(${ambiguousVerbs})\\(`, "g");
const ambiguousRecovery = new RegExp(`\\b(?:next_)?tool:\\s*"(${ambiguousVerbs})"`, "g");

/** Tool-shaped words that name something else: DuckDB functions, recovery kinds, fields, SQL names, events. */
const notTools = new Set([
  "run_units",
  "plan_id",
  "run_started",
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
  const words = [
    ...(text.match(toolShaped) ?? []),
    ...[...text.matchAll(ambiguousInProse), ...text.matchAll(ambiguousCalled)].map((match) => match[1] as string),
  ];
  return [...new Set(words.filter((word) => !registered.has(word) && !notTools.has(word)))];
}

/** Recoveries written as `{ tool: "…" }` or `next_tool: "…"` in a source file that name no registered tool. */
function unregisteredRecoveryTools(source: string): string[] {
  const words = [...source.matchAll(ambiguousRecovery)].map((match) => match[1] as string);
  return [...new Set(words.filter((word) => !registered.has(word)))];
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
  const found = typeScriptFiles(source).flatMap((path) => {
    const text = readFileSync(path, "utf8");
    const where = relative(join(source, ".."), path);
    return [
      ...scanSource(text).strings.flatMap((string) => unregisteredToolNames(string).map((name) => `${where}: ${name}`)),
      ...unregisteredRecoveryTools(text).map((name) => `${where}: recovery ${name}`),
    ];
  });
  expect(found).toEqual([]);
});

test("the check finds a planted reference: a text naming an unregistered tool, and only that one", () => {
  expect(unregisteredToolNames("Call get_no_such_tool next, or list_runs.")).toEqual(["get_no_such_tool"]);
  expect(unregisteredToolNames("Call list_runs, then get_run; snake_case_words and run_id that are no tool pass.")).toEqual([]);
  // The verbs that also begin field names: flagged where only a tool is meant, never as a field.
  expect(unregisteredToolNames("Call run_no_such_tool next, then plan_nothing(...); run_id and plan_digest pass.")).toEqual([
    "run_no_such_tool",
    "plan_nothing",
  ]);
  expect(unregisteredToolNames("Call run_experiment with run_id='x', then record_finding; use start_capability_setup.")).toEqual([]);
  expect(unregisteredRecoveryTools('next: { tool: "import_everything", arguments: {} }, next_tool: "record_finding"')).toEqual([
    "import_everything",
  ]);
});
