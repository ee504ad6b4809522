import { describe, expect, test } from "bun:test";
import { closeSync, write, writeFileSync } from "node:fs";
import { join } from "node:path";
import { openByteSource } from "../../../../src/adapters/formats/byte-source.ts";
import { seededBytes } from "../../../support/bytes.ts";
import { drainPipes, namedPipe } from "../../../support/named-pipes.ts";
import { temporaryFolder } from "../../../support/temporary-folders.ts";

async function readAll(path: string, chunkBytes: number): Promise<Buffer> {
  const source = await openByteSource(path, { maxInflatedBytes: 1 << 30 });
  const parts: Buffer[] = [];
  try {
    for (;;) {
      const chunk = Buffer.allocUnsafe(chunkBytes);
      const read = await source.read(chunk, 0, chunk.length);
      if (read === 0) break;
      parts.push(chunk.subarray(0, read));
    }
  } finally {
    await source.close();
  }
  return Buffer.concat(parts);
}

describe("file byte source", () => {
  test("reads a file whole while every thread of the runtime's pool waits on a full pipe", async () => {
    const folder = temporaryFolder("byte-source");
    const path = join(folder, "input.bin");
    const expected = seededBytes(3 << 20);
    writeFileSync(path, expected);
    // Asynchronous writes to pipes nobody reads: each holds a pool thread until its pipe is drained.
    // A read that went through the pool would wait behind them (as it waited behind the trace_events
    // pipe's writes to DuckDB); more of them than the pool has threads on any machine this runs on.
    const pipes = Array.from({ length: 16 }, (_, index) => {
      const pipe = namedPipe(folder, `pipe-${index}`);
      const written = new Promise<void>((resolve) => write(pipe.write, Buffer.alloc(1 << 20), 0, 1 << 20, null, () => resolve()));
      return { ...pipe, written };
    });
    expect((await readAll(path, 1 << 20)).equals(expected)).toBe(true);
    // Release the pool: drain the pipes until every write has ended.
    await drainPipes(
      pipes.map((pipe) => pipe.read),
      Promise.all(pipes.map((pipe) => pipe.written)),
    );
    for (const pipe of pipes) {
      closeSync(pipe.write);
      closeSync(pipe.read);
    }
  });

  test("gives the event loop a turn after each MiB it reads", async () => {
    const folder = temporaryFolder("byte-source");
    const path = join(folder, "input.bin");
    writeFileSync(path, seededBytes(8 << 20));
    let turns = 0;
    let reading = true;
    const tick = () => {
      turns += 1;
      if (reading) setImmediate(tick);
    };
    setImmediate(tick);
    const read = await readAll(path, 1 << 20);
    reading = false;
    expect(read.length).toBe(8 << 20);
    // One turn per MiB (and one at the end); synchronous reads with no turn between them would give none.
    expect(turns).toBeGreaterThanOrEqual(8);
  });
});
