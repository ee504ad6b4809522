/** How long operations report progress (MCP progress notifications, CLI stderr lines). */
export type ProgressReporter = (progress: number, total: number, message: string) => Promise<void> | void;

/** The named phases of long operations; every progress message of a capture or experiment starts with one. */
export const progressPhases = [
  "planning",
  "warming_up",
  "capturing",
  "validating_artifact",
  "extracting",
  "publishing",
  "analyzing",
  "completed",
] as const;

export type ProgressPhase = (typeof progressPhases)[number];

/**
 * How often a long operation says it is still working. Clients time requests out (the TypeScript SDK
 * after 60 s unless progress resets the clock); five seconds stays inside a 10-second promise on a
 * loaded machine.
 */
export const defaultHeartbeatIntervalMs = 5_000;

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

export type Heartbeat = { report: ProgressReporter; stop(): void };

/**
 * Wraps a reporter so that a long operation keeps talking while nothing else happens: every message gets
 * the elapsed time, and every `intervalMs` without a step the last message is repeated ("still running")
 * with a progress value between that step and half a step further — always increasing, never reaching
 * the next step (steps are at least half a unit apart). Without a reporter it does nothing and starts no
 * timer. `now` is injectable for tests.
 */
export function heartbeatProgress(
  reporter: ProgressReporter | undefined,
  options: { intervalMs?: number; now?: () => number } = {},
): Heartbeat {
  if (!reporter) return { report: () => {}, stop: () => {} };
  const now = options.now ?? Date.now;
  const started = now();
  let step = 0;
  let total = 0;
  let message = "";
  let beats = 0;
  let sent = Number.NEGATIVE_INFINITY;
  const elapsed = () => `${Math.round((now() - started) / 100) / 10} s elapsed`;
  const send = async (value: number, text: string) => {
    // Progress must increase with every notification, even if a caller repeats a step.
    const progress = value > sent ? value : sent + 1e-6;
    sent = progress;
    try {
      await reporter(progress, Math.max(total, progress), text);
    } catch {
      // Best-effort, as every progress report.
    }
  };
  const timer = setInterval(() => {
    if (total === 0) return;
    beats += 1;
    void send(step + 0.5 * (1 - 1 / (beats + 1)), `${message} (still running, ${elapsed()})`);
  }, options.intervalMs ?? defaultHeartbeatIntervalMs);
  timer.unref?.();
  return {
    report: (progress, newTotal, text) => {
      step = progress;
      total = newTotal;
      message = text;
      beats = 0;
      return send(progress, `${text} (${elapsed()})`);
    },
    stop: () => clearInterval(timer),
  };
}
