import { closeSync, constants, openSync, statSync, writeSync } from "node:fs";
import { resolve } from "node:path";
import { FlameoxError, invalidArguments } from "../domain/errors.ts";
import { buildChildEnvironment, type RecordedEnvironment } from "./environment-policy.ts";
import { resolveExecutable } from "./executable.ts";
import { findDescriptorHolders, listDescriptorTargets, procAvailable, readBootId, readDescriptorTarget, readProcessStat } from "./proc.ts";
import { ProcessTreeTracker, type TrackedProcess } from "./process-tree.ts";
import { ResourceSampler, type ChildResourceUsage, type ResourceSummary } from "./resource-sampler.ts";

/**
 * The one place flameox creates processes (docs/architecture.md, Execution). argv only, never a shell; the executable is
 * resolved on the child's PATH; the child environment comes from an allowlist; one absolute
 * deadline; a new session and process group; SIGTERM → grace → SIGKILL of the group and of every
 * tracked descendant; stdout/stderr streamed into files under one shared byte budget.
 */

export const defaultOutputBudgetBytes = 16 * 1024 * 1024;
export const defaultGracePeriodMs = 5_000;
export const defaultTrackingIntervalMs = 100;
const maximumDeadlineAheadMs = 7 * 24 * 60 * 60 * 1000;
/** After SIGKILL, how long to wait for the kernel to finish the tree off before judging cleanup. */
const killSettleMs = 2_000;
/** After the tree is gone, how long to wait for the pipes to drain before abandoning them. */
const pipeDrainMs = 2_000;
const maximumRecordedProcesses = 256;

const isWindows = process.platform === "win32";

export type ProcessRequest = {
  /** argv[0] is resolved on the child's PATH (or relative to cwd when it holds a separator). */
  argv: readonly string[];
  /** Must be an existing directory. */
  cwd: string;
  /** Absolute deadline, milliseconds since the epoch, covering spawn to exit. */
  deadline: number;
  /** Files that receive the streams; created (truncated) with mode 0600, never through a symlink. */
  stdoutPath: string;
  stderrPath: string;
  /** One budget shared by stdout and stderr; bytes beyond it are counted and dropped. */
  outputBudgetBytes?: number;
  /** Caller and workload additions to the child environment; refused names throw EXECUTION_REFUSED. */
  environment?: Record<string, string>;
  /** flameox's own variables (collector settings, git isolation); bypass the refusal policy. */
  trustedEnvironment?: Record<string, string>;
  /** Bytes fed to stdin; absent ⇒ stdin is /dev/null. */
  stdin?: Uint8Array | string;
};

export type ProcessProgress = {
  elapsed_ns: number;
  stdout_bytes: number;
  stderr_bytes: number;
  bytes_dropped: number;
  live_processes: number | null;
};

export type ProcessStartInfo = {
  pid: number;
  /** Field 22 of /proc/<pid>/stat; null off Linux. With `boot_id` it names the process for a lease. */
  process_start_time: string | null;
  boot_id: string | null;
  started_at: string;
};

export type ProcessOptions = {
  signal?: AbortSignal;
  /** SIGTERM → SIGKILL grace, default 5000 ms. */
  gracePeriodMs?: number;
  /** How often the process tree is rescanned, default 100 ms. */
  trackingIntervalMs?: number;
  /** Resource sampling; `false` turns it off. Default: on, 250 ms, no disk path. */
  sampling?: { intervalMs?: number; diskPath?: string | null } | false;
  /** Where inherited variables come from; defaults to this process's environment. */
  parentEnvironment?: Record<string, string | undefined>;
  /** Inherited names (or `PREFIX*`); default `inheritedEnvironmentNames`. */
  inheritEnvironment?: readonly string[];
  /** Extra names (or `PREFIX*`) whose values are recorded; credential-like names never are. */
  recordEnvironment?: readonly string[];
  /** Called once after spawn, inside the deadline (persist a lease here). A throw stops the run. */
  onStarted?: (info: ProcessStartInfo) => void | Promise<void>;
  onProgress?: (progress: ProcessProgress) => void;
  progressIntervalMs?: number;
};

export type OutputRecord = {
  path: string;
  bytes_written: number;
  bytes_dropped: number;
  truncated: boolean;
};

export type CancellationCause = "timeout" | "caller_cancelled" | "start_callback_failed";

export type ProcessRecord = {
  pid: number;
  start_time: string;
  parent_pid: number;
  process_group_id: number;
  session_id: number;
  alive_after_cleanup: boolean;
};

