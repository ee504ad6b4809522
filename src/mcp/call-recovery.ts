import * as v from "valibot";
import { type FlameoxError, manualRecovery, withRecovery } from "../domain/errors.ts";
import type { ToolDefinition } from "./define-tool.ts";
import { log } from "./log.ts";

/**
 * Recoveries a model can follow verbatim. Two things only the transport knows: which tool was called
 * with which arguments (so a malformed or stale call can name the same tool with arguments that work),
 * and which tools exist with which input schemas (so a hint is never a call that cannot succeed).
 */

/** Tools whose fields are each optional but which need at least one of them: dropping all is no recovery. */
const needsSomeArgument = new Set(["freeze_run_set", "analyze_scaling"]);

const optionalTypes = new Set(["optional", "nullish", "exact_optional", "undefinedable"]);

/**
 * For INVALID_ARGUMENTS from schema validation, QUERY_BUDGET_EXCEEDED and STALE_CURSOR without a better
 * hint: the same tool with the offending optional fields (or the cursor) left out, so their defaults
 * apply. Nothing is proposed when a required field is wrong or the corrected call would not validate.
 */
export function withCorrectedCall(error: FlameoxError, tool: ToolDefinition, rawArguments: unknown): FlameoxError {
  if (error.recovery.next_tool !== null) return error;
  if (!["INVALID_ARGUMENTS", "QUERY_BUDGET_EXCEEDED", "STALE_CURSOR"].includes(error.code)) return error;
  const given = isRecord(rawArguments) ? rawArguments : {};
  const entries = (tool.input as { entries?: Record<string, { type: string }> }).entries ?? {};
  const offending = new Set<string>();
  if (error.code === "STALE_CURSOR") offending.add("cursor");
  else if (error.code === "QUERY_BUDGET_EXCEEDED") offending.add("limit");
  else for (const field of fieldsOf(error)) offending.add(field.split(".")[0]!);
  offending.delete("(root)");
  if (offending.size === 0) return error;
  for (const field of offending) {
    const entry = entries[field];
    if (entry && !optionalTypes.has(entry.type)) return error;
  }
  const corrected = Object.fromEntries(Object.entries(given).filter(([key]) => !offending.has(key)));
  if (Object.keys(corrected).length === 0 && needsSomeArgument.has(tool.name)) return error;
  if (!isCallable(tool, corrected)) return error;
  const removed = [...offending].filter((field) => Object.hasOwn(given, field)).sort();
  return withRecovery(error, {
    kind: "correct_arguments",
    next_tool: tool.name,
    safe_to_repeat_same_call: false,
    retry_after_ms: null,
    context: { arguments: corrected, removed_fields: removed },
  });
}

/**
 * Every hint names a tool this server has, with arguments its schema accepts (`{}` when it needs none).
 * A hint that fails this is a defect: it is logged and the recovery becomes a manual step that still
 * names the tool, instead of a call that would fail.
 */
export function withCallableRecovery(error: FlameoxError, tools: Map<string, ToolDefinition>): FlameoxError {
  const next = error.recovery.next_tool;
  if (next === null) return error;
  const target = tools.get(next);
  const given = error.recovery.context?.arguments;
  const args = isRecord(given) ? given : {};
  const supplied = error.recovery.context?.caller_supplies;
  if (target && Array.isArray(supplied) && supplied.length > 0) {
    if (isCallableOnceSupplied(target, args, supplied.map(String))) return error;
  } else if (target && isCallable(target, args)) {
    if (isRecord(given)) return error;
    return withRecovery(error, { ...error.recovery, context: { ...error.recovery.context, arguments: args } });
  }
  log.error(`recovery of ${error.code} names ${next} with arguments it would refuse; reported as a manual step`);
  return withRecovery(error, manualRecovery({ suggested_tool: next }));
}

/**
 * A hint whose next step needs the caller's own content (a workload's argv, a file to import) names those
 * fields in caller_supplies; what it does give must be valid field by field, and together they must cover
 * every required field.
 */
function isCallableOnceSupplied(tool: ToolDefinition, args: Record<string, unknown>, supplied: string[]): boolean {
  const entries = (tool.input as { entries?: Record<string, v.GenericSchema & { type: string }> }).entries;
  if (!entries) return false;
  if ([...Object.keys(args), ...supplied].some((key) => !Object.hasOwn(entries, key))) return false;
  if (Object.entries(args).some(([key, value]) => !v.safeParse(entries[key]!, value).success)) return false;
  return Object.entries(entries).every(([key, entry]) => optionalTypes.has(entry.type) || key in args || supplied.includes(key));
}

function isCallable(tool: ToolDefinition, args: Record<string, unknown>): boolean {
  const entries = (tool.input as { entries?: Record<string, unknown> }).entries;
  if (entries && Object.keys(args).some((key) => !Object.hasOwn(entries, key))) return false;
  return v.safeParse(tool.input, args).success;
}

function fieldsOf(error: FlameoxError): string[] {
  const fields = error.details.fields;
  if (!Array.isArray(fields)) return [];
  return fields.map((field) => (isRecord(field) && typeof field.field === "string" ? field.field : "(root)"));
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}
