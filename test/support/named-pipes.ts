/**
 * Named pipes for tests of code that writes to pipes: the read end is open without blocking and not
 * read from, so a blocking write of more than the pipe holds waits until the test drains it.
 */
import { expect } from "bun:test";
import { constants, openSync, readSync } from "node:fs";
import { join } from "node:path";

/** A named pipe in `folder`: its read end (non-blocking) and its write end (blocking). */
export function namedPipe(folder: string, name: string): { read: number; write: number } {
  const path = join(folder, name);
  expect(Bun.spawnSync(["mkfifo", "-m", "600", path]).success).toBe(true);
  const read = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  return { read, write: openSync(path, constants.O_WRONLY) };
}

/**
 * Reads every pipe in turn, a turn of the event loop between rounds, until `settled` has resolved and
 * a round finds them all empty: the bytes read from each. All are drained together, since the writers
 * behind them may be served only some at a time.
 */
export async function drainPipes(readEnds: readonly number[], settled: Promise<unknown>): Promise<Buffer[]> {
  const parts: Buffer[][] = readEnds.map(() => []);
  let done = false;
  void settled.then(() => {
    done = true;
  });
  for (;;) {
    const finishing = done;
    let readAny = false;
    for (const [index, handle] of readEnds.entries()) {
      const chunk = Buffer.allocUnsafe(1 << 16);
      let read = 0;
      try {
        read = readSync(handle, chunk, 0, chunk.length, null);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EAGAIN") throw error;
      }
      if (read > 0) {
        (parts[index] as Buffer[]).push(chunk.subarray(0, read));
        readAny = true;
      }
    }
    if (finishing && !readAny) return parts.map((chunks) => Buffer.concat(chunks));
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
}
