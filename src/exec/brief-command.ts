import { couldNotStart, prepareRequest } from "./broker-request.ts";
import { systemClock } from "./broker-types.ts";
import { registerBriefRoot } from "./containment.ts";
import { processGroupExists, sendSignal } from "./tree-terminator.ts";

/**
 * Brief identity commands (git, an interpreter's version probe): the broker's rules (argv only, the
 * executable resolved on the child's PATH, the allowlisted child environment, one absolute deadline,
 * a new session and process group, SIGTERM → grace → SIGKILL of that group, a byte budget) without
 * what a workload needs and a probe does not: no run cgroup, no /proc tree tracking, no resource
 * sampling, no files. They run while a collector runs, so each costs only its spawn. The group is
 * killed once the command exits, so nothing it started in its group outlives it.
 */

export type BriefOutcome = {
  exit_code: number | null;
  terminating_signal: string | null;
  timed_out: boolean;
  cancelled: boolean;
  /** The command printed more than the budget; it was stopped and its output is incomplete. */
  truncated: boolean;
  /**
   * The command exited in time, but a process it started outside its group kept its output open, so
   * reading stopped at the deadline and the output may be incomplete (not a timeout of the command).
   */
  output_abandoned: boolean;
};

export type BriefResult = { outcome: BriefOutcome; stdout: Buffer; stderr: Buffer };

export type BriefCommandOptions = {
  cwd: string;
  /** Absolute, milliseconds since the epoch, covering spawn to exit. */
  deadline: number;
  /** One budget for stdout and stderr together. */
  outputBudgetBytes: number;
  trustedEnvironment?: Record<string, string>;
  parentEnvironment?: Record<string, string | undefined>;
  signal?: AbortSignal;
  gracePeriodMs?: number;
};

const isWindows = process.platform === "win32";

/** Windows has no process groups; there the command itself is signalled. */
function signalGroup(pid: number, signal: NodeJS.Signals): void {
  sendSignal(isWindows ? pid : -pid, signal);
}

/**
 * Reads a stream into memory while `take` allows; past it the rest is read and dropped, so the writer
 * never blocks. `cancel` gives up on a pipe that something outside the group still holds open.
 */
function collect(stream: ReadableStream<Uint8Array>, take: (bytes: number) => number): { read: Promise<Buffer>; cancel: () => void } {
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  const read = (async () => {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return Buffer.concat(chunks);
      const allowed = take(value.byteLength);
      if (allowed > 0) chunks.push(allowed === value.byteLength ? value : value.subarray(0, allowed));
    }
  })();
  return { read: read.catch(() => Buffer.concat(chunks)), cancel: () => void reader.cancel().catch(() => undefined) };
}

/** Runs one brief command to completion. Timeouts and cancellation are outcomes, not throws; a refused request throws as the broker does. */
export async function runBriefCommand(argv: string[], options: BriefCommandOptions): Promise<BriefResult> {
  const prepared = prepareRequest(
    { argv, cwd: options.cwd, deadline: options.deadline, stdoutPath: "", stderrPath: "", trustedEnvironment: options.trustedEnvironment },
    { parentEnvironment: options.parentEnvironment, signal: options.signal },
    systemClock,
  );
  let child: Bun.Subprocess<"ignore", "pipe", "pipe">;
  try {
    child = Bun.spawn([prepared.executable, ...prepared.argv], {
      cwd: prepared.cwd,
      env: prepared.child.environment,
      stdin: "ignore",
      stdout: "pipe",
      stderr: "pipe",
      detached: !isWindows,
    });
  } catch (error) {
    throw couldNotStart(prepared.executable, error);
  }
  const pid = child.pid;
  // Known as no run's before any await, so a run's tracker never mistakes it for an orphan of its own.
  const forget = registerBriefRoot(pid);
  let stop: "timeout" | "cancelled" | "truncated" | "abandoned" | null = null;
  let killTimer: ReturnType<typeof setTimeout> | undefined;
  const end = (cause: NonNullable<typeof stop>): void => {
    if (stop !== null) return;
    stop = cause;
    signalGroup(pid, "SIGTERM");
    killTimer = setTimeout(() => signalGroup(pid, "SIGKILL"), options.gracePeriodMs ?? 1_000);
  };
  const deadlineTimer = setTimeout(() => end("timeout"), Math.max(0, options.deadline - Date.now()));
  const onAbort = (): void => end("cancelled");
  options.signal?.addEventListener("abort", onAbort, { once: true });
  let budget = options.outputBudgetBytes;
  const take = (bytes: number): number => {
    const allowed = Math.min(bytes, budget);
    budget -= allowed;
    if (allowed < bytes) end("truncated");
    return allowed;
  };
  const streams = [collect(child.stdout, take), collect(child.stderr, take)] as const;
  let readingTimer: ReturnType<typeof setTimeout> | undefined;
  try {
    await child.exited;
    // The command ended in time; from here only its output can still be waited for.
    clearTimeout(deadlineTimer);
    // Whatever the command left in its group goes now; then the pipes close.
    if (!isWindows && processGroupExists(pid)) signalGroup(pid, "SIGKILL");
    // A pipe held by a process that left the group never closes: it is abandoned at the deadline.
    readingTimer = setTimeout(
      () => {
        end("abandoned");
        for (const stream of streams) stream.cancel();
      },
      Math.max(0, options.deadline - Date.now()),
    );
    const [stdout, stderr] = await Promise.all([streams[0].read, streams[1].read]);
    const signal = child.signalCode;
    return {
      outcome: {
        exit_code: child.exitCode,
        terminating_signal: signal === null || signal === undefined ? null : String(signal),
        timed_out: stop === "timeout",
        cancelled: stop === "cancelled",
        truncated: stop === "truncated",
        output_abandoned: stop === "abandoned",
      },
      stdout,
      stderr,
    };
  } finally {
    clearTimeout(deadlineTimer);
    clearTimeout(killTimer);
    clearTimeout(readingTimer);
    forget();
    options.signal?.removeEventListener("abort", onAbort);
  }
}
