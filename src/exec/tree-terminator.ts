import type { RunContainment } from "./containment.ts";
import { ProcessTreeTracker } from "./process-tree.ts";

/**
 * Ends a run's whole tree: SIGTERM to the process group, the run cgroup and every tracked
 * descendant; after the grace period SIGKILL (the cgroup's atomic kill where there is one), and a
 * second SIGKILL for children born meanwhile. "Gone" is judged from /proc and the cgroup, never assumed.
 */

/** After SIGKILL, how long to wait for the kernel to finish the tree off before judging cleanup. */
const killSettleMs = 2_000;
const pollMs = 25;

const isWindows = process.platform === "win32";

export type TerminationRoot = { pid: number; exited(): boolean; kill(signal: NodeJS.Signals): void };

/** Signals a process (or, with a negative pid, a process group), ignoring one that is gone or no longer ours. */
export function sendSignal(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {
    // ESRCH (already gone) and EPERM (not ours any more) both mean there is nothing to signal.
  }
}

/** True when some process is in the group (zombies included, so only a hint off Linux). */
export function processGroupExists(groupId: number): boolean {
  if (isWindows) return false;
  try {
    process.kill(-groupId, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

const sleep = (ms: number): Promise<void> => new Promise((done) => setTimeout(done, ms));

export class TreeTerminator {
  constructor(
    private readonly root: TerminationRoot,
    private readonly tracker: ProcessTreeTracker,
    private readonly containment: RunContainment,
    private readonly gracePeriodMs: number,
  ) {}

  anyAlive(): boolean {
    if (!this.root.exited()) return true;
    if (this.containment.cgroup?.populated() === true) return true;
    if (this.tracker.available) return this.tracker.refresh().length > 0;
    return processGroupExists(this.root.pid);
  }

  signal(signal: NodeJS.Signals): void {
    if (isWindows) {
      if (!this.root.exited()) this.root.kill(signal);
      return;
    }
    // Scan first, so every process alive at this moment is on the record before any signal lands.
    const live = this.tracker.available ? this.tracker.refresh() : [];
    const cgroup = this.containment.cgroup;
    if (cgroup !== null) {
      if (signal === "SIGKILL") cgroup.kill();
      else cgroup.signal(signal);
    }
    // The group first: one syscall reaches every member, including ones not yet scanned.
    const groupMembers = live.some((member) => member.processGroupId === this.root.pid);
    if (!this.root.exited() || groupMembers || !this.tracker.available) sendSignal(-this.root.pid, signal);
    for (const member of live) {
      if (ProcessTreeTracker.stillAlive(member)) sendSignal(member.pid, signal);
    }
  }

  /** Polls until nothing of the tree lives or `ms` passed; true when nothing lives. */
  async waitUntilGone(ms: number): Promise<boolean> {
    const until = Date.now() + ms;
    for (;;) {
      if (!this.anyAlive()) return true;
      if (Date.now() >= until) return false;
      await sleep(Math.min(pollMs, Math.max(1, until - Date.now())));
    }
  }

  async terminate(): Promise<void> {
    this.signal("SIGTERM");
    if (await this.waitUntilGone(this.gracePeriodMs)) return;
    this.signal("SIGKILL");
    if (await this.waitUntilGone(killSettleMs)) return;
    // Children born during the grace period may have been missed by the first SIGKILL.
    this.signal("SIGKILL");
    await this.waitUntilGone(killSettleMs);
  }
}
