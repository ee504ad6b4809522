/**
 * Where the text readers get their bytes: a plain file, or a gzip file inflated as a stream whose
 * output is capped (a 1 MB gzip bomb is refused after the cap, not after inflating gigabytes).
 */
import { closeSync, createReadStream, openSync, readSync } from "node:fs";

export interface ByteSource {
  /** Fills `into` from `offset` with up to `length` bytes; 0 at the end. */
  read(into: Buffer, offset: number, length: number): Promise<number>;
  close(): Promise<void>;
  /** Bytes handed out so far. */
  readonly position: number;
}

/** The inflated output passed `limit` bytes. */
export class DecompressedTooLarge extends Error {
  constructor(readonly limit: number) {
    super(`the decompressed data exceeds ${limit} bytes`);
  }
}

/** The compressed data is damaged or cut off. */
export class DecompressionFailed extends Error {}

export function isGzip(head: Uint8Array): boolean {
  return head.length >= 2 && head[0] === 0x1f && head[1] === 0x8b;
}

/** Bytes read between two turns of the event loop. */
const yieldEveryBytes = 1 << 20;

/**
 * Opening, reading and closing are synchronous. A read from the page cache costs about a millisecond
 * per 4 MB; an asynchronous one waits for a thread of the runtime's pool, which has as few threads as
 * cores, one of them held by a bundle writer's streaming COPY for the whole extraction (the reader
 * sat idle a third of the time on a 256 MB trace while the trace_events pipe was written through that
 * pool). After each MiB the event loop gets a turn, as an asynchronous read gave it: the bundle
 * writer's DuckDB instance finishes loading, and a server sees a cancellation.
 */
class FileSource implements ByteSource {
  position = 0;
  private sinceYield = 0;
  private closed = false;
  constructor(private readonly handle: number) {}
  async read(into: Buffer, offset: number, length: number): Promise<number> {
    const bytesRead = readSync(this.handle, into, offset, length, null);
    this.position += bytesRead;
    this.sinceYield += bytesRead;
    if (this.sinceYield >= yieldEveryBytes || bytesRead === 0) {
      this.sinceYield = 0;
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
    return bytesRead;
  }
  async close(): Promise<void> {
    // Once only: the descriptor's number may already belong to another file.
    if (this.closed) return;
    this.closed = true;
    closeSync(this.handle);
  }
}

/** Pulls inflated chunks from a gunzip stream, one at a time, so memory stays at one chunk. */
class GunzipSource implements ByteSource {
  position = 0;
  private readonly iterator: AsyncIterator<Buffer>;
  private pending: Buffer | null = null;
  private readonly input: ReturnType<typeof createReadStream>;

  constructor(
    path: string,
    private readonly limit: number,
    createGunzip: typeof import("node:zlib").createGunzip,
  ) {
    this.input = createReadStream(path, { highWaterMark: 1 << 20 });
    const gunzip = createGunzip({ chunkSize: 1 << 20 });
    this.input.on("error", (error) => gunzip.destroy(error));
    this.iterator = this.input.pipe(gunzip)[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  }

  async read(into: Buffer, offset: number, length: number): Promise<number> {
    if (!this.pending || this.pending.length === 0) {
      let next: IteratorResult<Buffer>;
      try {
        next = await this.iterator.next();
      } catch (error) {
        throw new DecompressionFailed(`gzip data is damaged or cut off: ${error instanceof Error ? error.message : String(error)}`);
      }
      if (next.done) return 0;
      this.pending = next.value;
    }
    const chunk = this.pending as Buffer;
    const taken = Math.min(length, chunk.length);
    chunk.copy(into, offset, 0, taken);
    this.pending = chunk.subarray(taken);
    this.position += taken;
    if (this.position > this.limit) {
      await this.close();
      throw new DecompressedTooLarge(this.limit);
    }
    return taken;
  }

  async close(): Promise<void> {
    this.input.destroy();
    await this.iterator.return?.();
  }
}

/** Opens a file for streaming reads, inflating gzip data (detected by its magic bytes) up to `maxInflatedBytes`. */
export async function openByteSource(path: string, options: { maxInflatedBytes: number }): Promise<ByteSource> {
  // node:zlib loads only for a gzip file: at start it would cost every process several ms.
  const handle = openSync(path, "r");
  let gzip: boolean;
  try {
    const head = Buffer.alloc(2);
    gzip = isGzip(head.subarray(0, readSync(handle, head, 0, 2, 0)));
  } catch (error) {
    closeSync(handle);
    throw error;
  }
  if (!gzip) return new FileSource(handle);
  closeSync(handle);
  return new GunzipSource(path, options.maxInflatedBytes, (await import("node:zlib")).createGunzip);
}

/** Reads a whole source into memory, refusing more than `maxBytes`. */
export async function readAllBytes(path: string, options: { maxInflatedBytes: number }): Promise<Uint8Array> {
  const source = await openByteSource(path, options);
  const parts: Buffer[] = [];
  let total = 0;
  try {
    for (;;) {
      const chunk = Buffer.allocUnsafe(1 << 20);
      const read = await source.read(chunk, 0, chunk.length);
      if (read === 0) break;
      parts.push(read === chunk.length ? chunk : chunk.subarray(0, read));
      total += read;
    }
  } finally {
    await source.close();
  }
  const joined = new Uint8Array(total);
  let at = 0;
  for (const part of parts) {
    joined.set(part, at);
    at += part.length;
  }
  return joined;
}
