/**
 * The trace_events writer streams into DuckDB while the extractor runs (pipeline the scan
 * and the Parquet conversion): rows are encoded as delimited text (evidence-bundle-encoding.ts) into
 * one buffer and go to a named pipe that a `COPY … TO parquet` reads; until DuckDB has opened the
 * pipe (it loads lazily) they go to a head file, which is replayed into the pipe first. Without
 * named pipes (or when DuckDB was never ready), the head file is converted at finish.
 */
import type { DuckDBConnection, DuckDBInstance } from "@duckdb/node-api";
import { closeSync, constants, openSync, readSync, rmSync, writeSync } from "node:fs";
import { join } from "node:path";
import type { TraceEventRow } from "../domain/evidence.ts";
import { decodedSelect, delimitedSource, escapeSql, writeTraceEventLine } from "./evidence-bundle-encoding.ts";
import { PipeWriter } from "./pipe-writer.ts";

/** Bytes buffered before one write. */
export const flushBytes = 4 << 20;
/**
 * Bytes queued for the pipe past which `drain` makes the extractor wait, until half of that is
 * left: waiting for the whole queue left DuckDB with nothing to read while the extractor refilled it.
 */
const maxPendingBytes = 16 << 20;
const maxSpareBuffers = 6;
/**
 * DuckDB's read buffer on the pipe. Its default (32 MB) is twice the queue above, so DuckDB read
 * until the extractor had to wait, then parsed while nothing was written; 4 MB keeps both busy and
 * the peak ~50 MB lower. It must stay above DuckDB's longest line (2 MB).
 */
const pipeReadBytes = 4 << 20;

export function writeBytes(handle: number, bytes: Buffer): void {
  let written = 0;
  while (written < bytes.length) written += writeSync(handle, bytes, written, bytes.length - written);
}

export type Engine = { instance: DuckDBInstance; connection: DuckDBConnection };

/** Streams one bundle's trace_events rows into its Parquet file (see the file comment). */
export class TraceEventsWriter {
  private bytes: Buffer = Buffer.allocUnsafe(flushBytes);
  private used = 0;
  private headHandle: number | undefined;
  private pipeHandle: number | undefined;
  /** Writes the pipe from a thread of its own, once DuckDB reads it. */
  private pipe: PipeWriter | undefined;
  private copy: Promise<void> | undefined;
  private copyFailure: unknown;
  private copySettled = false;
  count = 0;
  /** Bytes written to the head file (staging disk). */
  stagedBytes = 0;

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
    // Encoded row by row into one buffer: joining millions of small strings costs far more.
    let written = writeTraceEventLine(row, this.bytes, this.used);
    if (written < 0) {
      this.flush();
      written = writeTraceEventLine(row, this.bytes, 0);
      while (written < 0) {
        this.bytes = Buffer.allocUnsafe(this.bytes.length * 2);
        written = writeTraceEventLine(row, this.bytes, 0);
      }
    }
    this.used += written;
    this.count += 1;
  }

  private copySql(source: string): string {
    return `COPY (SELECT '${escapeSql(this.context.runId)}' AS run_id, '${escapeSql(this.context.artifactId)}' AS artifact_id, * FROM (${decodedSelect("trace_events", source)}))
      TO '${escapeSql(this.target)}' (FORMAT parquet, COMPRESSION zstd, COMPRESSION_LEVEL 1, ROW_GROUP_SIZE 30000)`;
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
    this.copy = engine.connection.run(this.copySql(delimitedSource("trace_events", this.pipePath, { bufferBytes: pipeReadBytes }))).then(
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
      this.pipe = new PipeWriter(this.pipeHandle, maxSpareBuffers);
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

  /**
   * Hands the encoded rows to the pipe's writer thread, which owns the buffer from then on; the next
   * buffer is one it has written (allocating one per flush piles up memory the GC does not see).
   */
  private sendToPipe(pipe: PipeWriter): void {
    const full = this.bytes;
    const used = this.used;
    const spare = pipe.spare.pop();
    this.bytes = spare && spare.length >= full.length ? spare : Buffer.allocUnsafe(Math.max(flushBytes, full.length));
    this.used = 0;
    pipe.write(full, used);
  }

  flush(): void {
    if (this.used === 0) return;
    this.startCopy();
    if (this.openPipe()) {
      this.sendToPipe(this.pipe as PipeWriter);
    } else this.toHead();
  }

  /** Appends the encoded rows to the head file (staging disk), which DuckDB reads first or at finish. */
  private toHead(): void {
    this.headHandle ??= openSync(this.headPath, "w", 0o600);
    writeBytes(this.headHandle, this.bytes.subarray(0, this.used));
    this.stagedBytes += this.used;
    this.used = 0;
  }

  /** Waits while too much is queued for the pipe, until half of it is left. */
  async drain(): Promise<void> {
    const pipe = this.pipe;
    if (pipe && pipe.pendingBytes > maxPendingBytes) await pipe.below(maxPendingBytes / 2);
  }

  /** Ends the stream and waits for the Parquet file; converts the head file when nothing streamed. */
  async finish(engine: Engine): Promise<void> {
    if (this.pipeHandle === undefined && this.copy && !this.copySettled) {
      // DuckDB is about to open the pipe (or failed): wait for either, never block on open.
      while (!this.copySettled && !this.openPipe()) await Bun.sleep(1);
    }
    if (this.pipeHandle !== undefined) {
      const pipe = this.pipe as PipeWriter;
      try {
        if (this.used > 0) this.sendToPipe(pipe);
        await pipe.below(0);
      } finally {
        pipe.stop();
        closeSync(this.pipeHandle);
        this.pipeHandle = undefined;
      }
      await this.copy;
      if (pipe.failure !== undefined && this.copyFailure === undefined) throw pipe.failure;
      if (this.copyFailure !== undefined) throw this.copyFailure;
    } else {
      if (this.copyFailure !== undefined && this.copyFailure !== "no named pipe") throw this.copyFailure;
      this.toHead();
      closeSync(this.headHandle as number);
      this.headHandle = undefined;
      await engine.connection.run(this.copySql(delimitedSource("trace_events", this.headPath)));
    }
    rmSync(this.headPath, { force: true });
    rmSync(this.pipePath, { force: true });
  }

  /** Closes everything; a COPY still waiting for the pipe gets an empty stream and ends. */
  abandon(): void {
    this.used = 0;
    if (this.headHandle !== undefined) closeSync(this.headHandle);
    this.headHandle = undefined;
    const handle = this.pipeHandle;
    const pipe = this.pipe;
    this.pipeHandle = undefined;
    // Queued writes end first (the descriptor stays theirs until then).
    if (handle !== undefined && pipe !== undefined) {
      void pipe.below(0).then(() => {
        pipe.stop();
        closeSync(handle);
      });
    }
  }

  /** Resolves once no DuckDB thread can be left waiting on the pipe. */
  async release(): Promise<void> {
    await this.pipe?.below(0);
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
