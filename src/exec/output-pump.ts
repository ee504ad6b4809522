import { closeSync, constants, openSync, writeSync } from "node:fs";
import { resolve } from "node:path";
import { executionRefused } from "../domain/errors.ts";
import type { OutputRecord } from "./broker-types.ts";

/**
 * Streams a child's stdout and stderr into files under one shared byte budget. Reading never
 * stops, so the child never blocks on a full pipe; bytes beyond the budget are counted and dropped.
 * The last bytes of each stream are also kept in a small ring, budget or not, because what a
 * process printed last (a traceback, a final error) is what explains how it ended.
 */

/** How much of each stream's end is kept in memory for the run's output tail. */
export const outputTailBytes = 16 * 1024;

/** The last `capacity` bytes written to it, in order. */
class TailRing {
  private readonly buffer: Uint8Array;
  private next = 0;
  private length = 0;
  /** Bytes that passed through but no longer fit. */
  overwritten = 0;

  constructor(capacity: number) {
    this.buffer = new Uint8Array(capacity);
  }

  write(bytes: Uint8Array): void {
    const capacity = this.buffer.byteLength;
    const kept = bytes.byteLength > capacity ? bytes.subarray(bytes.byteLength - capacity) : bytes;
    this.overwritten += bytes.byteLength - kept.byteLength;
    for (let offset = 0; offset < kept.byteLength; ) {
      const chunk = Math.min(kept.byteLength - offset, capacity - this.next);
      this.buffer.set(kept.subarray(offset, offset + chunk), this.next);
      this.next = (this.next + chunk) % capacity;
      offset += chunk;
    }
    const overflow = Math.max(0, this.length + kept.byteLength - capacity);
    this.overwritten += overflow;
    this.length = Math.min(capacity, this.length + kept.byteLength);
  }

  bytes(): Uint8Array {
    if (this.length < this.buffer.byteLength) return this.buffer.slice(0, this.length);
    const ordered = new Uint8Array(this.length);
    ordered.set(this.buffer.subarray(this.next), 0);
    ordered.set(this.buffer.subarray(0, this.next), this.buffer.byteLength - this.next);
    return ordered;
  }
}

/** The ring as text; a character cut in half at its start is dropped, not shown as a replacement mark. */
function tailText(ring: TailRing): string {
  const text = new TextDecoder("utf-8", { fatal: false }).decode(ring.bytes());
  return ring.overwritten > 0 ? text.replace(/^\uFFFD+/, "") : text;
}

type OutputSink = { descriptor: number; record: OutputRecord; writeError: string | null; tail: TailRing };

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
  return {
    descriptor,
    record: { path: absolute, bytes_written: 0, bytes_dropped: 0, truncated: false, tail: "", tail_complete: true },
    writeError: null,
    tail: new TailRing(outputTailBytes),
  };
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
    sink.tail.write(value);
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

  /**
   * Closes both files and returns what went wrong writing them, as limitations. Each stream's tail
   * is set here, passed through `redact` first: nothing a child printed leaves exec unredacted.
   */
  close(redact: (text: string) => string = (text) => text): string[] {
    const limitations: string[] = [];
    for (const sink of [this.stdoutSink, this.stderrSink]) {
      closeSync(sink.descriptor);
      sink.record.truncated = sink.record.bytes_dropped > 0;
      sink.record.tail = redact(tailText(sink.tail));
      sink.record.tail_complete = sink.tail.overwritten === 0;
      if (sink.writeError !== null) limitations.push(`writing ${sink.record.path} failed: ${sink.writeError}`);
    }
    return limitations;
  }
}
