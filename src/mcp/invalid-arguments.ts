import type * as v from "valibot";
import { type FieldProblem, invalidArguments, type FlameoxError } from "../domain/errors.ts";

/** Turns valibot issues into field problems an agent can act on: one entry per offending field. */
export function fieldProblems(issues: readonly v.BaseIssue<unknown>[]): FieldProblem[] {
  const problems: FieldProblem[] = [];
  const seen = new Set<string>();
  for (const issue of issues) {
    const field = (issue.path ?? []).map((item) => String(item.key)).join(".") || "(root)";
    const problem = describe(issue, field);
    const key = `${problem.field}\u0000${problem.type}`;
    if (seen.has(key)) continue;
    seen.add(key);
    problems.push(problem);
  }
  return problems;
}

function describe(issue: v.BaseIssue<unknown>, field: string): FieldProblem {
  switch (issue.type) {
    case "strict_object":
    case "object":
    case "loose_object":
      if (issue.expected === "never") return { field, message: "Unknown argument field.", type: "extra_forbidden" };
      if (issue.received === "undefined") return { field, message: "Field required", type: "missing" };
      return { field, message: `Input should be an object (received ${issue.received})`, type: "object_type" };
    case "string":
      return { field, message: `Input should be a valid string (received ${issue.received})`, type: "string_type" };
    case "number":
      return { field, message: `Input should be a valid number (received ${issue.received})`, type: "number_type" };
    case "integer":
      return { field, message: `Input should be a valid integer (received ${issue.received})`, type: "int_type" };
    case "boolean":
      return { field, message: `Input should be a valid boolean (received ${issue.received})`, type: "bool_type" };
    case "array":
      return { field, message: `Input should be a valid array (received ${issue.received})`, type: "list_type" };
    case "picklist":
    case "literal":
    case "enum":
      return { field, message: `Input should be ${issue.expected} (received ${issue.received})`, type: "literal_error" };
    case "min_length":
      return {
        field,
        message: `Length should be at least ${String(issue.expected).replace(">=", "")} (received ${issue.received})`,
        type: "too_short",
      };
    case "max_length":
      return {
        field,
        message: `Length should be at most ${String(issue.expected).replace("<=", "")} (received ${issue.received})`,
        type: "too_long",
      };
    case "min_value":
      return {
        field,
        message: `Input should be greater than or equal to ${String(issue.expected).replace(">=", "")} (received ${issue.received})`,
        type: "greater_than_equal",
      };
    case "max_value":
      return {
        field,
        message: `Input should be less than or equal to ${String(issue.expected).replace("<=", "")} (received ${issue.received})`,
        type: "less_than_equal",
      };
    case "gt_value":
      return {
        field,
        message: `Input should be greater than ${String(issue.expected).replace(">", "")} (received ${issue.received})`,
        type: "greater_than",
      };
    case "regex":
      return {
        field,
        message: `String should match pattern ${issue.expected} (received ${issue.received})`,
        type: "string_pattern_mismatch",
      };
    case "union":
    case "variant":
      return { field, message: `Input matches none of the allowed shapes (received ${issue.received})`, type: "union_error" };
    default:
      return { field, message: issue.message, type: issue.type };
  }
}

export function invalidArgumentsFromIssues(subject: string, issues: readonly v.BaseIssue<unknown>[]): FlameoxError {
  return invalidArguments(subject, fieldProblems(issues));
}
