import { closeSync, existsSync, openSync, readdirSync, readFileSync, readlinkSync, readSync } from "node:fs";

/**
 * Small, allocation-light readers of Linux `/proc`. Every reader returns null instead of throwing
 * when the process is gone or the file is unreadable: processes vanish between a directory listing
 * and a read, and callers must treat that as "not observed", never as zero.
 */

/** Linux fixes USER_HZ at 100 on every mainstream architecture; `/proc/<pid>/stat` times use it. */
export const clockTicksPerSecond = 100;
export const nanosecondsPerClockTick = 1_000_000_000 / clockTicksPerSecond;

export type ProcessStat = {
  pid: number;
  /** Single-letter state; `Z` (zombie) and `X` (dead) count as gone. */
  state: string;
  parentPid: number;
  processGroupId: number;
  sessionId: number;
  userTimeTicks: number;
  systemTimeTicks: number;
  threadCount: number;
  /** Field 22, clock ticks since boot, kept as text: with the boot id it names one process exactly. */
  startTime: string;
};

let procAvailableCache: boolean | null = null;

/** True where `/proc/<pid>/stat` can be read (Linux). */
export function procAvailable(): boolean {
  if (procAvailableCache === null) {
    procAvailableCache = process.platform === "linux" && existsSync("/proc/self/stat");
  }
  return procAvailableCache;
}

const statReadLimit = 8192;
const statBuffer = Buffer.alloc(statReadLimit);

function readSmallFile(path: string): string | null {
  let descriptor: number;
  try {
    descriptor = openSync(path, "r");
  } catch {
    return null;
  }
  try {
    const length = readSync(descriptor, statBuffer, 0, statReadLimit, 0);
    return statBuffer.toString("latin1", 0, length);
  } catch {
    return null;
  } finally {
    closeSync(descriptor);
  }
}

/**
 * Parses `/proc/<pid>/stat`. The command name (field 2) may hold spaces and parentheses, so the
 * numeric fields are read after the *last* `)`.
 */
export function parseProcessStat(pid: number, text: string): ProcessStat | null {
  const close = text.lastIndexOf(")");
  if (close < 0) return null;
  const fields = text
    .slice(close + 2)
    .trim()
    .split(" ");
  // fields[0] is field 3 (state); field N is at index N - 3.
  const state = fields[0];
  const startTime = fields[19];
  if (state === undefined || startTime === undefined || !/^\d+$/.test(startTime)) return null;
  const numberAt = (index: number): number => Number(fields[index] ?? Number.NaN);
  const stat: ProcessStat = {
    pid,
    state,
    parentPid: numberAt(1),
    processGroupId: numberAt(2),
    sessionId: numberAt(3),
    userTimeTicks: numberAt(11),
    systemTimeTicks: numberAt(12),
    threadCount: numberAt(17),
    startTime,
  };
  if (![stat.parentPid, stat.processGroupId, stat.sessionId, stat.userTimeTicks, stat.systemTimeTicks].every(Number.isFinite)) {
    return null;
  }
  return stat;
}

export function readProcessStat(pid: number): ProcessStat | null {
  if (!procAvailable() || !Number.isInteger(pid) || pid <= 0) return null;
  const text = readSmallFile(`/proc/${pid}/stat`);
  return text === null ? null : parseProcessStat(pid, text);
}

export function isGoneState(state: string): boolean {
  return state === "Z" || state === "X" || state === "x";
}

/** Every pid listed in `/proc`; empty where `/proc` is unavailable. */
export function listProcessIds(): number[] {
  if (!procAvailable()) return [];
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return [];
  }
  const pids: number[] = [];
  for (const entry of entries) {
    const code = entry.charCodeAt(0);
    if (code < 48 || code > 57) continue;
    const pid = Number(entry);
    if (Number.isInteger(pid) && pid > 0) pids.push(pid);
  }
  return pids;
}

/** Stat of every readable process; one pass over `/proc`. */
export function scanProcesses(): ProcessStat[] {
  const stats: ProcessStat[] = [];
  for (const pid of listProcessIds()) {
    const stat = readProcessStat(pid);
    if (stat) stats.push(stat);
  }
  return stats;
}

let childrenListsCache: boolean | null = null;

/** True where `/proc/<pid>/task/<tid>/children` exists (Linux built with CONFIG_PROC_CHILDREN, as mainstream kernels are). */
export function childrenListsAvailable(): boolean {
  if (childrenListsCache === null) childrenListsCache = procAvailable() && existsSync(`/proc/self/task/${process.pid}/children`);
  return childrenListsCache;
}

