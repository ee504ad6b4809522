import type { DuckDBConnection, DuckDBInstance } from "@duckdb/node-api";
import {
  closeSync,
  constants,
  existsSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
  writeSync,
} from "node:fs";
import { write } from "node:fs";
import { promisify } from "node:util";
import { join } from "node:path";
import type { EvidenceSink, EvidenceTable, FrameRow, MeasurementRow, ObservationRow, StackRow, TraceEventRow } from "../domain/evidence.ts";
import { FlameoxError } from "../domain/errors.ts";
import { loadDuckdb } from "./duckdb.ts";
import { duckdbColumnsLiteral, evidenceColumns, evidenceTables } from "./evidence-schema.ts";
import { syncDirectory } from "./atomic-file.ts";
import type { Workspace } from "./workspace.ts";

/** Bytes buffered per table before one write syscall. */
const flushBytes = 4 << 20;
/** Bytes queued for the trace_events pipe before `drain` makes the extractor wait. */
const maxPendingBytes = 32 << 20;

/**
 * Buffered NDJSON writer: rows stream to disk, never one big array in memory. `run_id` and
 * `artifact_id` are the same on every row, so they are not written; the Parquet conversion adds them.
 * Null members are left out (read_json with explicit columns reads a missing key as NULL).
 */
class NdjsonWriter {
  private handle: number | undefined;
  private buffer = "";
  count = 0;
  constructor(private readonly path: string) {}

  write(row: Record<string, unknown>): void {
    let line = "{";
    let first = true;
    for (const key in row) {
      const value = row[key];
      if (value === null || value === undefined) continue;
      const text = JSON.stringify(value);
      if (text === undefined) continue;
      line += first ? `"${key}":${text}` : `,"${key}":${text}`;
      first = false;
    }
    this.buffer += `${line}}\n`;
    this.count += 1;
    if (this.buffer.length > flushBytes) this.flush();
  }

  flush(): void {
    if (this.buffer.length === 0) return;
    this.handle ??= openSync(this.path, "w", 0o600);
    writeAll(this.handle, this.buffer);
    this.buffer = "";
  }

  close(): void {
    this.flush();
    if (this.handle !== undefined) closeSync(this.handle);
    this.handle = undefined;
  }

  source(table: EvidenceTable): string {
    return `read_json('${escapeSql(this.path)}', format = 'newline_delimited', columns = ${duckdbColumnsLiteral(table)}, maximum_object_size = 67108864)`;
  }
}

const writeAsync = promisify(write) as (
  handle: number,
  buffer: Buffer,
  offset: number,
  length: number,
) => Promise<{ bytesWritten: number }>;

function writeAll(handle: number, text: string): void {
  writeBytes(handle, Buffer.from(text));
}

function writeBytes(handle: number, bytes: Buffer): void {
  let written = 0;
  while (written < bytes.length) written += writeSync(handle, bytes, written, bytes.length - written);
}

/*
 * trace_events is by far the biggest table (millions of rows), so it is written as delimited text,
 * which DuckDB reads several times faster and in far less memory than NDJSON, and which needs no
 * JSON escaping of the (JSON) args text. Fields are separated by U+001F and rows end with "\n"; the
 * quote character U+001E never occurs. NULL is U+0002. A string that is empty or holds any of
 * "\n", "\r", U+001E, U+001F, U+0002 or U+0003 is written as U+0003 followed by its JSON text (which
 * escapes every control character) and decoded in SQL, so every string survives exactly.
 */
const fieldSeparator = "\u001f";
const nullField = "\u0002";
const encodedMarker = "\u0003";
const specialCharacters = /[\n\r\u0001-\u0003\u001e\u001f]/;
const traceEventColumns = [
  "event_id",
  "parent_id",
  "depth",
  "name",
  "category",
  "ts_ns",
  "dur_ns",
  "pid",
  "tid",
  "args",
  "correlation",
  "device",
  "stream",
  "phase",
] as const;
const traceEventTextColumns = ["name", "category", "pid", "tid", "args", "correlation", "device", "stream", "phase"] as const;

function integerField(value: number | null): string {
  if (value === null || !Number.isFinite(value)) return nullField;
  if (Number.isSafeInteger(value)) return String(value);
  return BigInt(Math.round(value)).toString();
}

function textField(value: string | null): string {
  if (value === null) return nullField;
  if (value === "" || specialCharacters.test(value)) return `${encodedMarker}${JSON.stringify(value)}`;
  return value;
}

