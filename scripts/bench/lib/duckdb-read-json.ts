/**
 * Baseline child process for the ingest benchmark: DuckDB reads the unsplit JSON file directly with
 * read_json and writes the flattened records (trace events / samples) to Parquet, as an ingest would.
 * Usage: bun duckdb-read-json.ts <chrome|speedscope> <input.json[.gz]> <output.parquet> <memory_limit> [inflated_bytes]
 * Prints {"rows": N} on success; a DuckDB error propagates (non-zero exit, message on stderr).
 */
import { statSync } from "node:fs";

const [kind, input, output, memoryLimit, inflated] = process.argv.slice(2) as [string, string, string, string, string | undefined];
const duckdb = await import("@duckdb/node-api");
const instance = await duckdb.DuckDBInstance.create(":memory:", { threads: "2", memory_limit: memoryLimit });
const connection = await instance.connect();
const quote = (text: string) => `'${text.replaceAll("'", "''")}'`;
// The whole document is one JSON object: allow an object as large as the (inflated) file (read_json's cap is 4 GiB).
const maximumObjectSize = Math.min(2 ** 32 - 1, Math.ceil(Number(inflated ?? statSync(input).size) * 1.05) + 1024);
const source = `read_json(${quote(input)}, format = 'unstructured', maximum_object_size = ${maximumObjectSize})`;
const query =
  kind === "chrome"
    ? `SELECT unnest(traceEvents, recursive := true) FROM ${source}`
    : `SELECT p.name AS thread, unnest(p.samples) AS stack, unnest(p.weights) AS weight FROM (SELECT unnest(profiles) AS p FROM ${source})`;
const reader = await connection.runAndReadAll(`COPY (${query}) TO ${quote(output)} (FORMAT parquet, COMPRESSION zstd)`);
const rows = reader.getRows()[0]?.[0];
console.log(JSON.stringify({ rows: Number(rows ?? 0) }));
connection.closeSync();
instance.closeSync();
