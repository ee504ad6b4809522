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

/**
 * The engine's version, and proof that it can load, without loading it when this is the compiled binary:
 * its embedded files are extracted on first use and verified (by digest, then by stamp), which is what can
 * go wrong; opening the 70 MB library would add more time than the rest of a light command. Running from
 * source there is no embedded copy, so the installed package is loaded and asked.
 */
export async function duckdbReadiness(): Promise<string> {
  let embedded: typeof import("flameox-embedded-duckdb") | undefined;
  try {
    embedded = await import("flameox-embedded-duckdb");
  } catch {
    return duckdbVersion();
  }
  const { prepareEmbeddedDuckdb } = await import("./duckdb-embedded.ts");
  prepareEmbeddedDuckdb(embedded.embeddedDuckdb);
  return embedded.embeddedDuckdb.engineVersion ?? duckdbVersion();
}
