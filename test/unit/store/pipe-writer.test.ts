import { describe, expect, test } from "bun:test";
import { closeSync, constants, openSync, readFileSync, readSync, writeFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { PipeWriter } from "../../../src/store/pipe-writer.ts";
import { temporaryFolder } from "../../support/temporary-folders.ts";

function filled(length: number, seed: number): Buffer {
  const bytes = Buffer.allocUnsafe(length);
  for (let index = 0; index < length; index++) bytes[index] = (index * 31 + seed) & 0xff;
  return bytes;
}

/** A named pipe with its read end open (not read from) and its write end open in blocking mode. */
function namedPipe(folder: string, name: string): { read: number; write: number } {
  const path = join(folder, name);
  expect(Bun.spawnSync(["mkfifo", "-m", "600", path]).success).toBe(true);
  const read = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  return { read, write: openSync(path, constants.O_WRONLY) };
}

/** Reads a non-blocking pipe end until `done` resolves and the pipe is empty. */
async function readUntil(handle: number, done: Promise<void>): Promise<Buffer> {
  const parts: Buffer[] = [];
  let finished = false;
  void done.then(() => {
    finished = true;
  });
  for (;;) {
    const chunk = Buffer.allocUnsafe(1 << 16);
    let read = 0;
    try {
      read = readSync(handle, chunk, 0, chunk.length, null);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EAGAIN") throw error;
    }
    if (read > 0) parts.push(chunk.subarray(0, read));
    else if (finished) return Buffer.concat(parts);
    else await new Promise<void>((resolve) => setImmediate(resolve));
  }
}

describe("pipe writer", () => {
  test("writes every buffer whole and in order, and hands each one back for reuse", async () => {
    const folder = temporaryFolder("pipe-writer");
    const path = join(folder, "out.bin");
    writeFileSync(path, "");
    const handle = openSync(path, "w");
    const writer = new PipeWriter(handle, 2);
    // The third is a view into part of a larger storage, which cannot be moved: its bytes travel in a copy.
    const buffers = [filled(3 << 20, 1), filled(1 << 20, 2), filled(300, 3).subarray(100), filled(2 << 20, 4)];
    const expected = Buffer.concat(buffers.map((buffer, index) => buffer.subarray(0, buffer.length - index)));
    for (const [index, buffer] of buffers.entries()) writer.write(buffer, buffer.length - index);
    expect(writer.pendingBytes).toBe(expected.length);
    await writer.below(0);
    writer.stop();
    closeSync(handle);
    expect(writer.failure).toBeUndefined();
    expect(writer.pendingBytes).toBe(0);
    expect(readFileSync(path).equals(expected)).toBe(true);
    // At most two come back, each the whole storage of a buffer that was sent.
    expect(writer.spare.map((buffer) => buffer.length).sort()).toEqual([1 << 20, 3 << 20].sort());
  });

  test("writers blocked on full pipes leave the runtime's thread pool free", async () => {
    const folder = temporaryFolder("pipe-writer");
    const input = join(folder, "input.txt");
    writeFileSync(input, "read while every pipe is full");
    // More blocked writers than the pool has threads on any machine this runs on: written through
    // the pool, they would hold all of its threads and the asynchronous read below would never run.
    const pipes = Array.from({ length: 16 }, (_, index) => namedPipe(folder, `pipe-${index}`));
    const writers = pipes.map((pipe) => new PipeWriter(pipe.write, 1));
    const sent = pipes.map((_, index) => filled(1 << 20, index));
    for (const [index, writer] of writers.entries()) writer.write(Buffer.from(sent[index] as Buffer), (sent[index] as Buffer).length);
    expect(await readFile(input, "utf8")).toBe("read while every pipe is full");
    // Each pipe holds far less than 1 MiB, so every writer is still waiting for its reader.
    for (const writer of writers) expect(writer.pendingBytes).toBe(1 << 20);
    const received = await Promise.all(pipes.map((pipe, index) => readUntil(pipe.read, (writers[index] as PipeWriter).below(0))));
    for (const [index, writer] of writers.entries()) {
      writer.stop();
      expect(writer.failure).toBeUndefined();
      expect(received[index]?.equals(sent[index] as Buffer)).toBe(true);
      closeSync((pipes[index] as { write: number }).write);
      closeSync((pipes[index] as { read: number }).read);
    }
  });

  test("a pipe whose reader is gone fails the write, and what is queued settles", async () => {
    const folder = temporaryFolder("pipe-writer");
    const pipe = namedPipe(folder, "gone");
    closeSync(pipe.read);
    const writer = new PipeWriter(pipe.write, 1);
    writer.write(filled(1 << 20, 7), 1 << 20);
    writer.write(filled(1 << 20, 8), 1 << 20);
    await writer.below(0);
    writer.stop();
    closeSync(pipe.write);
    expect(String(writer.failure)).toContain("EPIPE");
    expect(writer.pendingBytes).toBe(0);
  });
});
