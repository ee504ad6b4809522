import type { RecordedEnvironment } from "./environment-policy.ts";
import type { ResourceSummary } from "./resource-sampler.ts";

/** What a caller gives the broker and what it gets back. */

/** Where the broker reads time for its deadline; tests inject one they advance by hand. */
export type BrokerClock = {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Calls `callback` once, when `now()` reaches `at`; returns a function that cancels it. */
  at(at: number, callback: () => void): () => void;
};

export const systemClock: BrokerClock = {
  now: () => Date.now(),
  at: (at, callback) => {
    const timer = setTimeout(callback, Math.max(0, at - Date.now()));
    return () => clearTimeout(timer);
  },
};

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
  /** The deadline's clock; the system clock by default. */
  clock?: BrokerClock;
  /**
   * `cgroup: false` skips the run cgroup even where one could be made, leaving the subreaper and
   * /proc tracking (tests use it to exercise that path on hosts that delegate cgroups).
   */
  containment?: { cgroup?: boolean };
};

export type OutputRecord = {
  path: string;
  bytes_written: number;
  bytes_dropped: number;
  truncated: boolean;
  /** The stream's last bytes (at most `outputTailBytes`, beyond the budget too) as text, secrets redacted. */
  tail: string;
  /** True when `tail` is the whole stream. */
  tail_complete: boolean;
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
  /**
   * True only when it was verified that no process of the run is left: the run cgroup is empty, or
   * (with this process as child subreaper) no tracked, reparented or marked process lives. False,
   * with a limitation saying why, wherever that cannot be verified.
   */
  cleanup_complete: boolean;
  /** How descendants were contained: a cgroup of the run's own, the subreaper, or /proc tracking alone. */
  descendant_containment: "cgroup" | "subreaper" | "tracking_only";
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
