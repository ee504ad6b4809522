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

/** Issues whose message is "<words> (received …)": the wrong type of value, or none of the allowed ones. */
const simpleIssues: Record<string, { words: (expected: unknown) => string; type: string }> = {
  string: { words: () => "Input should be a valid string", type: "string_type" },
  number: { words: () => "Input should be a valid number", type: "number_type" },
  integer: { words: () => "Input should be a valid integer", type: "int_type" },
  boolean: { words: () => "Input should be a valid boolean", type: "bool_type" },
  array: { words: () => "Input should be a valid array", type: "list_type" },
  picklist: { words: (expected) => `Input should be ${expected}`, type: "literal_error" },
  literal: { words: (expected) => `Input should be ${expected}`, type: "literal_error" },
  enum: { words: (expected) => `Input should be ${expected}`, type: "literal_error" },
  union: { words: () => "Input matches none of the allowed shapes", type: "union_error" },
  variant: { words: () => "Input matches none of the allowed shapes", type: "union_error" },
  regex: { words: (expected) => `String should match pattern ${expected}`, type: "string_pattern_mismatch" },
};

/** Bound issues: valibot's `expected` carries the comparison sign (">=5"), which the message states in words. */
const boundIssues: Record<string, { words: string; sign: string; type: string }> = {
  min_length: { words: "Length should be at least", sign: ">=", type: "too_short" },
  max_length: { words: "Length should be at most", sign: "<=", type: "too_long" },
  min_value: { words: "Input should be greater than or equal to", sign: ">=", type: "greater_than_equal" },
  max_value: { words: "Input should be less than or equal to", sign: "<=", type: "less_than_equal" },
  gt_value: { words: "Input should be greater than", sign: ">", type: "greater_than" },
};

function describe(issue: v.BaseIssue<unknown>, field: string): FieldProblem {
  if (issue.type === "strict_object" || issue.type === "object" || issue.type === "loose_object") {
    if (issue.expected === "never") return { field, message: "Unknown argument field.", type: "extra_forbidden" };
    if (issue.received === "undefined") return { field, message: "Field required", type: "missing" };
    return { field, message: `Input should be an object (received ${issue.received})`, type: "object_type" };
  }
  const simple = simpleIssues[issue.type];
  if (simple) return { field, message: `${simple.words(issue.expected)} (received ${issue.received})`, type: simple.type };
  const bound = boundIssues[issue.type];
  if (bound) {
    const limit = String(issue.expected).replace(bound.sign, "");
    return { field, message: `${bound.words} ${limit} (received ${issue.received})`, type: bound.type };
  }
  return { field, message: issue.message, type: issue.type };
}

export function invalidArgumentsFromIssues(subject: string, issues: readonly v.BaseIssue<unknown>[]): FlameoxError {
  return invalidArguments(subject, fieldProblems(issues));
}