export type ProcessResult = {
  executable: string;
  pid: number;
  process_start_time: string | null;
  boot_id: string | null;
  started_at: string;
  finished_at: string;
  /** Monotonic, spawn to the root's exit (cleanup afterwards is not counted). */
  wall_time_ns: number;
  exit_code: number | null;
  terminating_signal: string | null;
  timed_out: boolean;
  cancelled: boolean;
  cancellation_cause: CancellationCause | null;
  /** True only when every tracked process (and the process group) was verified gone. */
  cleanup_complete: boolean;
  /** Tracked processes still alive when the root exited on its own; the broker killed them. */
  leftover_processes: number;
  /** Every process seen in the tree (bounded), for audit and for tests' `kill -0`. */
  processes: ProcessRecord[];
  processes_truncated: boolean;
  output_budget_bytes: number;
  stdout: OutputRecord;
  stderr: OutputRecord;
  environment: RecordedEnvironment;
  resources: ResourceSummary | null;
  limitations: string[];
};

type OutputSink = { descriptor: number; record: OutputRecord; writeError: string | null };

function openOutput(path: string): OutputSink {
  const absolute = resolve(path);
  const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | (constants.O_NOFOLLOW ?? 0);
  let descriptor: number;
  try {
    descriptor = openSync(absolute, flags, 0o600);
  } catch (error) {
    throw new FlameoxError({
      code: "EXECUTION_REFUSED",
      message: `Cannot open the output file ${absolute}: ${error instanceof Error ? error.message : String(error)}.`,
      remediation: ["Give stdout/stderr paths in an existing, writable directory that are not symbolic links."],
      details: { path: absolute },
      cause: error,
    });
  }
  return { descriptor, record: { path: absolute, bytes_written: 0, bytes_dropped: 0, truncated: false }, writeError: null };
}

function writeFully(sink: OutputSink, bytes: Uint8Array): void {
  let offset = 0;
  while (offset < bytes.byteLength) {
    offset += writeSync(sink.descriptor, bytes, offset, bytes.byteLength - offset);
  }
}

function validateRequest(request: ProcessRequest): void {
  const problems: { field: string; message: string; type: string }[] = [];
  if (!Array.isArray(request.argv) || request.argv.length === 0) {
    problems.push({ field: "argv", message: "must be a non-empty array of strings", type: "array" });
  } else {
    request.argv.forEach((argument, index) => {
      if (typeof argument !== "string") problems.push({ field: `argv[${index}]`, message: "must be a string", type: "string" });
      else if (argument.includes("\u0000"))
        problems.push({ field: `argv[${index}]`, message: "must not contain a NUL byte", type: "string" });
    });
  }
  if (typeof request.cwd !== "string" || request.cwd.length === 0)
    problems.push({ field: "cwd", message: "must be a directory path", type: "string" });
  if (typeof request.deadline !== "number" || !Number.isFinite(request.deadline)) {
    problems.push({ field: "deadline", message: "must be milliseconds since the epoch", type: "number" });
  } else if (request.deadline - Date.now() > maximumDeadlineAheadMs) {
    problems.push({ field: "deadline", message: "must be at most 7 days ahead", type: "number" });
  }
  const budget = request.outputBudgetBytes;
  if (budget !== undefined && (!Number.isSafeInteger(budget) || budget < 0)) {
    problems.push({ field: "outputBudgetBytes", message: "must be a non-negative integer", type: "number" });
  }
  if (problems.length > 0) throw invalidArguments("runProcess", problems);
}

function checkWorkingDirectory(cwd: string): string {
  const absolute = resolve(cwd);
  let isDirectory = false;
  try {
    isDirectory = statSync(absolute).isDirectory();
  } catch {
    isDirectory = false;
  }
  if (!isDirectory) {
    throw new FlameoxError({
      code: "EXECUTION_REFUSED",
      message: `The working directory ${absolute} does not exist or is not a directory.`,
      remediation: ["Create the directory or point cwd at an existing one."],
      details: { cwd: absolute },
    });
  }
  return absolute;
}

function sendSignal(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {
    // ESRCH (already gone) and EPERM (not ours any more) both mean there is nothing to signal.
  }
}

