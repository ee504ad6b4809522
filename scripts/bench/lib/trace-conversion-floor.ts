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
import { retireBundleEngine, takeBundleEngine } from "../../../src/store/evidence-bundle-engines.ts";
import { TraceEventsWriter } from "../../../src/store/evidence-bundle-trace-events.ts";

const [source, scratch] = process.argv.slice(2) as [string, string];
const duckdb = await import("@duckdb/node-api");
const reading = await duckdb.DuckDBInstance.create(":memory:", { threads: "1" });
const connection = await reading.connect();
const columns = "event_id, parent_id, depth, name, category, ts_ns, dur_ns, pid, tid, args, correlation, device, stream, phase";
const result = await connection.stream(`SELECT ${columns} FROM read_parquet('${source.replaceAll("'", "''")}') ORDER BY event_id`);
// No engine while rows are written, so they are staged in the writer's head file and converted at finish.
const writer = new TraceEventsWriter(
  scratch,
  join(scratch, "trace_events.parquet"),
  { runId: "run", artifactId: "artifact" },
  () => undefined,
);
const asNumber = (value: unknown): number | null => (value === null || value === undefined ? null : Number(value));
for (;;) {
  const chunk = await result.fetchChunk();
  if (!chunk || chunk.rowCount === 0) break;
  for (const row of chunk.getRows()) {
    writer.write({
      event_id: Number(row[0]),
      parent_id: asNumber(row[1]),
      depth: Number(row[2]),
      name: row[3] as string,
      category: row[4] as string | null,
      ts_ns: Number(row[5]),
      dur_ns: asNumber(row[6]),
      pid: row[7] as string | null,
      tid: row[8] as string | null,
      args: row[9] as string | null,
      correlation: row[10] as string | null,
      device: row[11] as string | null,
      stream: row[12] as string | null,
      phase: row[13] as string,
    } satisfies TraceEventRow);
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
