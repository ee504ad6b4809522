/** How long operations report progress (MCP progress notifications, CLI stderr lines). */
export type ProgressReporter = (progress: number, total: number, message: string) => Promise<void> | void;

/** Reports step of a fixed total to an optional reporter; long operations share it so none can fail on a notification. */
export function bestEffortProgress(
  progress: ProgressReporter | undefined,
  total: number,
): (step: number, message: string) => Promise<void> {
  return async (step, message) => {
    try {
      await progress?.(step, total, message);
    } catch {
      // Progress is best-effort: a failed notification never changes the result.
    }
  };
}
