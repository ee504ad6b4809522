/**
 * Ctrl-C (or a TERM from a supervisor) during a long-running command aborts the work through its
 * signal, so the service records a cancelled run instead of the process dying mid-write. The work
 * includes printing its result, so the handlers stay until that is done; they are removed afterwards
 * so a later command in the same process gets the default behaviour again.
 */
export async function withInterrupt<Result>(work: (signal: AbortSignal) => Promise<Result>): Promise<Result> {
  const controller = new AbortController();
  const cancel = () => controller.abort();
  process.once("SIGINT", cancel);
  process.once("SIGTERM", cancel);
  try {
    return await work(controller.signal);
  } finally {
    process.off("SIGINT", cancel);
    process.off("SIGTERM", cancel);
  }
}
