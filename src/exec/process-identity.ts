import { isGoneState, procAvailable, readBootId, readProcessStat } from "./proc.ts";

/** Process identity for run leases: (pid, start time, boot id) names one process exactly. */

/** This boot's id from /proc/sys/kernel/random/boot_id; null off Linux. */
export function bootId(): string | null {
  return readBootId();
}

/** Field 22 of /proc/<pid>/stat (start time in clock ticks since boot); null when unreadable or off Linux. */
export function processStartTime(pid: number): string | null {
  return readProcessStat(pid)?.startTime ?? null;
}

export type ProcessLiveness = "alive" | "dead" | "unknown";

/**
 * Whether the process named by (pid, start time) still runs. `unknown` where the start time cannot
 * be checked (no /proc) but some process holds the pid.
 */
export function processLiveness(pid: number, startTime: string | null): ProcessLiveness {
  if (!Number.isInteger(pid) || pid <= 0) return "dead";
  if (procAvailable()) {
    const stat = readProcessStat(pid);
    if (stat === null || isGoneState(stat.state)) return "dead";
    if (startTime !== null && stat.startTime !== startTime) return "dead";
    return "alive";
  }
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ESRCH") return "dead";
  }
  return startTime === null ? "alive" : "unknown";
}

/** Conservative: a process whose identity cannot be checked counts as alive, so nothing live is ever reclaimed. */
export function isProcessAlive(pid: number, startTime: string | null): boolean {
  return processLiveness(pid, startTime) !== "dead";
}
