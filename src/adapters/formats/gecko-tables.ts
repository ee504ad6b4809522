/**
 * The tables of a Firefox Profiler thread, in either layout the profiles use: the Gecko profile's
 * `{schema: {column: index}, data: [[…], …]}` rows, or the processed profile's column arrays
 * (`{column: […], length}`). And how one frame is named in each.
 */

export type GeckoTable = { length: number; get(row: number, column: string): unknown };

const emptyTable: GeckoTable = { length: 0, get: () => undefined };

export function geckoTable(value: unknown): GeckoTable {
  if (!value || typeof value !== "object") return emptyTable;
  const record = value as Record<string, unknown>;
  if (record.schema && typeof record.schema === "object" && Array.isArray(record.data)) {
    const schema = record.schema as Record<string, unknown>;
    const rows = record.data as unknown[];
    return {
      length: rows.length,
      get(row, column) {
        const index = schema[column];
        const values = rows[row];
        return typeof index === "number" && Array.isArray(values) ? values[index] : undefined;
      },
    };
  }
  // The rows are what the columns hold: a `length` field claiming more is not believed.
  let length = 0;
  for (const column of Object.values(record)) if (Array.isArray(column)) length = Math.max(length, column.length);
  return {
    length,
    get(row, column) {
      const values = record[column];
      return Array.isArray(values) ? values[row] : undefined;
    },
  };
}

export type GeckoFrame = { function: string; file: string | null; line: number | null; module: string | null };

const maxLocationLength = 4096;
const withPlace = /^(.*) \((.+?):(\d+)(?::\d+)?\)$/;
const withLibrary = /^(.*) \(in (.+)\)$/;

/**
 * A Gecko profile frame's `location`: `name (file:line[:column])` for JavaScript, `name (in lib)`
 * for symbolicated native code, else the label or address itself.
 */
export function parseGeckoLocation(location: string): GeckoFrame {
  // Real locations are short; a longer one is kept as it is rather than searched.
  if (location.length > maxLocationLength) return { function: location, file: null, line: null, module: null };
  const place = withPlace.exec(location);
  if (place) return { function: place[1] as string, file: place[2] as string, line: Number(place[3]), module: null };
  const library = withLibrary.exec(location);
  if (library) return { function: library[1] as string, file: null, line: null, module: library[2] as string };
  return { function: location, file: null, line: null, module: null };
}

/** A thread's sample weights: 1 per sample, or its `weight` column; and their unit. */
export function sampleWeightUnit(weightType: unknown): { unit: "samples" | "ns" | "bytes"; scale: number } {
  if (weightType === "tracing-ms") return { unit: "ns", scale: 1e6 };
  if (weightType === "bytes") return { unit: "bytes", scale: 1 };
  return { unit: "samples", scale: 1 };
}

/** Number or null (the tables use null for "none"). */
export function indexOf(value: unknown): number | null {
  return typeof value === "number" && Number.isInteger(value) && value >= 0 ? value : null;
}
