import { RunCgroup } from "./cgroup.ts";
import { environmentValue, type MarkedProcess, processesWithEnvironment, runMarkerVariable } from "./environment-scan.ts";
import { becomeChildSubreaper, reapChild } from "./libc.ts";
import { isGoneState, ownChildren, procAvailable, readProcessStat, type ProcessStat } from "./proc.ts";
import type { ProcessTreeTracker } from "./process-tree.ts";

/**
 * Keeps every descendant of a run findable until the run ends, with what Linux offers:
 * - a cgroup of the run's own where the hierarchy is writable (exact membership, atomic kill);
 * - this process as child subreaper, so an orphan (a double-forking daemon) is reparented to us
 *   instead of init and stays visible in /proc as our child, attributed to its run;
 * - the run's FLAMEOX_RUN_ID marker, swept from /proc/<pid>/environ at the end.
 * Which of these held decides whether the broker may claim cleanup_complete.
 */

export type ContainmentKind = "cgroup" | "subreaper" | "tracking_only";

type ActiveRun = { rootPid: number; marker: string | null; cgroup: RunCgroup | null };

/** Runs of this process whose roots have not been reaped yet; orphans are attributed among them. */
const activeRuns = new Set<ActiveRun>();

/** Brief commands running now (exec/brief-command.ts): each leads a session of its own and is no run's. */
const briefRoots = new Set<number>();

/** Right after a brief command's spawn, before any await; the returned function forgets it once its group is gone. */
export function registerBriefRoot(pid: number): () => void {
  briefRoots.add(pid);
  return () => briefRoots.delete(pid);
}

let ownSessionCache: number | null | undefined;

function ownSessionId(): number | null {
  if (ownSessionCache === undefined) ownSessionCache = readProcessStat(process.pid)?.sessionId ?? null;
  return ownSessionCache;
}

function isActiveRoot(pid: number): boolean {
  if (briefRoots.has(pid)) return true;
  for (const run of activeRuns) if (run.rootPid === pid) return true;
  return false;
}

/**
 * A child of this process that the broker did not spawn itself: broker roots and brief commands each
 * lead a session of their own and are registered, and other children flameox starts stay in flameox's
 * session, so a child in a foreign session that is no registered root can only have been reparented to us.
 */
function isReparentedOrphan(stat: ProcessStat): boolean {
  return stat.parentPid === process.pid && stat.sessionId !== ownSessionId() && !isActiveRoot(stat.pid);
}

/** Which run an orphan belongs to: by session, group, cgroup or marker; else the only run, if there is one. */
function ownerOf(stat: ProcessStat): ActiveRun | "foreign" | "unattributed" {
  if (briefRoots.has(stat.sessionId) || briefRoots.has(stat.processGroupId)) return "foreign";
  for (const run of activeRuns) {
    // Session and group ids are not reused while any member lives, so these are exact.
    if (stat.sessionId === run.rootPid || stat.processGroupId === run.rootPid) return run;
    if (run.cgroup?.contains(stat.pid)) return run;
  }
  const marker = environmentValue(stat.pid, runMarkerVariable);
  if (typeof marker === "string") {
    for (const run of activeRuns) if (run.marker === marker) return run;
    // Marked by a run that is not ours (a killed server's workload): recovery's to end, not ours.
    return "foreign";
  }
  if (activeRuns.size === 1) {
    const [only] = activeRuns;
    if (only) return only;
  }
  return "unattributed";
}

export class RunContainment {
  private readonly run: ActiveRun;
  private readonly subreaper: boolean;
  readonly limitations: string[] = [];

  private constructor(run: ActiveRun, subreaper: boolean) {
    this.run = run;
    this.subreaper = subreaper;
  }

  /** Before spawn: the subreaper flag (once per process) and, where allowed, an empty run cgroup. */
  static async prepare(options: { cgroup: boolean; marker: string | null }): Promise<RunContainment> {
    const subreaper = procAvailable() ? await becomeChildSubreaper() : false;
    const cgroup = options.cgroup && procAvailable() ? RunCgroup.create() : null;
    return new RunContainment({ rootPid: 0, marker: options.marker, cgroup: typeof cgroup === "string" ? null : cgroup }, subreaper);
  }

  get kind(): ContainmentKind {
    return this.run.cgroup !== null ? "cgroup" : this.subreaper ? "subreaper" : "tracking_only";
  }

  get cgroup(): RunCgroup | null {
    return this.run.cgroup;
  }

  get marker(): string | null {
    return this.run.marker;
  }

  /** Right after spawn, before any await: registers the root and moves it into the cgroup. */
  admit(rootPid: number): void {
    this.run.rootPid = rootPid;
    activeRuns.add(this.run);
    const cgroup = this.run.cgroup;
    if (cgroup !== null && !cgroup.adopt(rootPid) && !cgroup.contains(rootPid)) {
      // The root exited already or may not be moved: the cgroup would hold nothing of the run.
      cgroup.remove();
      this.run.cgroup = null;
    }
  }

  /** Moves processes that forked before the root joined the cgroup; the tracker found them. */
  enclose(pids: readonly number[]): void {
    const cgroup = this.run.cgroup;
    if (cgroup === null) return;
    for (const pid of pids) if (!cgroup.contains(pid)) cgroup.adopt(pid);
  }

  /** The tracker's test for an untracked process: an orphan reparented to us that belongs to this run. */
  claims(stat: ProcessStat): boolean {
    return isReparentedOrphan(stat) && !isGoneState(stat.state) && ownerOf(stat) === this.run;
  }

  /** Live processes carrying this run's marker anywhere on the host. */
  markedProcesses(): MarkedProcess[] {
    return this.run.marker === null ? [] : processesWithEnvironment(runMarkerVariable, this.run.marker);
  }

  /**
   * Live orphans that started during this run but that no run could be told to own (other runs
   * active, no marker): they may be this run's, so its cleanup cannot be claimed complete.
   */
  unattributedOrphans(run: Pick<ProcessTreeTracker, "startedWithinRun">): number {
    if (!procAvailable()) return 0;
    let count = 0;
    // Orphans are reparented to this process, so its children are all there is to look at.
    for (const stat of ownChildren()) {
      if (isReparentedOrphan(stat) && !isGoneState(stat.state) && run.startedWithinRun(stat) && ownerOf(stat) === "unattributed")
        count += 1;
    }
    return count;
  }

  /**
   * Waits for this run's orphans that died (they are our children now; Bun reaps only what it
   * spawned). Only zombies known to be the run's are reaped, so a child another part of flameox
   * started and will wait for itself is never taken from it.
   */
  async reapOrphans(run: Pick<ProcessTreeTracker, "knows" | "startedWithinRun">): Promise<void> {
    if (!procAvailable()) return;
    for (const stat of ownChildren()) {
      if (!isReparentedOrphan(stat) || !isGoneState(stat.state)) continue;
      if (run.knows(stat) || (run.startedWithinRun(stat) && ownerOf(stat) === this.run)) await reapChild(stat.pid);
    }
  }

  /** After the root was reaped: leaves the registry and removes the (empty) cgroup. */
  release(): void {
    activeRuns.delete(this.run);
    const cgroup = this.run.cgroup;
    if (cgroup !== null && !cgroup.remove()) this.limitations.push(`the run cgroup ${cgroup.path} could not be removed`);
  }
}
