/**
 * Writes buffers to a pipe from a thread of its own. A blocking write to a full pipe holds its
 * thread until the reader takes the bytes; done through node:fs's asynchronous write, that thread
 * is one of the runtime's shared pool, which has as few threads as cores (two here). A bundle
 * writer's streaming COPY already holds one of them for the whole extraction, so every other
 * asynchronous file operation of the process (a gzip inflater feeding the extractor, another
 * request of the server) queued behind a write that waited for DuckDB. The writer thread receives
 * each buffer by transfer (no copy) and hands it back once written, for reuse.
 */

/** The writer thread: one message per buffer, written in order; each is answered with the buffer. */
const workerSource = `
const { writeSync } = require("node:fs");
self.onmessage = (event) => {
  const { handle, buffer, length } = event.data;
  const bytes = new Uint8Array(buffer, 0, length);
  let error = null;
  try {
    let written = 0;
    while (written < length) written += writeSync(handle, bytes, written, length - written);
  } catch (failure) {
    error = String((failure && failure.code) || failure);
  }
  postMessage({ buffer, length, error }, [buffer]);
};
`;

let workerUrl: string | undefined;

type Answer = { buffer: ArrayBuffer; length: number; error: string | null };

/** The bytes of one pipe, written in order by a thread of its own. */
export class PipeWriter {
  private readonly worker: Worker;
  private queuedBytes = 0;
  private queuedWrites = 0;
  private waiters: (() => void)[] = [];
  /** The first failed write (the pipe's reader went away, say); later writes are dropped. */
  failure: unknown;
  /** Buffers written, to be reused by the caller. */
  readonly spare: Buffer[] = [];

  constructor(
    private readonly handle: number,
    private readonly maxSpare: number,
  ) {
    workerUrl ??= URL.createObjectURL(new Blob([workerSource], { type: "application/javascript" }));
    this.worker = new Worker(workerUrl);
    // The thread never keeps the process alive: every caller awaits its writes before exiting.
    this.worker.unref();
    this.worker.onmessage = (event: MessageEvent<Answer>) => {
      const { buffer, length, error } = event.data;
      if (error !== null && this.failure === undefined) this.failure = new Error(`writing to the pipe failed: ${error}`);
      if (this.spare.length < this.maxSpare) this.spare.push(Buffer.from(buffer));
      this.settle(length);
    };
    this.worker.onerror = (event: ErrorEvent) => {
      this.failure ??= new Error(`the pipe writer thread failed: ${event.message}`);
      // No answer will come for what is queued.
      this.settle(this.queuedBytes, this.queuedWrites);
    };
  }

  /** Bytes handed over and not yet written. */
  get pendingBytes(): number {
    return this.queuedBytes;
  }

  /**
   * Queues the first `length` bytes of `owner`, whose storage moves to the writer thread: the caller
   * must not touch `owner` again (a written buffer comes back through `spare`).
   */
  write(owner: Buffer, length: number): void {
    if (this.failure !== undefined || length === 0) return;
    let storage = owner.buffer as ArrayBuffer;
    if (owner.byteOffset !== 0 || storage.byteLength !== owner.length) {
      // A view into shared storage (the runtime's pool of small buffers) cannot be moved: its bytes go in a copy.
      storage = new ArrayBuffer(length);
      new Uint8Array(storage).set(owner.subarray(0, length));
    }
    this.queuedBytes += length;
    this.queuedWrites += 1;
    this.worker.postMessage({ handle: this.handle, buffer: storage, length }, [storage]);
  }

  /** Resolves once no more than `bytes` are queued (0: everything was written or failed). */
  async below(bytes: number): Promise<void> {
    while (this.queuedWrites > 0 && this.queuedBytes > bytes) await new Promise<void>((resolve) => this.waiters.push(resolve));
  }

  /** Ends the thread; call after `below(0)`, or to give up on what is queued. */
  stop(): void {
    this.worker.terminate();
    this.settle(this.queuedBytes, this.queuedWrites);
  }

  private settle(bytes: number, writes = 1): void {
    this.queuedBytes -= bytes;
    this.queuedWrites -= writes;
    for (const resolve of this.waiters.splice(0)) resolve();
  }
}