/** True when some process is in the group (zombies included, so only a hint off Linux). */
function processGroupExists(groupId: number): boolean {
  if (isWindows) return false;
  try {
    process.kill(-groupId, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * The child's fd 1 and 2 targets when they are its own pipes. A target this process also holds is
 * refused: it would mean the child's descriptors were not yet replaced, and hunting holders of
 * flameox's own stdout would reach unrelated processes.
 */
function childPipeTargets(pid: number): Set<string> {
  const targets = new Set<string>();
  if (!procAvailable()) return targets;
  const own = new Set(listDescriptorTargets(process.pid));
  for (const descriptor of [1, 2]) {
    const target = readDescriptorTarget(pid, descriptor);
    if (target !== null && /^(pipe|socket):\[\d+\]$/.test(target) && !own.has(target)) targets.add(target);
  }
  return targets;
}

const sleep = (ms: number): Promise<void> => new Promise((done) => setTimeout(done, ms));

/** Runs one process to completion under the broker's policy. Timeouts and cancellation are results, not throws. */
export async function runProcess(request: ProcessRequest, options: ProcessOptions = {}): Promise<ProcessResult> {
  validateRequest(request);
  if (options.signal?.aborted) {
    throw new FlameoxError({
      code: "PROCESS_CANCELLED",
      message: "The run was cancelled before the process started.",
      remediation: ["Start the run again when ready."],
    });
  }
  if (request.deadline <= Date.now()) {
    throw new FlameoxError({
      code: "PROCESS_TIMEOUT",
      message: "The deadline passed before the process could start.",
      remediation: ["Allow a later deadline."],
      retryable: true,
    });
  }
  const cwd = checkWorkingDirectory(request.cwd);
  const child = buildChildEnvironment({
    parentEnvironment: options.parentEnvironment,
    inherit: options.inheritEnvironment,
    environment: request.environment,
    trustedEnvironment: request.trustedEnvironment,
    record: options.recordEnvironment,
  });
  const [name, ...rest] = request.argv as [string, ...string[]];
  const executable = resolveExecutable(name, child.environment.PATH, cwd);
  const gracePeriodMs = Math.max(0, options.gracePeriodMs ?? defaultGracePeriodMs);
  const trackingIntervalMs = Math.max(10, options.trackingIntervalMs ?? defaultTrackingIntervalMs);
  const outputBudgetBytes = request.outputBudgetBytes ?? defaultOutputBudgetBytes;
  const limitations: string[] = [];

  const stdoutSink = openOutput(request.stdoutPath);
  let stderrSink: OutputSink;
  try {
    stderrSink = openOutput(request.stderrPath);
  } catch (error) {
    closeSync(stdoutSink.descriptor);
    throw error;
  }

  let subprocess: Bun.Subprocess<Uint8Array | "ignore", "pipe", "pipe">;
  const startedAt = new Date();
  const startedNs = process.hrtime.bigint();
  try {
    subprocess = Bun.spawn([executable, ...rest], {
      cwd,
      env: child.environment,
      stdin:
        request.stdin === undefined
          ? "ignore"
          : typeof request.stdin === "string"
            ? new TextEncoder().encode(request.stdin)
            : request.stdin,
      stdout: "pipe",
      stderr: "pipe",
      // setsid(): a new session and process group, so the whole group can be signalled at once.
      detached: !isWindows,
    });
  } catch (error) {
    closeSync(stdoutSink.descriptor);
    closeSync(stderrSink.descriptor);
    throw new FlameoxError({
      code: "PROCESS_FAILED",
      message: `Could not start ${executable}: ${error instanceof Error ? error.message : String(error)}.`,
      remediation: ["Check that the executable can run on this machine (permissions, interpreter line, mount options)."],
      details: { executable },
      cause: error,
    });
  }

  const pid = subprocess.pid;
  // The identities of the child's stdout/stderr (Bun uses socket pairs), read first, while the root
  // surely lives, so a daemon that escaped tracking but kept them can be found at cleanup.
  const pipeTargets = childPipeTargets(pid);
  const tracker = new ProcessTreeTracker(pid);
  tracker.refresh();
  const processStartTime = readProcessStat(pid)?.startTime ?? null;
  const bootId = readBootId();
  if (!tracker.available)
    limitations.push("descendant tracking is unavailable on this platform (no /proc); cleanup relies on the process group only");

  let rootExited = false;
  let exitedNs = 0n;
  const exited = subprocess.exited.then(() => {
    exitedNs = process.hrtime.bigint();
    rootExited = true;
  });

  // Output pumps: read continuously so the child never blocks on a full pipe.
  let remainingBudget = outputBudgetBytes;
  const readers: { cancel(): Promise<void> }[] = [];
  const pump = async (stream: ReadableStream<Uint8Array>, sink: OutputSink): Promise<void> => {
    const reader = stream.getReader();
    readers.push(reader);
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return;
        const allowed = sink.writeError === null ? Math.min(remainingBudget, value.byteLength) : 0;
        if (allowed > 0) {
          try {
            writeFully(sink, allowed === value.byteLength ? value : value.subarray(0, allowed));
            remainingBudget -= allowed;
            sink.record.bytes_written += allowed;
          } catch (error) {
            sink.writeError = error instanceof Error ? error.message : String(error);
            sink.record.bytes_dropped += allowed;
          }
        }
        if (allowed < value.byteLength) sink.record.bytes_dropped += value.byteLength - allowed;
      }
    } catch (error) {
      sink.writeError ??= `reading the pipe failed: ${error instanceof Error ? error.message : String(error)}`;
    }
  };
  let pumpsDone = false;
  const pumps = Promise.all([pump(subprocess.stdout, stdoutSink), pump(subprocess.stderr, stderrSink)]).then(() => {
    pumpsDone = true;
  });

  const sampler =
    options.sampling === false
      ? null
      : new ResourceSampler({
          intervalMs: options.sampling?.intervalMs,
          diskPath: options.sampling?.diskPath ?? null,
          tree: () => tracker.live(),
        }).start();

  let lastProgressNs = 0n;
  const progressIntervalNs = BigInt(Math.max(50, options.progressIntervalMs ?? 1_000)) * 1_000_000n;
  const trackingTimer = setInterval(() => {
    const live = tracker.refresh();
    if (options.onProgress) {
      const now = process.hrtime.bigint();
      if (now - lastProgressNs >= progressIntervalNs) {
        lastProgressNs = now;
        try {
          options.onProgress({
            elapsed_ns: Number(now - startedNs),
            stdout_bytes: stdoutSink.record.bytes_written,
            stderr_bytes: stderrSink.record.bytes_written,
            bytes_dropped: stdoutSink.record.bytes_dropped + stderrSink.record.bytes_dropped,
            live_processes: tracker.available ? live.length : null,
          });
        } catch {
          // A failing progress observer must not disturb the run.
        }
      }
    }
  }, trackingIntervalMs);

  const anyAlive = (): boolean => {
    if (!rootExited) return true;
    if (tracker.available) return tracker.refresh().length > 0;
    return processGroupExists(pid);
  };

  const signalTree = (signal: NodeJS.Signals): void => {
    if (isWindows) {
      if (!rootExited) subprocess.kill(signal);
      return;
    }
    const live = tracker.available ? tracker.refresh() : [];
    // The group first: one syscall reaches every member, including ones not yet scanned.
    const groupMembers = live.some((member) => member.processGroupId === pid);
    if (!rootExited || groupMembers || !tracker.available) sendSignal(-pid, signal);
    for (const member of live) {
      if (ProcessTreeTracker.stillAlive(member)) sendSignal(member.pid, signal);
    }
  };

  const waitUntilGone = async (ms: number): Promise<boolean> => {
    const until = Date.now() + ms;
    for (;;) {
      if (!anyAlive()) return true;
      if (Date.now() >= until) return false;
      await sleep(Math.min(25, Math.max(1, until - Date.now())));
    }
  };

  const terminateTree = async (): Promise<void> => {
    signalTree("SIGTERM");
    if (await waitUntilGone(gracePeriodMs)) return;
    signalTree("SIGKILL");
    if (await waitUntilGone(killSettleMs)) return;
    // Children born during the grace period may have been missed by the first SIGKILL.
    signalTree("SIGKILL");
    await waitUntilGone(killSettleMs);
  };

  const stop: { cause: CancellationCause | null; termination: Promise<void> | null } = { cause: null, termination: null };
  const cancel = (cause: CancellationCause): void => {
    if (stop.cause !== null || rootExited) return;
    stop.cause = cause;
    stop.termination = terminateTree();
  };

  const deadlineTimer = setTimeout(() => cancel("timeout"), Math.max(0, request.deadline - Date.now()));
  const onAbort = (): void => cancel("caller_cancelled");
  options.signal?.addEventListener("abort", onAbort, { once: true });

  let startError: unknown = null;
  if (options.onStarted) {
    try {
      await options.onStarted({ pid, process_start_time: processStartTime, boot_id: bootId, started_at: startedAt.toISOString() });
    } catch (error) {
      startError = error;
      cancel("start_callback_failed");
    }
  }

  await exited;
  clearTimeout(deadlineTimer);
  options.signal?.removeEventListener("abort", onAbort);
  if (stop.termination !== null) await stop.termination;

  // The root is gone; whatever of its tree survives is left over and is cleaned up the same way.
  let leftoverProcesses = 0;
  if (tracker.available) {
    const survivors = tracker.refresh();
    leftoverProcesses = stop.cause === null ? survivors.length : 0;
    if (survivors.length > 0) await terminateTree();
  } else if (processGroupExists(pid)) {
    await terminateTree();
  }
  if (tracker.available && !pumpsDone && pipeTargets.size > 0) {
    const adopted = tracker.adopt(findDescriptorHolders(pipeTargets));
    if (adopted > 0) {
      if (stop.cause === null) leftoverProcesses += adopted;
      limitations.push(`${adopted} process(es) escaped tree tracking but held the output pipes; they were found by pipe and killed`);
      await terminateTree();
    }
  }
  clearInterval(trackingTimer);

  let cleanupComplete: boolean;
  if (isWindows) {
    cleanupComplete = false;
    limitations.push("cleanup of descendants cannot be verified on Windows");
  } else if (tracker.available) {
    const survivors = tracker.refresh();
    cleanupComplete = survivors.length === 0 && !tracker.overflow;
    if (tracker.overflow) limitations.push("more processes appeared than the tracker keeps; cleanup could not be proven");
  } else {
    cleanupComplete = !processGroupExists(pid);
  }

  // With every writer gone the pipes reach end of file; a process we could not see may still hold one.
  // The timer is cleared as soon as the pipes drain, so it never keeps flameox alive after the work is done.
  let drainTimer: ReturnType<typeof setTimeout> | undefined;
  const drained = await Promise.race([
    pumps.then(() => true),
    new Promise<boolean>((resolve) => {
      drainTimer = setTimeout(() => resolve(false), pipeDrainMs);
    }),
  ]);
  clearTimeout(drainTimer);
  if (!drained) {
    // Some process we never saw still holds a pipe: cleanup is provably incomplete.
    cleanupComplete = false;
    limitations.push("an output pipe was still held open after cleanup by an untracked process; reading was abandoned");
    await Promise.all(readers.map((reader) => reader.cancel().catch(() => undefined)));
  }
  closeSync(stdoutSink.descriptor);
  closeSync(stderrSink.descriptor);
  for (const sink of [stdoutSink, stderrSink]) {
    sink.record.truncated = sink.record.bytes_dropped > 0;
    if (sink.writeError !== null) limitations.push(`writing ${sink.record.path} failed: ${sink.writeError}`);
  }

  const wallTimeNs = Number(exitedNs - startedNs);
  const usage = subprocess.resourceUsage();
  const childUsage: ChildResourceUsage | null = usage
    ? { userCpuNs: Number(usage.cpuTime.user) * 1000, systemCpuNs: Number(usage.cpuTime.system) * 1000 }
    : null;
  const resources = sampler ? sampler.stop({ wallTimeNs, childUsage }) : null;

  if (startError !== null) throw startError;

  const allProcesses = tracker.all();
  const processes: ProcessRecord[] = allProcesses.slice(0, maximumRecordedProcesses).map((member: TrackedProcess) => ({
    pid: member.pid,
    start_time: member.startTime,
    parent_pid: member.parentPid,
    process_group_id: member.processGroupId,
    session_id: member.sessionId,
    alive_after_cleanup: ProcessTreeTracker.stillAlive(member),
  }));

  return {
    executable,
    pid,
    process_start_time: processStartTime,
    boot_id: bootId,
    started_at: startedAt.toISOString(),
    finished_at: new Date().toISOString(),
    wall_time_ns: wallTimeNs,
    exit_code: subprocess.exitCode,
    terminating_signal: subprocess.signalCode === null || subprocess.signalCode === undefined ? null : String(subprocess.signalCode),
    timed_out: stop.cause === "timeout",
    cancelled: stop.cause === "caller_cancelled" || stop.cause === "start_callback_failed",
    cancellation_cause: stop.cause,
    cleanup_complete: cleanupComplete,
    leftover_processes: leftoverProcesses,
    processes,
    processes_truncated: allProcesses.length > maximumRecordedProcesses,
    output_budget_bytes: outputBudgetBytes,
    stdout: stdoutSink.record,
    stderr: stderrSink.record,
    environment: child.recorded,
    resources,
    limitations,
  };
}

/** True where the broker can follow descendants outside the process group. */
export function descendantTrackingAvailable(): boolean {
  return procAvailable();
}
