import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readdirSync, renameSync, rmSync, statSync, writeSync } from "node:fs";
import { join } from "node:path";
import type { EvidenceSink, EvidenceTable, FrameRow, MeasurementRow, ObservationRow, StackRow, TraceEventRow } from "../domain/evidence.ts";
import { FlameoxError } from "../domain/errors.ts";
import { loadDuckdb } from "./duckdb.ts";
import { duckdbColumnsLiteral, evidenceTables } from "./evidence-schema.ts";
import { syncDirectory } from "./atomic-file.ts";
import type { Workspace } from "./workspace.ts";

/** Buffered NDJSON writer: rows stream to disk, never one big array in memory. */
class NdjsonWriter {
  private handle: number | undefined;
  private buffer: string[] = [];
  private bufferedBytes = 0;
  count = 0;
  constructor(private readonly path: string) {}

  write(row: unknown): void {
    const line = `${JSON.stringify(row)}\n`;
    this.buffer.push(line);
    this.bufferedBytes += line.length;
    this.count += 1;
    if (this.bufferedBytes > 1 << 20) this.flush();
  }

  flush(): void {
    if (this.buffer.length === 0) return;
    this.handle ??= openSync(this.path, "w", 0o600);
    writeSync(this.handle, this.buffer.join(""));
    this.buffer = [];
    this.bufferedBytes = 0;
  }

  close(): void {
    this.flush();
    if (this.handle !== undefined) closeSync(this.handle);
    this.handle = undefined;
  }
}

/**
 * Collects one extraction's rows in staging, turns them into Parquet through DuckDB, and moves the
 * finished folder into evidence/. Nothing is visible until the caller registers the bundle in
 * SQLite; an abandoned bundle stays in staging and is never read.
 */
export class EvidenceBundleWriter implements EvidenceSink {
  readonly bundleId: string;
  private readonly stagingFolder: string;
  private readonly writers = new Map<EvidenceTable, NdjsonWriter>();
  private readonly seenFrames = new Set<string>();

  constructor(
    private readonly workspace: Workspace,
    private readonly context: { runId: string; artifactId: string },
  ) {
    this.bundleId = `bundle-${crypto.randomUUID()}`;
    this.stagingFolder = workspace.path("staging", this.bundleId);
    mkdirSync(this.stagingFolder, { recursive: true });
  }

  private writer(table: EvidenceTable): NdjsonWriter {
    let writer = this.writers.get(table);
    if (!writer) {
      writer = new NdjsonWriter(join(this.stagingFolder, `${table}.ndjson`));
      this.writers.set(table, writer);
    }
    return writer;
  }

  frame(row: FrameRow): void {
    if (this.seenFrames.has(row.frame_key)) return;
    this.seenFrames.add(row.frame_key);
    this.writer("frames").write(row);
  }

  stack(row: StackRow): void {
    this.writer("stacks").write({ run_id: this.context.runId, artifact_id: this.context.artifactId, ...row });
  }

  traceEvent(row: TraceEventRow): void {
    this.writer("trace_events").write({ run_id: this.context.runId, artifact_id: this.context.artifactId, ...row });
  }

  measurement(row: MeasurementRow): void {
    this.writer("measurements").write({ run_id: this.context.runId, artifact_id: this.context.artifactId, ...row });
  }

  observation(row: ObservationRow): void {
    this.writer("observations").write({ run_id: this.context.runId, artifact_id: this.context.artifactId, ...row });
  }

  rowCounts(): Record<string, number> {
    const counts: Record<string, number> = {};
    for (const [table, writer] of this.writers) counts[table] = writer.count;
    return counts;
  }

  /** NDJSON → Parquet (typed columns), fsync, then one rename into evidence/. */
  async finish(): Promise<{ bundleId: string; tables: Record<string, number>; folder: string }> {
    for (const writer of this.writers.values()) writer.close();
    const duckdb = await loadDuckdb();
    const instance = await duckdb.DuckDBInstance.create(":memory:", { threads: "2" });
    const connection = await instance.connect();
    try {
      for (const table of evidenceTables) {
        const writer = this.writers.get(table);
        if (!writer || writer.count === 0) continue;
        const source = join(this.stagingFolder, `${table}.ndjson`);
        const target = join(this.stagingFolder, `${table}.parquet`);
        await connection.run(
          `COPY (SELECT * FROM read_json('${escapeSql(source)}', format = 'newline_delimited', columns = ${duckdbColumnsLiteral(table)}, maximum_object_size = 67108864))
           TO '${escapeSql(target)}' (FORMAT parquet, COMPRESSION zstd)`,
        );
        rmSync(source);
        fsyncFile(target);
      }
    } catch (error) {
      throw new FlameoxError({
        code: "EVIDENCE_SCHEMA_MISMATCH",
        message: `Writing evidence Parquet failed: ${error instanceof Error ? error.message : String(error)}`.slice(0, 1000),
        remediation: ["Report this extractor failure; the native artifact is kept and can be extracted again."],
        cause: error,
      });
    } finally {
      connection.closeSync();
      instance.closeSync();
    }
    syncDirectory(this.stagingFolder);
    const folder = this.workspace.path("evidence", this.bundleId);
    renameSync(this.stagingFolder, folder);
    syncDirectory(this.workspace.path("evidence"));
    return { bundleId: this.bundleId, tables: this.rowCounts(), folder };
  }

  abandon(): void {
    for (const writer of this.writers.values()) {
      try {
        writer.close();
      } catch {
        // Already closed or never opened.
      }
    }
    rmSync(this.stagingFolder, { recursive: true, force: true });
  }
}

function fsyncFile(path: string): void {
  const handle = openSync(path, "r");
  try {
    fsyncSync(handle);
  } finally {
    closeSync(handle);
  }
}

export function escapeSql(value: string): string {
  return value.replaceAll("'", "''");
}

/** Parquet files of a published bundle, by table. */
export function bundleFiles(workspace: Workspace, bundleId: string): Partial<Record<EvidenceTable, string>> {
  const folder = workspace.path("evidence", bundleId);
  const files: Partial<Record<EvidenceTable, string>> = {};
  if (!existsSync(folder)) return files;
  for (const name of readdirSync(folder)) {
    if (!name.endsWith(".parquet")) continue;
    const table = name.slice(0, -".parquet".length) as EvidenceTable;
    if (evidenceTables.includes(table) && statSync(join(folder, name)).isFile()) files[table] = join(folder, name);
  }
  return files;
}
