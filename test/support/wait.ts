/**
 * Waiting on a condition another process brings about (a file it writes, a state it records). The deadline
 * is generous on purpose: it bounds a hung test, it is not a statement about speed, and a slow loaded
 * machine only makes the wait longer, never the outcome different. The condition is checked before the
 * first pause, so a fast machine does not wait at all.
 */
export const defaultWaitDeadlineMs = 60_000;

export async function waitFor<T>(
  what: string,
  probe: () => T | null | undefined | false | Promise<T | null | undefined | false>,
  options: { deadlineMs?: number; intervalMs?: number } = {},
): Promise<T> {
  const deadline = Date.now() + (options.deadlineMs ?? defaultWaitDeadlineMs);
  for (;;) {
    const value = await probe();
    if (value !== null && value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`Gave up waiting for ${what} after ${options.deadlineMs ?? defaultWaitDeadlineMs} ms.`);
    await Bun.sleep(options.intervalMs ?? 25);
  }
}
