import { readFileSync } from "node:fs";
import { listProcessIds, procAvailable, readProcessStat } from "./proc.ts";

export type MarkedProcess = { pid: number; startTime: string };

/** The variable every capture's processes carry; descendants inherit it even after setsid and reparenting. */
export const runMarkerVariable = "FLAMEOX_RUN_ID";

function readEnviron(pid: number): Buffer | null {
  try {
    return readFileSync(`/proc/${pid}/environ`);
  } catch {
    return null;
  }
}

/** True when the NUL-separated block holds exactly NAME=VALUE as one entry (not as a suffix of another). */
function holdsEntry(environ: Buffer, entry: Buffer): boolean {
  for (let at = environ.indexOf(entry); at >= 0; at = environ.indexOf(entry, at + 1)) {
    const end = at + entry.byteLength;
    if ((at === 0 || environ[at - 1] === 0) && (end === environ.byteLength || environ[end] === 0)) return true;
  }
  return false;
}

/**
 * Processes whose environment carries NAME=VALUE. The broker marks every workload with its run
 * id, so crash recovery can find a dead owner's whole tree without the owner's in-memory tracking,
 * and the broker's last sweep can find a descendant that left the tree.
 */
export function processesWithEnvironment(name: string, value: string): MarkedProcess[] {
  if (!procAvailable()) return [];
  const entry = Buffer.from(`${name}=${value}`);
  const found: MarkedProcess[] = [];
  for (const pid of listProcessIds()) {
    if (pid === process.pid) continue;
    const environ = readEnviron(pid);
    if (environ === null || !holdsEntry(environ, entry)) continue;
    const stat = readProcessStat(pid);
    if (stat) found.push({ pid, startTime: stat.startTime });
  }
  return found;
}

/**
 * The value of one variable in a process's environment as it was at exec: a string, null when the
 * process does not carry it, undefined when the environment cannot be read (gone, zombie, not ours).
 */
export function environmentValue(pid: number, name: string): string | null | undefined {
  const environ = readEnviron(pid);
  if (environ === null || environ.byteLength === 0) return undefined;
  const prefix = `${name}=`;
  for (const entry of environ.toString("latin1").split("\u0000")) {
    if (entry.startsWith(prefix)) return Buffer.from(entry.slice(prefix.length), "latin1").toString("utf8");
  }
  return null;
}