function traceEventLine(row: TraceEventRow): string {
  const { name, category, pid, tid, args, correlation, device, stream, phase } = row;
  // One test over the joined text fields; only rows that hit it pay per-field checks.
  const joined = `${name}${category ?? ""}${pid ?? ""}${tid ?? ""}${args ?? ""}${correlation ?? ""}${device ?? ""}${stream ?? ""}${phase}`;
  const plain = name !== "" && phase !== "" && !specialCharacters.test(joined);
  const text = plain
    ? (value: string | null): string => (value === null ? nullField : value === "" ? `${encodedMarker}""` : value)
    : textField;
  return `${integerField(row.event_id)}\u001f${integerField(row.parent_id)}\u001f${integerField(row.depth)}\u001f${text(name)}\u001f${text(category)}\u001f${integerField(
    row.ts_ns,
  )}\u001f${integerField(row.dur_ns)}\u001f${text(pid)}\u001f${text(tid)}\u001f${text(args)}\u001f${text(correlation)}\u001f${text(device)}\u001f${text(stream)}\u001f${text(phase)}\n`;
}

function traceEventsSelect(source: string): string {
  const columns = traceEventColumns.map((column) =>
    (traceEventTextColumns as readonly string[]).includes(column)
      ? `CASE WHEN starts_with(${column}, '${encodedMarker}') THEN json_extract_string(substr(${column}, 2), '$') ELSE ${column} END AS ${column}`
      : column,
  );
  return `SELECT ${columns.join(", ")} FROM ${source}`;
}

function traceEventsCsvSource(path: string): string {
  const columns = `{${traceEventColumns.map((column) => `'${column}': '${evidenceColumns.trace_events[column]}'`).join(", ")}}`;
  return `read_csv('${escapeSql(path)}', delim = '${fieldSeparator}', quote = '\u001e', escape = '\u001e', header = false, auto_detect = false, new_line = '\\n', nullstr = '${nullField}', allow_quoted_nulls = false, columns = ${columns})`;
}

type Engine = { instance: DuckDBInstance; connection: DuckDBConnection };

/**
 * The trace_events writer streams into DuckDB while the extractor runs (pipeline the scan
 * and the Parquet conversion). Rows go to a named pipe that a `COPY … TO parquet` reads; until DuckDB
 * has opened the pipe (it loads lazily) they go to a head file, which is replayed into the pipe
 * first. Without named pipes (or when DuckDB was never ready), the head file is converted at finish.
 */
class TraceEventsWriter {
  private bytes = Buffer.allocUnsafe(flushBytes);
  private used = 0;
  private headHandle: number | undefined;
  private pipeHandle: number | undefined;
  private pending: Promise<void> = Promise.resolve();
  private pendingBytes = 0;
  private writeFailure: unknown;
  private copy: Promise<void> | undefined;
  private copyFailure: unknown;
  private copySettled = false;
  count = 0;

  constructor(
    private readonly folder: string,
    private readonly target: string,
    private readonly context: { runId: string; artifactId: string },
    private readonly engine: () => Engine | undefined,
  ) {}

  private get headPath(): string {
    return join(this.folder, "trace_events.head");
  }

  private get pipePath(): string {
    return join(this.folder, "trace_events.pipe");
  }

  write(row: TraceEventRow): void {
    const line = traceEventLine(row);
    // Encoded row by row into one buffer: joining millions of small strings costs far more.
    if (this.used + line.length * 3 > this.bytes.length) {
      this.flush();
      if (line.length * 3 > this.bytes.length) this.bytes = Buffer.allocUnsafe(line.length * 3);
    }
    this.used += this.bytes.write(line, this.used);
    this.count += 1;
  }

  private copySql(source: string): string {
    return `COPY (SELECT '${escapeSql(this.context.runId)}' AS run_id, '${escapeSql(this.context.artifactId)}' AS artifact_id, * FROM (${traceEventsSelect(source)}))
      TO '${escapeSql(this.target)}' (FORMAT parquet, COMPRESSION zstd)`;
  }

  /** Starts the streaming COPY once DuckDB is loaded; false where named pipes are unavailable. */
  private startCopy(): void {
    if (this.copy || process.platform === "win32") return;
    const engine = this.engine();
    if (!engine) return;
    const made = Bun.spawnSync(["mkfifo", "-m", "600", this.pipePath], { stdout: "ignore", stderr: "ignore" });
    if (!made.success) {
      this.copy = Promise.resolve();
      this.copySettled = true;
      this.copyFailure = "no named pipe";
      return;
    }
    this.copy = engine.connection.run(this.copySql(traceEventsCsvSource(this.pipePath))).then(
      () => {
        this.copySettled = true;
      },
      (error: unknown) => {
        this.copySettled = true;
        this.copyFailure = error ?? new Error("COPY failed");
      },
    );
  }

