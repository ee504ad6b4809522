/**
 * The rules a tool catalog must meet for hosts to accept it as it is (gemini-cli old and new, older
 * Codex converters, Claude Code, VS Code, Cursor), checked the same way on the registry and on the
 * binary's tools/list.
 */
export const toolDescriptionLimit = 400;
/**
 * What a model reads of the catalog on every turn, in bytes: names, descriptions, inputSchemas and
 * annotations, each part's JSON (src/mcp/model-visible.ts), for the whole surface, as issue 12 sets it.
 */
export const modelVisibleByteLimit = 40_000;
/**
 * The same four parts counted with their framing, each tool as `{"name":…,"description":…,"inputSchema":…,
 * "annotations":…}` the way a client receives it (54 bytes a tool more). Not yet within 40,000: 71 tools with
 * four explicit hints each, typed schemas and descriptions of at least 60 characters put it at about 42,300.
 */
export const framedModelVisibleByteLimit = 42_500;

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
