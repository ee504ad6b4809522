/**
 * The rules a tool catalog must meet for hosts to accept it as it is (gemini-cli old and new, older
 * Codex converters, Claude Code, VS Code, Cursor), checked the same way on the registry and on the
 * binary's tools/list.
 */
export const toolDescriptionLimit = 400;
/**
 * Issue 12 set 40,000 when the catalog was 39,357 bytes. configure_experiment (issue 13: experiments
 * declared without hand edits) is a 59th tool of 1,745 bytes with terse fields and only the common table
 * keys; nothing else in the catalog had that much slack, so the budget grows by it rather than other
 * tools losing what a model needs. 41,270 bytes when this was set.
 * The first answer in the receipt (issue 13) adds 206 bytes: analyze_memory's cursor (its total and
 * returned now page top_allocations), and a few words each telling a model that execute_capture_plan
 * returns an analysis and next_tool, that workspace_status answers on a fresh project, that
 * plan_capture checks an 'unknown' adapter itself, and that get_run has output tails and a crash's
 * exception. 41,622 bytes when this was set (41,416 before it).
 * Managed providers (issue 18) add the six contract tools the instructions and list_capabilities send
 * agents to: start/get/cancel_capability_setup, prepare_capabilities, prepare_adapter and
 * prepare_workload_dependencies, 2,696 bytes together. A tool cannot be much under 330 bytes (its name,
 * the four hints at 88 bytes, a description over 60 characters, a closed schema), so the budget grows by
 * them as it did for configure_experiment. 44,318 bytes when this was set.
 */
export const modelVisibleByteLimit = 44_400;

const forbiddenKeywords = [
  "$ref",
  "$defs",
  "definitions",
  "const",
  "propertyNames",
  "exclusiveMinimum",
  "exclusiveMaximum",
  "oneOf",
  "allOf",
  "not",
  "nullable",
];

type Tool = { name: string; description?: string; inputSchema: Record<string, unknown> };

/** Every violation in one tool, each naming the schema path, so a failing test lists them all at once. */
export function schemaRuleViolations(tool: Tool): string[] {
  const problems: string[] = [];
  const description = tool.description ?? "";
  if (description.length === 0) problems.push(`${tool.name}: no description`);
  if (description.length > toolDescriptionLimit) problems.push(`${tool.name}: description has ${description.length} characters`);
  const root = tool.inputSchema;
  if (root.type !== "object") problems.push(`${tool.name}: inputSchema is not an object`);
  if (root.additionalProperties !== false) problems.push(`${tool.name}: inputSchema is open`);
  walk(root, tool.name, problems, "root");
  return problems;
}

type Role = "root" | "property" | "branch" | "value";

/** Properties and union branches carry one `type`; an array item or map value may instead be a union of typed branches. */
function walk(schema: unknown, path: string, problems: string[], role: Role): void {
  if (typeof schema !== "object" || schema === null || Array.isArray(schema)) {
    problems.push(`${path}: not a schema object`);
    return;
  }
  const node = schema as Record<string, unknown>;
  for (const keyword of forbiddenKeywords) if (keyword in node) problems.push(`${path}: uses ${keyword}`);
  const union = node.anyOf;
  if (Array.isArray(node.type)) problems.push(`${path}: type array`);
  else if (node.type === "null") problems.push(`${path}: null type`);
  else if (typeof node.type !== "string" && (role === "property" || role === "branch" || union === undefined))
    problems.push(`${path}: no type`);
  if (role === "property" && (typeof node.description !== "string" || node.description.trim() === ""))
    problems.push(`${path}: property without a description`);
  if (node.properties !== undefined) {
    if (node.additionalProperties !== false) problems.push(`${path}: object with properties is not closed`);
    for (const [name, property] of Object.entries(node.properties as Record<string, unknown>))
      walk(property, `${path}.${name}`, problems, "property");
  }
  if (node.items !== undefined) walk(node.items, `${path}[]`, problems, "value");
  if (typeof node.additionalProperties === "object" && node.additionalProperties !== null)
    walk(node.additionalProperties, `${path}{}`, problems, "value");
  if (union !== undefined) {
    if (!Array.isArray(union) || union.length < 2) problems.push(`${path}: anyOf with fewer than two branches`);
    else union.forEach((branch, index) => walk(branch, `${path}|${index}`, problems, "branch"));
  }
}
