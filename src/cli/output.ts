import { exitCodeFor, type FlameoxError } from "../domain/errors.ts";
import { failureEnvelope } from "../domain/envelope.ts";
import type { GlobalOptions } from "./global-options.ts";

/**
 * With --json exactly one JSON document goes to stdout (the domain result, or the error
 * envelope); human text otherwise. Diagnostics and progress always go to stderr.
 */
export function emit(options: GlobalOptions, result: unknown, human: () => string): void {
  if (options.json) {
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    return;
  }
  if (options.quiet) return;
  const text = human();
  if (text) process.stdout.write(text.endsWith("\n") ? text : `${text}\n`);
}

export function emitFailure(options: GlobalOptions, error: FlameoxError): number {
  if (options.json) {
    process.stdout.write(`${JSON.stringify(failureEnvelope(error), null, 2)}\n`);
  } else {
    const lines = [`${error.code}: ${error.message}`];
    if (error.runId) lines.push(`  run_id: ${error.runId}`);
    for (const remedy of error.remediation) lines.push(`  ${remedy}`);
    process.stderr.write(`${lines.join("\n")}\n`);
  }
  return exitCodeFor(error.code);
}

/** Key/value lines for a record, in the given key order (all keys by default); nested values as compact JSON. */
export function renderKeyValues<Row extends object>(record: Row, keys?: readonly (keyof Row & string)[]): string {
  return (keys ?? (Object.keys(record) as (keyof Row & string)[]))
    .map((key) => {
      const value: unknown = record[key];
      return `${key}: ${typeof value === "string" ? value : JSON.stringify(value)}`;
    })
    .join("\n");
}

/** An aligned text table of the given columns of each row. */
export function renderTable<Row extends object>(rows: readonly Row[], columns: readonly (keyof Row & string)[]): string {
  if (rows.length === 0) return "(none)";
  const cells = rows.map((row) => columns.map((column) => formatCell(row[column])));
  const widths = columns.map((column, index) => Math.max(column.length, ...cells.map((row) => row[index]!.length)));
  const line = (values: string[]) =>
    values
      .map((value, index) => value.padEnd(widths[index]!))
      .join("  ")
      .trimEnd();
  return [line([...columns]), ...cells.map(line)].join("\n");
}

function formatCell(value: unknown): string {
  if (value === null || value === undefined) return "-";
  if (typeof value === "number") return Number.isInteger(value) ? String(value) : value.toFixed(3);
  if (typeof value === "string") return value.length > 80 ? `${value.slice(0, 77)}...` : value;
  return JSON.stringify(value);
}
