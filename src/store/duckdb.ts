import type * as DuckdbApi from "@duckdb/node-api";

/**
 * The one entry to DuckDB. Imported lazily so the MCP handshake and light CLI commands never
 * pay for loading the 70 MB native library.
 */
let cached: Promise<typeof DuckdbApi> | undefined;

export function loadDuckdb(): Promise<typeof DuckdbApi> {
  cached ??= import("@duckdb/node-api");
  return cached;
}

export async function duckdbVersion(): Promise<string> {
  const duckdb = await loadDuckdb();
  return duckdb.version();
}
