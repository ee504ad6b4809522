import { readdirSync, readFileSync } from "node:fs";
import { procAvailable, readProcessStat } from "./proc.ts";

export type MarkedProcess = { pid: number; startTime: string };

/**
 * Processes whose environment carries NAME=VALUE. The broker marks every workload with its run
 * id, and descendants inherit it even after setsid and reparenting, so crash recovery can find a
 * dead owner's whole tree without the owner's in-memory tracking.
 */
export function processesWithEnvironment(name: string, value: string): MarkedProcess[] {
  if (!procAvailable()) return [];
  const needle = Buffer.from(`${name}=${value}\u0000`);
  const found: MarkedProcess[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const pid = Number(entry);
    if (pid === process.pid) continue;
    let environ: Buffer;
    try {
      environ = readFileSync(`/proc/${pid}/environ`);
    } catch {
      continue;
    }
    if (!environ.includes(needle) && !Buffer.concat([environ, Buffer.from([0])]).includes(needle)) continue;
    const stat = readProcessStat(pid);
    if (stat) found.push({ pid, startTime: stat.startTime });
  }
  return found;
}
