import { describe, expect, test } from "bun:test";
import { closeSync, openSync, readFileSync, writeFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { PipeWriter } from "../../../src/store/pipe-writer.ts";
import { seededBytes } from "../../support/bytes.ts";
import { drainPipes, namedPipe } from "../../support/named-pipes.ts";
import { temporaryFolder } from "../../support/temporary-folders.ts";

describe("pipe writer", () => {
  test("writes every buffer whole and in order, and hands each one back for reuse", async () => {
    const folder = temporaryFolder("pipe-writer");
    const path = join(folder, "out.bin");
    writeFileSync(path, "");
    const handle = openSync(path, "w");
    const writer = new PipeWriter(handle, 2);
    // The third is a view into part of a larger storage, which cannot be moved: its bytes travel in a copy.
    const buffers = [seededBytes(3 << 20, 1), seededBytes(1 << 20, 2), seededBytes(300, 3).subarray(100), seededBytes(2 << 20, 4)];
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
    const sent = pipes.map((_, index) => seededBytes(1 << 20, index));
    for (const [index, writer] of writers.entries()) writer.write(Buffer.from(sent[index] as Buffer), (sent[index] as Buffer).length);
    expect(await readFile(input, "utf8")).toBe("read while every pipe is full");
    // Each pipe holds far less than 1 MiB, so every writer is still waiting for its reader.
    for (const writer of writers) expect(writer.pendingBytes).toBe(1 << 20);
    const received = await drainPipes(
      pipes.map((pipe) => pipe.read),
      Promise.all(writers.map((writer) => writer.below(0))),
    );
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
    writer.write(seededBytes(1 << 20, 7), 1 << 20);
    writer.write(seededBytes(1 << 20, 8), 1 << 20);
    await writer.below(0);
    writer.stop();
    closeSync(pipe.write);
    expect(String(writer.failure)).toContain("EPIPE");
    expect(writer.pendingBytes).toBe(0);
  });
});
