import { closeSync, constants, openSync, writeSync } from "node:fs";
import { resolve } from "node:path";
import { executionRefused } from "../domain/errors.ts";
import type { OutputRecord } from "./broker-types.ts";

/**
 * Streams a child's stdout and stderr into files under one shared byte budget. Reading never
 * stops, so the child never blocks on a full pipe; bytes beyond the budget are counted and dropped.
 */

type OutputSink = { descriptor: number; record: OutputRecord; writeError: string | null };

function openOutput(path: string): OutputSink {
  const absolute = resolve(path);
  const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | (constants.O_NOFOLLOW ?? 0);
  let descriptor: number;
  try {
    descriptor = openSync(absolute, flags, 0o600);
  } catch (error) {
    throw executionRefused(`Cannot open the output file ${absolute}: ${error instanceof Error ? error.message : String(error)}.`, {
      remediation: ["Give stdout/stderr paths in an existing, writable directory that are not symbolic links."],
      details: { path: absolute },
      cause: error,
    });
  }
  return { descriptor, record: { path: absolute, bytes_written: 0, bytes_dropped: 0, truncated: false }, writeError: null };
}

function writeFully(sink: OutputSink, bytes: Uint8Array): void {
  let offset = 0;
  while (offset < bytes.byteLength) {
    offset += writeSync(sink.descriptor, bytes, offset, bytes.byteLength - offset);
  }
}

export class OutputPump {
  private readonly stdoutSink: OutputSink;
  private readonly stderrSink: OutputSink;
  private remainingBudget: number;
  private readonly readers: { cancel(): Promise<void> }[] = [];
  private pumps: Promise<void> | null = null;
  private finished = false;

  /** Opens both files (created or truncated, mode 0600, never through a symlink); throws EXECUTION_REFUSED. */
  constructor(paths: { stdoutPath: string; stderrPath: string }, budgetBytes: number) {
    this.remainingBudget = budgetBytes;
    this.stdoutSink = openOutput(paths.stdoutPath);
    try {
      this.stderrSink = openOutput(paths.stderrPath);
    } catch (error) {
      closeSync(this.stdoutSink.descriptor);
      throw error;
    }
  }

  get stdout(): OutputRecord {
    return this.stdoutSink.record;
  }

  get stderr(): OutputRecord {
    return this.stderrSink.record;
  }

  /** True once both pipes reached end of file: every writer, tracked or not, has closed them. */
  get drained(): boolean {
    return this.finished;
  }

  start(stdout: ReadableStream<Uint8Array>, stderr: ReadableStream<Uint8Array>): void {
    this.pumps = Promise.all([this.pump(stdout, this.stdoutSink), this.pump(stderr, this.stderrSink)]).then(() => {
      this.finished = true;
    });
  }

  private async pump(stream: ReadableStream<Uint8Array>, sink: OutputSink): Promise<void> {
    const reader = stream.getReader();
    this.readers.push(reader);
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return;
        this.accept(sink, value);
      }
    } catch (error) {
      sink.writeError ??= `reading the pipe failed: ${error instanceof Error ? error.message : String(error)}`;
    }
  }

  private accept(sink: OutputSink, value: Uint8Array): void {
    const allowed = sink.writeError === null ? Math.min(this.remainingBudget, value.byteLength) : 0;
    if (allowed > 0) {
      try {
        writeFully(sink, allowed === value.byteLength ? value : value.subarray(0, allowed));
        this.remainingBudget -= allowed;
        sink.record.bytes_written += allowed;
      } catch (error) {
        sink.writeError = error instanceof Error ? error.message : String(error);
        sink.record.bytes_dropped += allowed;
      }
    }
    if (allowed < value.byteLength) sink.record.bytes_dropped += value.byteLength - allowed;
  }

  /**
   * Waits up to `ms` for end of file on both pipes; on false some process nobody saw still holds
   * one, and reading is abandoned. The timer is cleared as soon as the pipes drain, so it never
   * keeps flameox alive after the work is done.
   */
  async drain(ms: number): Promise<boolean> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const drained = await Promise.race([
      (this.pumps ?? Promise.resolve()).then(() => true),
      new Promise<boolean>((done) => {
        timer = setTimeout(() => done(false), ms);
      }),
    ]);
    clearTimeout(timer);
    if (!drained) await Promise.all(this.readers.map((reader) => reader.cancel().catch(() => undefined)));
    return drained;
  }

  /** Closes both files and returns what went wrong writing them, as limitations. */
  close(): string[] {
    const limitations: string[] = [];
    for (const sink of [this.stdoutSink, this.stderrSink]) {
      closeSync(sink.descriptor);
      sink.record.truncated = sink.record.bytes_dropped > 0;
      if (sink.writeError !== null) limitations.push(`writing ${sink.record.path} failed: ${sink.writeError}`);
    }
    return limitations;
  }
}
