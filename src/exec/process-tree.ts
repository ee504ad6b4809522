import {
  childrenListsAvailable,
  isGoneState,
  procAvailable,
  readChildren,
  readProcessStat,
  readThreadChildren,
  scanProcesses,
  type ProcessStat,
} from "./proc.ts";

/** While following cheaply, a full scan of /proc still runs at least this often. */
const fullScanIntervalMs = 1_000;

/** One process the broker has seen in a workload's tree, named exactly by (pid, start time). */
export type TrackedProcess = {
  pid: number;
  startTime: string;
  parentPid: number;
  processGroupId: number;
  sessionId: number;
  /** Latest CPU times seen; a lower bound of what the process used. */
  userTimeTicks: number;
  systemTimeTicks: number;
  /** False once the process was seen gone (absent, reused pid, or zombie). */
  alive: boolean;
};

/**
 * Follows a workload's process tree by scanning `/proc/*\/stat`: the root, everything whose
 * parent chain leads to a tracked process, everything in the root's process group or session, and
 * whatever `claim` accepts (orphans reparented to this process as child subreaper). Once seen, a
 * process stays tracked by (pid, start time), so a grandchild that called setsid and was
 * reparented is still found and killed. Without a subreaper, a process born and reparented to
 * init between two scans (a fast double fork) escapes the tree; the broker then cannot claim
 * verified cleanup.
 */
export class ProcessTreeTracker {
  readonly rootPid: number;
  readonly available: boolean;
  private readonly tracked = new Map<number, TrackedProcess>();
  private readonly maximumTracked: number;
  private readonly retired: TrackedProcess[] = [];
  private overflowed = false;
  private lastFullScanMs = 0;
  private readonly rootStartTicks: bigint | null;
  private readonly claim: ((stat: ProcessStat) => boolean) | null;

  constructor(rootPid: number, options: { maximumTracked?: number; claim?: (stat: ProcessStat) => boolean } = {}) {
    this.rootPid = rootPid;
    this.claim = options.claim ?? null;
    this.available = procAvailable();
    this.maximumTracked = options.maximumTracked ?? 10_000;
    const root = this.available ? readProcessStat(rootPid) : null;
    this.rootStartTicks = root ? BigInt(root.startTime) : null;
    if (root) this.track(root);
  }

  /** True when more processes appeared than the tracker keeps; cleanup is then not provable. */
  get overflow(): boolean {
    return this.overflowed;
  }

  private track(stat: ProcessStat): void {
    const existing = this.tracked.get(stat.pid);
    if (existing && existing.startTime === stat.startTime) {
      existing.parentPid = stat.parentPid;
      existing.processGroupId = stat.processGroupId;
      existing.sessionId = stat.sessionId;
      existing.userTimeTicks = Math.max(existing.userTimeTicks, stat.userTimeTicks);
      existing.systemTimeTicks = Math.max(existing.systemTimeTicks, stat.systemTimeTicks);
      if (isGoneState(stat.state)) existing.alive = false;
      return;
    }
    if (existing) {
      // The pid was reused: the old process is gone, the new one is a different process.
      existing.alive = false;
      this.retired.push(existing);
    } else if (this.tracked.size >= this.maximumTracked) {
      this.overflowed = true;
      return;
    }
    this.tracked.set(stat.pid, {
      pid: stat.pid,
      startTime: stat.startTime,
      parentPid: stat.parentPid,
      processGroupId: stat.processGroupId,
      sessionId: stat.sessionId,
      userTimeTicks: stat.userTimeTicks,
      systemTimeTicks: stat.systemTimeTicks,
      alive: !isGoneState(stat.state),
    });
  }

  /** True when this exact process (pid and start time) has been tracked. */
  knows(stat: Pick<ProcessStat, "pid" | "startTime">): boolean {
    return this.isTrackedIdentity(stat);
  }

  /** True when the process started no earlier than the root, so it may belong to this run. */
  startedWithinRun(stat: Pick<ProcessStat, "startTime">): boolean {
    return this.startedAfterRoot(stat);
  }

  private isTrackedIdentity(stat: Pick<ProcessStat, "pid" | "startTime">): boolean {
    const known = this.tracked.get(stat.pid);
    return known !== undefined && known.startTime === stat.startTime;
  }

  private startedAfterRoot(stat: Pick<ProcessStat, "startTime">): boolean {
    return this.rootStartTicks === null || BigInt(stat.startTime) >= this.rootStartTicks;
  }

  private belongs(stat: ProcessStat): boolean {
    return stat.processGroupId === this.rootPid || stat.sessionId === this.rootPid || this.claim?.(stat) === true;
  }

