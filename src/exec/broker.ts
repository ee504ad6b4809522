import { couldNotStart, type PreparedRequest, prepareRequest } from "./broker-request.ts";
import {
  type BrokerClock,
  type CancellationCause,
  type ProcessOptions,
  type ProcessRecord,
  type ProcessRequest,
  type ProcessResult,
  systemClock,
} from "./broker-types.ts";
import { RunContainment } from "./containment.ts";
import { runMarkerVariable } from "./environment-scan.ts";
import { OutputPump } from "./output-pump.ts";
import { redactSecrets, secretValues } from "./output-redaction.ts";
import { findDescriptorHolders, listDescriptorTargets, procAvailable, readBootId, readDescriptorTarget, readProcessStat } from "./proc.ts";
import { ProcessTreeTracker } from "./process-tree.ts";
import { type ChildResourceUsage, ResourceSampler } from "./resource-sampler.ts";
import { processGroupExists, TreeTerminator } from "./tree-terminator.ts";

/**
 * The one place flameox creates processes (docs/architecture.md, Execution). argv only, never a
 * shell; the executable is resolved on the child's PATH; the child environment comes from an
 * allowlist; one absolute deadline; a new session and process group; SIGTERM → grace → SIGKILL of
 * everything the run started; output streamed into files under one shared byte budget, its tail
 * kept with secrets redacted. `runProcess` reads as its four phases: spawn → supervise → clean up → report.
 */

export { defaultGracePeriodMs, defaultOutputBudgetBytes, defaultTrackingIntervalMs } from "./broker-request.ts";
export type {
  BrokerClock,
  CancellationCause,
  OutputRecord,
  ProcessOptions,
  ProcessProgress,
  ProcessRecord,
  ProcessRequest,
  ProcessResult,
  ProcessStartInfo,
} from "./broker-types.ts";

/** After the tree is gone, how long to wait for the pipes to drain before abandoning them. */
const pipeDrainMs = 2_000;
const maximumRecordedProcesses = 256;

const isWindows = process.platform === "win32";

type Child = Bun.Subprocess<Uint8Array | "ignore", "pipe", "pipe">;

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

