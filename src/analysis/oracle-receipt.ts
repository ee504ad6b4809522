import { canonicalJson } from "../domain/canonical-json.ts";
import type { OracleReceipt } from "../domain/experiment.ts";

export const maximumReceiptBytes = 64 * 1024;

/** Strict receipt parsing: bounded, one JSON object, a known status. */
export function parseOracleReceipt(bytes: Uint8Array): { receipt: Omit<OracleReceipt, "raw_artifact_id"> } | { error: string } {
  if (bytes.length > maximumReceiptBytes) return { error: `receipt is ${bytes.length} bytes (limit ${maximumReceiptBytes})` };
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
  } catch (error) {
    return { error: `receipt is not one UTF-8 JSON value: ${error instanceof Error ? error.message.slice(0, 120) : "parse error"}` };
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) return { error: "receipt must be a JSON object" };
  const record = value as Record<string, unknown>;
  const status = record.status;
  if (status !== "pass" && status !== "fail" && status !== "inconclusive" && status !== "unsupported")
    return { error: "receipt.status must be pass, fail, inconclusive or unsupported" };
  if (record.case_id !== undefined && (typeof record.case_id !== "string" || record.case_id.length === 0 || record.case_id.length > 200))
    return { error: "receipt.case_id must be a string of 1..200 characters" };
  if (record.reason !== undefined && record.reason !== null && (typeof record.reason !== "string" || record.reason.length > 100))
    return { error: "receipt.reason must be at most 100 characters" };
  try {
    canonicalJson(record.observed ?? null);
    canonicalJson(record.expected ?? null);
  } catch {
    return { error: "receipt.observed/expected must be plain JSON without NaN or Infinity" };
  }
  return {
    receipt: {
      status,
      case_id: (record.case_id as string | undefined) ?? "default",
      reason: (record.reason as string | null | undefined) ?? null,
      expected: record.expected ?? null,
      observed: record.observed ?? null,
    },
  };
}
