/**
 * Reference child process for the ingest benchmark: DuckDB's share of a trace import on its own. The
 * trace_events rows a flameox import wrote (its Parquet file) are staged again by flameox's own writer
 * into a file, then converted by the writer's own `COPY … TO parquet` on an engine made as import makes
 * it (one thread, 256 MB), from that file instead of the pipe. Only the conversion is timed: it is what
 * no extractor can take off DuckDB, so it bounds trace ingest from below on any number of cores.
 * Usage: bun trace-conversion-floor.ts <trace_events.parquet> <scratch folder>
 * Prints {"rows", "staged_mb", "conversion_wall_s", "conversion_cpu_s"}.
 */
import { join } from "node:path";
import type { TraceEventRow } from "../../../src/domain/evidence.ts";
import { delimitedLayouts } from "../../../src/store/evidence-bundle-encoding.ts";
import { retireBundleEngine, takeBundleEngine } from "../../../src/store/evidence-bundle-engines.ts";
import { TraceEventsWriter } from "../../../src/store/evidence-bundle-trace-events.ts";

const [source, scratch] = process.argv.slice(2) as [string, string];
const duckdb = await import("@duckdb/node-api");
const reading = await duckdb.DuckDBInstance.create(":memory:", { threads: "1" });
const connection = await reading.connect();
// The staged columns, in the order the writer stages them.
const columns = delimitedLayouts.trace_events.columns;
const result = await connection.stream(
  `SELECT ${columns.join(", ")} FROM read_parquet('${source.replaceAll("'", "''")}') ORDER BY event_id`,
);
// No engine while rows are written, so they are staged in the writer's head file and converted at finish.
const writer = new TraceEventsWriter(
  scratch,
  join(scratch, "trace_events.parquet"),
  { runId: "run", artifactId: "artifact" },
  () => undefined,
);
for (;;) {
  const chunk = await result.fetchChunk();
  if (!chunk || chunk.rowCount === 0) break;
  for (const values of chunk.getRows()) {
    // BIGINT columns arrive as bigint; a row holds numbers.
    const row = Object.fromEntries(
      columns.map((column, index) => [column, typeof values[index] === "bigint" ? Number(values[index]) : values[index]]),
    );
    writer.write(row as TraceEventRow);
  }
}
connection.closeSync();
reading.closeSync();
const engine = await takeBundleEngine();
const started = performance.now();
const before = process.cpuUsage();
await writer.finish(engine);
const cpu = process.cpuUsage(before);
const wall = performance.now() - started;
retireBundleEngine(engine, join(scratch, "engine"));
console.log(
  JSON.stringify({
    rows: writer.count,
    staged_mb: Math.round((writer.stagedBytes / (1 << 20)) * 10) / 10,
    conversion_wall_s: Math.round(wall / 10) / 100,
    conversion_cpu_s: Math.round((cpu.user + cpu.system) / 1e4) / 100,
  }),
);