  /** Opens the pipe for writing once DuckDB reads it, replaying the head file first. */
  private openPipe(): boolean {
    if (this.pipeHandle !== undefined) return true;
    if (!this.copy || this.copySettled) return false;
    let probe: number;
    try {
      probe = openSync(this.pipePath, constants.O_WRONLY | constants.O_NONBLOCK);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENXIO") return false;
      throw error;
    }
    // A reader is there, so a blocking open returns at once; blocking writes give back-pressure.
    try {
      this.pipeHandle = openSync(this.pipePath, constants.O_WRONLY);
    } finally {
      closeSync(probe);
    }
    if (this.headHandle !== undefined) {
      closeSync(this.headHandle);
      this.headHandle = undefined;
      const input = openSync(this.headPath, "r");
      try {
        const chunk = Buffer.allocUnsafe(flushBytes);
        for (;;) {
          const read = readSync(input, chunk, 0, chunk.length, null);
          if (read === 0) break;
          let written = 0;
          while (written < read) written += writeSync(this.pipeHandle, chunk, written, read - written);
        }
      } finally {
        closeSync(input);
      }
      rmSync(this.headPath, { force: true });
    }
    return true;
  }

  /** Takes the encoded rows out of the buffer. */
  private take(): Buffer {
    const taken = this.bytes.subarray(0, this.used);
    this.bytes = Buffer.allocUnsafe(Math.max(flushBytes, this.bytes.length));
    this.used = 0;
    return taken;
  }

  flush(): void {
    if (this.used === 0) return;
    const bytes = this.take();
    this.startCopy();
    if (this.openPipe()) {
      this.writeToPipe(bytes);
    } else {
      this.headHandle ??= openSync(this.headPath, "w", 0o600);
      writeBytes(this.headHandle, bytes);
    }
  }

  /**
   * Pipe writes run off the main thread, one after another, so the extractor keeps producing while
   * DuckDB parses; `drain` gives back-pressure.
   */
  private writeToPipe(bytes: Buffer): void {
    const handle = this.pipeHandle as number;
    this.pendingBytes += bytes.length;
    this.pending = this.pending.then(async () => {
      if (this.writeFailure !== undefined) return;
      try {
        let written = 0;
        while (written < bytes.length) written += (await writeAsync(handle, bytes, written, bytes.length - written)).bytesWritten;
      } catch (error) {
        this.writeFailure = error;
      } finally {
        this.pendingBytes -= bytes.length;
      }
    });
  }

  /** Waits while too much is queued for the pipe. */
  async drain(): Promise<void> {
    if (this.pendingBytes > maxPendingBytes) await this.pending;
  }

  /** Ends the stream and waits for the Parquet file; converts the head file when nothing streamed. */
  async finish(engine: Engine): Promise<void> {
    if (this.pipeHandle === undefined && this.copy && !this.copySettled) {
      // DuckDB is about to open the pipe (or failed): wait for either, never block on open.
      while (!this.copySettled && !this.openPipe()) await Bun.sleep(1);
    }
    if (this.pipeHandle !== undefined) {
      try {
        if (this.used > 0) this.writeToPipe(this.take());
        await this.pending;
      } finally {
        closeSync(this.pipeHandle);
        this.pipeHandle = undefined;
      }
      await this.copy;
      if (this.writeFailure !== undefined && this.copyFailure === undefined) throw this.writeFailure;
      if (this.copyFailure !== undefined) throw this.copyFailure;
    } else {
      if (this.copyFailure !== undefined && this.copyFailure !== "no named pipe") throw this.copyFailure;
      this.headHandle ??= openSync(this.headPath, "w", 0o600);
      writeBytes(this.headHandle, this.take());
      closeSync(this.headHandle);
      this.headHandle = undefined;
      await engine.connection.run(this.copySql(traceEventsCsvSource(this.headPath)));
    }
    rmSync(this.headPath, { force: true });
    rmSync(this.pipePath, { force: true });
  }

  /** Closes everything; a COPY still waiting for the pipe gets an empty stream and ends. */
  abandon(): void {
    this.used = 0;
    if (this.headHandle !== undefined) closeSync(this.headHandle);
    this.headHandle = undefined;
    const pipe = this.pipeHandle;
    this.pipeHandle = undefined;
    // Queued writes end first (the descriptor stays theirs until then).
    if (pipe !== undefined) void this.pending.then(() => closeSync(pipe));
  }

