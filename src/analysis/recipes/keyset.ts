import { sqlString } from "../evidence-query.ts";

/** Keyset comparison `(columns) > (values)` with nulls folded so the order is total. */
export function keysetAfter(columns: string[], values: (string | number)[]): string {
  return `(${columns.join(", ")}) > (${values.map((value) => (typeof value === "number" ? String(value) : sqlString(value))).join(", ")})`;
}