/**
 * Pids of the children of one thread (`/proc/<pid>/task/<tid>/children`); empty when unreadable, null
 * when the list reaches the read limit (over ~1,000 children). The kernel hands this file out about a
 * page per read (a 900-child list came as 4,095 bytes, then 405), so it is read until a read returns 0.
 */
export function readThreadChildren(pid: number, threadId: number): number[] | null {
  let descriptor: number;
  try {
    descriptor = openSync(`/proc/${pid}/task/${threadId}/children`, "r");
  } catch {
    return [];
  }
  let length = 0;
  try {
    for (;;) {
      const read = readSync(descriptor, statBuffer, length, statReadLimit - length, null);
      if (read === 0) break;
      length += read;
      if (length >= statReadLimit) return null;
    }
  } catch {
    return [];
  } finally {
    closeSync(descriptor);
  }
  const pids: number[] = [];
  for (const field of statBuffer.toString("latin1", 0, length).split(" ")) {
    const child = Number(field);
    if (field.length > 0 && Number.isInteger(child) && child > 0) pids.push(child);
  }
  return pids;
}

/** The names in `/proc/<pid>/<folder>` (threads, descriptors); empty when the process is gone or the folder unreadable. */
function procEntries(pid: number, folder: "task" | "fd"): string[] {
  try {
    return readdirSync(`/proc/${pid}/${folder}`);
  } catch {
    return [];
  }
}

/** Pids of the children of every thread of a process; empty when it is gone, null when a list was too long to read whole. */
export function readChildren(pid: number): number[] | null {
  const children: number[] = [];
  for (const thread of procEntries(pid, "task")) {
    const listed = readThreadChildren(pid, Number(thread));
    if (listed === null) return null;
    children.push(...listed);
  }
  return children;
}

/**
 * This process's children, zombies included (orphans reparented to it as child subreaper among them):
 * from its children lists where they can be read whole, else from a scan of all of /proc.
 */
export function ownChildren(): ProcessStat[] {
  const listed = childrenListsAvailable() ? readChildren(process.pid) : null;
  if (listed === null) return scanProcesses().filter((stat) => stat.parentPid === process.pid);
  const stats: ProcessStat[] = [];
  for (const pid of listed) {
    const stat = readProcessStat(pid);
    if (stat?.parentPid === process.pid) stats.push(stat);
  }
  return stats;
}

export type MemoryStatus = {
  /** VmRSS: resident now. */
  residentBytes: number;
  /** VmHWM: the process's own resident high-water mark since its last exec. */
  highWaterBytes: number | null;
};

/** RSS and its high-water mark from `/proc/<pid>/status`; null when unreadable (kernel threads, gone). */
export function readMemoryStatus(pid: number): MemoryStatus | null {
  if (!procAvailable()) return null;
  const text = readSmallFile(`/proc/${pid}/status`);
  if (text === null) return null;
  const rss = /^VmRSS:\s+(\d+)\s+kB/m.exec(text);
  if (!rss?.[1]) return null;
  const hwm = /^VmHWM:\s+(\d+)\s+kB/m.exec(text);
  return { residentBytes: Number(rss[1]) * 1024, highWaterBytes: hwm?.[1] ? Number(hwm[1]) * 1024 : null };
}

/** The target of `/proc/<pid>/fd/<fd>` (e.g. `pipe:[1234]`); null when unreadable. */
export function readDescriptorTarget(pid: number, descriptor: number): string | null {
  if (!procAvailable()) return null;
  try {
    return readlinkSync(`/proc/${pid}/fd/${descriptor}`);
  } catch {
    return null;
  }
}

/** Targets of every open descriptor of a process; empty when unreadable. */
export function listDescriptorTargets(pid: number): string[] {
  if (!procAvailable()) return [];
  const targets: string[] = [];
  for (const descriptor of procEntries(pid, "fd")) {
    const target = readDescriptorTarget(pid, Number(descriptor));
    if (target !== null) targets.push(target);
  }
  return targets;
}

/**
 * Processes (other than this one) holding an open descriptor to any of `targets` (such as
 * `pipe:[1234]`). Finds a daemonized descendant that escaped the tree but still holds a
 * workload's stdout or stderr. Processes whose descriptors cannot be read are not reported.
 */
export function findDescriptorHolders(targets: ReadonlySet<string>): number[] {
  if (!procAvailable() || targets.size === 0) return [];
  const holders: number[] = [];
  for (const pid of listProcessIds()) {
    if (pid === process.pid) continue;
    if (listDescriptorTargets(pid).some((target) => targets.has(target))) holders.push(pid);
  }
  return holders;
}

export function readBootId(): string | null {
  if (process.platform !== "linux") return null;
  try {
    const text = readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim();
    return /^[0-9a-f-]{36}$/i.test(text) ? text.toLowerCase() : null;
  } catch {
    return null;
  }
}