  /** Resolves once no DuckDB thread can be left waiting on the pipe. */
  async release(): Promise<void> {
    await this.pending;
    if (!this.copy) return;
    if (!this.copySettled && this.pipeHandle === undefined) {
      // A reader blocked in open() wakes when a writer comes and goes, then reads an empty stream.
      try {
        closeSync(openSync(this.pipePath, constants.O_RDWR | constants.O_NONBLOCK));
      } catch {
        // The pipe is gone: a later open by DuckDB fails instead of waiting.
      }
    }
    await this.copy;
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
  private readonly writers = new Map<Exclude<EvidenceTable, "trace_events">, NdjsonWriter>();
  private traceEvents: TraceEventsWriter | undefined;
  private readonly seenFrames = new Set<string>();
  private engine: Engine | undefined;
  private readonly engineReady: Promise<Engine>;

  constructor(
    private readonly workspace: Workspace,
    private readonly context: { runId: string; artifactId: string },
  ) {
    this.bundleId = `bundle-${crypto.randomUUID()}`;
    this.stagingFolder = workspace.path("staging", this.bundleId);
    mkdirSync(this.stagingFolder, { recursive: true });
    // DuckDB loads while the extractor runs, so trace_events can stream into it. One thread: the
    // extractor holds the other core, and a second DuckDB thread mostly adds buffered row groups.
    this.engineReady = (async () => {
      const duckdb = await loadDuckdb();
      const instance = await duckdb.DuckDBInstance.create(":memory:", { threads: "1" });
      const connection = await instance.connect();
      return { instance, connection };
    })();
    this.engineReady.then(
      (engine) => {
        this.engine = engine;
      },
      // The failure surfaces where engineReady is awaited; this handler only keeps it from being unhandled meanwhile.
      () => undefined,
    );
  }

  private writer(table: Exclude<EvidenceTable, "trace_events">): NdjsonWriter {
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
    this.writer("stacks").write(row);
  }

  traceEvent(row: TraceEventRow): void {
    this.traceEvents ??= new TraceEventsWriter(
      this.stagingFolder,
      join(this.stagingFolder, "trace_events.parquet"),
      this.context,
      () => this.engine,
    );
    this.traceEvents.write(row);
  }

  /** Back-pressure for streaming extractors: resolves once the trace_events stream has caught up. */
  async drain(): Promise<void> {
    await this.traceEvents?.drain();
  }

  measurement(row: MeasurementRow): void {
    this.writer("measurements").write(row);
  }

  observation(row: ObservationRow): void {
    this.writer("observations").write(row);
  }

  rowCounts(): Record<string, number> {
    const counts: Record<string, number> = {};
    for (const table of evidenceTables) {
      if (table === "trace_events") {
        if (this.traceEvents) counts[table] = this.traceEvents.count;
        continue;
      }
      const writer = this.writers.get(table);
      if (writer) counts[table] = writer.count;
    }
    return counts;
  }

  /** NDJSON/delimited text → Parquet (typed columns), fsync, then one rename into evidence/. */
  async finish(): Promise<{ bundleId: string; tables: Record<string, number>; folder: string }> {
    for (const writer of this.writers.values()) writer.close();
    let engine: Engine;
    try {
      engine = await this.engineReady;
    } catch (error) {
      throw parquetFailed(error);
    }
    const { connection, instance } = engine;
    try {
      // The streaming COPY holds the connection until its pipe ends, so it finishes first.
      if (this.traceEvents && this.traceEvents.count > 0) {
        await this.traceEvents.finish(engine);
        fsyncFile(join(this.stagingFolder, "trace_events.parquet"));
      }
      for (const table of evidenceTables) {
        const target = join(this.stagingFolder, `${table}.parquet`);
        if (table === "trace_events") continue;
        const writer = this.writers.get(table);
        if (!writer || writer.count === 0) continue;
        const columns = Object.keys(evidenceColumns[table]).map((column) =>
          column === "run_id"
            ? `'${escapeSql(this.context.runId)}' AS run_id`
            : column === "artifact_id"
              ? `'${escapeSql(this.context.artifactId)}' AS artifact_id`
              : `"${column}"`,
        );
        await connection.run(
          `COPY (SELECT ${columns.join(", ")} FROM ${writer.source(table)}) TO '${escapeSql(target)}' (FORMAT parquet, COMPRESSION zstd)`,
        );
        rmSync(join(this.stagingFolder, `${table}.ndjson`));
        fsyncFile(target);
      }
    } catch (error) {
      this.traceEvents?.abandon();
      await this.traceEvents?.release();
      throw parquetFailed(error);
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
    const traceEvents = this.traceEvents;
    traceEvents?.abandon();
    const released = traceEvents?.release();
    rmSync(this.stagingFolder, { recursive: true, force: true });
    // Close DuckDB once a streaming COPY has ended.
    void (async () => {
      try {
        await released;
        const engine = await this.engineReady;
        engine.connection.closeSync();
        engine.instance.closeSync();
      } catch {
        // DuckDB never loaded, or was closed by finish.
      }
    })();
  }
}

function parquetFailed(error: unknown): FlameoxError {
  return new FlameoxError({
    code: "EVIDENCE_SCHEMA_MISMATCH",
    message: `Writing evidence Parquet failed: ${error instanceof Error ? error.message : String(error)}`.slice(0, 1000),
    remediation: ["Report this extractor failure; the native artifact is kept and can be extracted again."],
    cause: error,
  });
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
