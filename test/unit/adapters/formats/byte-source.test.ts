import { describe, expect, test } from "bun:test";
import { closeSync, constants, openSync, readSync, write, writeFileSync } from "node:fs";
import { join } from "node:path";
import { openByteSource } from "../../../../src/adapters/formats/byte-source.ts";
import { temporaryFolder } from "../../../support/temporary-folders.ts";

function patterned(length: number): Buffer {
  const bytes = Buffer.allocUnsafe(length);
  for (let index = 0; index < length; index++) bytes[index] = (index * 7 + 3) & 0xff;
  return bytes;
}

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
    const expected = patterned(3 << 20);
    writeFileSync(path, expected);
    // Asynchronous writes to pipes nobody reads: each holds a pool thread until its pipe is drained.
    // A read that went through the pool would wait behind them (as it waited behind the trace_events
    // pipe's writes to DuckDB); more of them than the pool has threads on any machine this runs on.
    const pipes = Array.from({ length: 16 }, (_, index) => {
      const pipePath = join(folder, `pipe-${index}`);
      expect(Bun.spawnSync(["mkfifo", "-m", "600", pipePath]).success).toBe(true);
      const read = openSync(pipePath, constants.O_RDONLY | constants.O_NONBLOCK);
      const writeEnd = openSync(pipePath, constants.O_WRONLY);
      const written = new Promise<void>((resolve) => write(writeEnd, Buffer.alloc(1 << 20), 0, 1 << 20, null, () => resolve()));
      return { read, writeEnd, written };
    });
    expect((await readAll(path, 1 << 20)).equals(expected)).toBe(true);
    // Release the pool: drain the pipes, all of them in turn (the pool writes only some at a time),
    // until every write has ended.
    let ended = 0;
    for (const pipe of pipes) void pipe.written.then(() => ended++);
    const sink = Buffer.allocUnsafe(1 << 16);
    while (ended < pipes.length) {
      for (const pipe of pipes) {
        try {
          readSync(pipe.read, sink, 0, sink.length, null);
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== "EAGAIN") throw error;
        }
      }
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
    for (const pipe of pipes) {
      closeSync(pipe.writeEnd);
      closeSync(pipe.read);
    }
  });

  test("gives the event loop a turn after each MiB it reads", async () => {
    const folder = temporaryFolder("byte-source");
    const path = join(folder, "input.bin");
    writeFileSync(path, patterned(8 << 20));
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