function spawnChild(request: ProcessRequest, prepared: PreparedRequest): Child {
  try {
    return Bun.spawn([prepared.executable, ...prepared.argv], {
      cwd: prepared.cwd,
      env: prepared.child.environment,
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
    throw couldNotStart(prepared.executable, error);
  }
}

/** Runs one process to completion under the broker's policy. Timeouts and cancellation are results, not throws. */
export async function runProcess(request: ProcessRequest, options: ProcessOptions = {}): Promise<ProcessResult> {
  const clock = options.clock ?? systemClock;
  const prepared = prepareRequest(request, options, clock);
  const output = new OutputPump(request, prepared.outputBudgetBytes);
  const containment = await RunContainment.prepare({
    cgroup: options.containment?.cgroup !== false,
    marker: prepared.child.environment[runMarkerVariable] ?? null,
  });
  let child: Child;
  try {
    child = spawnChild(request, prepared);
  } catch (error) {
    output.close();
    containment.release();
    throw error;
  }
  containment.admit(child.pid);
  const run = new Supervisor(child, prepared, output, containment, options, clock);
  try {
    await run.supervise();
    await run.cleanUp();
  } finally {
    containment.release();
  }
  return run.report();
}

/** One spawned run: its tree, timers, cancellation and what cleanup found. */
class Supervisor {
  private readonly startedAt = new Date();
  private readonly startedNs = process.hrtime.bigint();
  private exitedNs = 0n;
  private rootExited = false;
  private readonly exited: Promise<void>;
  private readonly tracker: ProcessTreeTracker;
  private readonly terminator: TreeTerminator;
  private readonly sampler: ResourceSampler | null;
  private readonly pipeTargets: Set<string>;
  private readonly processStartTime: string | null;
  private readonly bootId: string | null;
  private readonly trackingTimer: ReturnType<typeof setInterval>;
  private lastProgressNs = 0n;
  private stopCause: CancellationCause | null = null;
  private termination: Promise<void> | null = null;
  private startError: unknown = null;
  private leftoverProcesses = 0;
  private cleanupComplete = false;
  private readonly limitations: string[] = [];

  constructor(
    private readonly child: Child,
    private readonly prepared: PreparedRequest,
    private readonly output: OutputPump,
    private readonly containment: RunContainment,
    private readonly options: ProcessOptions,
    private readonly clock: BrokerClock,
  ) {
    const pid = child.pid;
    // The identities of the child's stdout/stderr (Bun uses socket pairs), read first, while the root
    // surely lives, so a daemon that escaped tracking but kept them can be found at cleanup.
    this.pipeTargets = childPipeTargets(pid);
    this.tracker = new ProcessTreeTracker(pid, { claim: (stat) => containment.claims(stat) });
    containment.enclose(this.tracker.refresh().map((member) => member.pid));
    this.processStartTime = readProcessStat(pid)?.startTime ?? null;
    this.bootId = readBootId();
    if (!this.tracker.available)
      this.limitations.push("descendant tracking is unavailable on this platform (no /proc); cleanup relies on the process group only");
    this.exited = child.exited.then(() => {
      this.exitedNs = process.hrtime.bigint();
      this.rootExited = true;
    });
    output.start(child.stdout, child.stderr);
    this.sampler =
      options.sampling === false
        ? null
        : new ResourceSampler({
            intervalMs: options.sampling?.intervalMs,
            diskPath: options.sampling?.diskPath ?? null,
            tree: () => this.tracker.live(),
          }).start();
    this.terminator = new TreeTerminator(
      { pid, exited: () => this.rootExited, kill: (signal) => child.kill(signal) },
      this.tracker,
      containment,
      prepared.gracePeriodMs,
    );
    this.trackingTimer = setInterval(() => this.track(), prepared.trackingIntervalMs);
  }

  private track(): void {
    // Contained, an orphan stays in sight (our child, or in the cgroup), so the cheap walk suffices between full scans.
    const live = this.containment.kind === "tracking_only" ? this.tracker.refresh() : this.tracker.follow();
    const observer = this.options.onProgress;
    if (!observer) return;
    const now = process.hrtime.bigint();
    const intervalNs = BigInt(Math.max(50, this.options.progressIntervalMs ?? 1_000)) * 1_000_000n;
    if (now - this.lastProgressNs < intervalNs) return;
    this.lastProgressNs = now;
    try {
      observer({
        elapsed_ns: Number(now - this.startedNs),
        stdout_bytes: this.output.stdout.bytes_written,
        stderr_bytes: this.output.stderr.bytes_written,
        bytes_dropped: this.output.stdout.bytes_dropped + this.output.stderr.bytes_dropped,
        live_processes: this.tracker.available ? live.length : null,
      });
    } catch {
      // A failing progress observer must not disturb the run.
    }
  }

  private cancel(cause: CancellationCause): void {
    if (this.stopCause !== null || this.rootExited) return;
    this.stopCause = cause;
    this.termination = this.terminator.terminate();
  }

  /** From spawn to the root's exit: the deadline, the caller's signal and the start callback can each stop it. */
  async supervise(): Promise<void> {
    const cancelDeadline = this.clock.at(this.prepared.deadline, () => this.cancel("timeout"));
    const onAbort = (): void => this.cancel("caller_cancelled");
    this.options.signal?.addEventListener("abort", onAbort, { once: true });
    if (this.options.onStarted) {
      try {
        await this.options.onStarted({
          pid: this.child.pid,
          process_start_time: this.processStartTime,
          boot_id: this.bootId,
          started_at: this.startedAt.toISOString(),
        });
      } catch (error) {
        this.startError = error;
        this.cancel("start_callback_failed");
      }
    }
    await this.exited;
    cancelDeadline();
    this.options.signal?.removeEventListener("abort", onAbort);
    if (this.termination !== null) await this.termination;
  }

  /** The root is gone; whatever of its run survives is left over and is ended the same way. */
  async cleanUp(): Promise<void> {
    const survivors = this.survivors();
    if (this.stopCause === null) this.leftoverProcesses = survivors;
    if (survivors > 0 || (!this.tracker.available && processGroupExists(this.child.pid))) await this.terminator.terminate();
    await this.adoptStragglers();
    clearInterval(this.trackingTimer);
    this.verify();
    if (!(await this.output.drain(pipeDrainMs))) {
      // Some process we never saw still holds a pipe: cleanup is provably incomplete.
      this.cleanupComplete = false;
      this.limitations.push("an output pipe was still held open after cleanup by an untracked process; reading was abandoned");
    }
    await this.containment.reapOrphans(this.tracker);
    const secrets = secretValues(this.options.parentEnvironment ?? process.env, this.prepared.child.environment);
    this.limitations.push(...this.output.close((text) => redactSecrets(text, secrets)));
  }

  /** Live processes of the run now: tracked ones, plus cgroup members tracking has not seen. */
  private survivors(): number {
    const pids = new Set(this.tracker.refresh().map((member) => member.pid));
    for (const pid of this.containment.cgroup?.members() ?? []) pids.add(pid);
    return pids.size;
  }

  /** Processes found by other means than the tree: holders of the output pipes, carriers of the run marker. */
  private async adoptStragglers(): Promise<void> {
    if (!this.tracker.available) return;
    const sources: { pids: () => number[]; found: string }[] = [
      {
        pids: () => (this.output.drained || this.pipeTargets.size === 0 ? [] : findDescriptorHolders(this.pipeTargets)),
        found: "escaped tree tracking but held the output pipes; they were found by pipe and killed",
      },
      {
        pids: () => this.containment.markedProcesses().map((marked) => marked.pid),
        found: `escaped tree tracking but carried the run's ${runMarkerVariable}; they were found by that marker and killed`,
      },
    ];
    for (const source of sources) {
      const adopted = this.tracker.adopt(source.pids());
      if (adopted === 0) continue;
      if (this.stopCause === null) this.leftoverProcesses += adopted;
      this.limitations.push(`${adopted} process(es) ${source.found}`);
      await this.terminator.terminate();
    }
  }

  /** Decides cleanup_complete from what can be observed now; every reason it cannot be claimed becomes a limitation. */
  private verify(): void {
    if (isWindows) {
      this.limitations.push("cleanup of descendants cannot be verified on Windows");
      return;
    }
    if (!this.tracker.available) {
      this.limitations.push("without /proc, descendants outside the process group cannot be seen; cleanup is unverified");
      return;
    }
    const problems: string[] = [];
    const live = this.tracker.refresh().length;
    if (live > 0) problems.push(`${live} tracked process(es) survived SIGKILL`);
    if (this.tracker.overflow) problems.push("more processes appeared than the tracker keeps; cleanup could not be proven");
    const populated = this.containment.cgroup?.populated();
    if (populated === true) problems.push("the run cgroup still holds processes");
    if (populated === null) problems.push("the run cgroup's state could not be read");
    const marked = this.containment.markedProcesses().length;
    if (marked > 0) problems.push(`${marked} process(es) carrying the run's ${runMarkerVariable} survived`);
    const unattributed = this.containment.kind === "tracking_only" ? 0 : this.containment.unattributedOrphans(this.tracker);
    if (unattributed > 0)
      problems.push(
        `${unattributed} orphaned process(es) reparented to flameox could not be attributed among concurrent runs and were left running`,
      );
    if (this.containment.kind === "tracking_only")
      problems.push(
        "neither a run cgroup nor the child-subreaper flag was available, so a descendant that daemonized between two /proc scans could have escaped unseen; cleanup cannot be verified",
      );
    this.limitations.push(...problems);
    this.cleanupComplete = problems.length === 0;
  }

  report(): ProcessResult {
    const wallTimeNs = Number(this.exitedNs - this.startedNs);
    const usage = this.child.resourceUsage();
    const childUsage: ChildResourceUsage | null = usage
      ? { userCpuNs: Number(usage.cpuTime.user) * 1000, systemCpuNs: Number(usage.cpuTime.system) * 1000 }
      : null;
    // Stopped before anything can throw: a running sampler's timer would keep flameox alive.
    const resources = this.sampler ? this.sampler.stop({ wallTimeNs, childUsage }) : null;
    if (this.startError !== null) throw this.startError;
    const allProcesses = this.tracker.all();
    const processes: ProcessRecord[] = allProcesses.slice(0, maximumRecordedProcesses).map((member) => ({
      pid: member.pid,
      start_time: member.startTime,
      parent_pid: member.parentPid,
      process_group_id: member.processGroupId,
      session_id: member.sessionId,
      alive_after_cleanup: ProcessTreeTracker.stillAlive(member),
    }));
    const signal = this.child.signalCode;
    return {
      executable: this.prepared.executable,
      pid: this.child.pid,
      process_start_time: this.processStartTime,
      boot_id: this.bootId,
      started_at: this.startedAt.toISOString(),
      finished_at: new Date().toISOString(),
      wall_time_ns: wallTimeNs,
      exit_code: this.child.exitCode,
      terminating_signal: signal === null || signal === undefined ? null : String(signal),
      timed_out: this.stopCause === "timeout",
      cancelled: this.stopCause === "caller_cancelled" || this.stopCause === "start_callback_failed",
      cancellation_cause: this.stopCause,
      cleanup_complete: this.cleanupComplete,
      descendant_containment: this.containment.kind,
      leftover_processes: this.leftoverProcesses,
      processes,
      processes_truncated: allProcesses.length > maximumRecordedProcesses,
      output_budget_bytes: this.prepared.outputBudgetBytes,
      stdout: this.output.stdout,
      stderr: this.output.stderr,
      environment: this.prepared.child.recorded,
      resources,
      limitations: [...this.limitations, ...this.containment.limitations],
    };
  }
}

/** True where the broker can follow descendants outside the process group. */
export function descendantTrackingAvailable(): boolean {
  return procAvailable();
}