  /** One scan of `/proc`; returns the live tracked processes. */
  refresh(): TrackedProcess[] {
    if (!this.available) return [];
    this.lastFullScanMs = Date.now();
    const stats = scanProcesses();
    const byPid = new Map<number, ProcessStat>();
    const childrenOf = new Map<number, ProcessStat[]>();
    for (const stat of stats) {
      byPid.set(stat.pid, stat);
      const siblings = childrenOf.get(stat.parentPid);
      if (siblings) siblings.push(stat);
      else childrenOf.set(stat.parentPid, [stat]);
    }
    const queue: ProcessStat[] = [];
    const visited = new Set<number>();
    const enqueue = (stat: ProcessStat): void => {
      if (visited.has(stat.pid)) return;
      visited.add(stat.pid);
      queue.push(stat);
    };
    for (const stat of stats) {
      if (this.isTrackedIdentity(stat)) enqueue(stat);
      // Group and session ids are not reused while any member lives, so a member that started
      // after the root is ours.
      else if (this.belongs(stat) && this.startedAfterRoot(stat)) enqueue(stat);
    }
    while (queue.length > 0) {
      const stat = queue.shift() as ProcessStat;
      this.track(stat);
      for (const child of childrenOf.get(stat.pid) ?? []) enqueue(child);
    }
    for (const process of this.tracked.values()) {
      if (!process.alive) continue;
      const now = byPid.get(process.pid);
      if (!now || now.startTime !== process.startTime || isGoneState(now.state)) process.alive = false;
    }
    return this.live();
  }

  /**
   * The periodic refresh while a run is contained (a run cgroup or this process as child subreaper, so
   * an orphan cannot leave our sight): instead of every process on the host, reads only the tracked
   * processes, their children lists and this process's own (orphans are reparented to its main
   * thread); a full scan still runs every second and wherever the lists are unavailable. Cleanup
   * decisions use refresh(), never this.
   */
  follow(): TrackedProcess[] {
    if (!this.available) return [];
    if (!childrenListsAvailable() || Date.now() - this.lastFullScanMs >= fullScanIntervalMs) return this.refresh();
    return this.walk();
  }

  /** follow()'s cheap step: the tracked processes, their children lists and this process's children, nothing else. */
  walk(): TrackedProcess[] {
    if (!this.available || !childrenListsAvailable()) return this.refresh();
    const queue: number[] = [];
    for (const process of this.live()) {
      const stat = readProcessStat(process.pid);
      if (!stat || stat.startTime !== process.startTime || isGoneState(stat.state)) {
        process.alive = false;
        continue;
      }
      this.track(stat);
      const children = readChildren(stat.pid);
      // A list too long to read whole: the full scan finds them all.
      if (children === null) return this.refresh();
      queue.push(...children);
    }
    const own = readThreadChildren(globalThis.process.pid, globalThis.process.pid);
    if (own === null) return this.refresh();
    for (const pid of own) {
      if (this.tracked.get(pid)?.alive) continue;
      const stat = readProcessStat(pid);
      if (stat && !isGoneState(stat.state) && this.belongs(stat) && this.startedAfterRoot(stat)) queue.push(pid);
    }
    const visited = new Set<number>();
    while (queue.length > 0) {
      const pid = queue.pop() as number;
      if (visited.has(pid) || this.tracked.get(pid)?.alive) continue;
      visited.add(pid);
      const stat = readProcessStat(pid);
      if (!stat) continue;
      this.track(stat);
      const children = readChildren(pid);
      if (children === null) return this.refresh();
      queue.push(...children);
    }
    return this.live();
  }

  /**
   * Starts tracking processes found another way (e.g. holding the workload's pipes) when they
   * started no earlier than the root; returns how many were adopted.
   */
  adopt(pids: readonly number[]): number {
    let adopted = 0;
    for (const pid of pids) {
      const stat = readProcessStat(pid);
      if (!stat || isGoneState(stat.state) || this.isTrackedIdentity(stat) || !this.startedAfterRoot(stat)) continue;
      this.track(stat);
      adopted += 1;
    }
    return adopted;
  }

  /** Live tracked processes as of the last scan. */
  live(): TrackedProcess[] {
    return [...this.tracked.values()].filter((process) => process.alive);
  }

  /** Every process ever tracked, including ones whose pid was later reused. */
  all(): TrackedProcess[] {
    return [...this.retired, ...this.tracked.values()];
  }

  /** Re-reads one tracked process; true while it exists with the same start time and is not a zombie. */
  static stillAlive(process: Pick<TrackedProcess, "pid" | "startTime">): boolean {
    const stat = readProcessStat(process.pid);
    return stat !== null && stat.startTime === process.startTime && !isGoneState(stat.state);
  }
}
