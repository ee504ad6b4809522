import { existsSync, readdirSync, readFileSync, rmdirSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { procAvailable, readProcessStat } from "./proc.ts";

/**
 * A cgroup v2 of its own for one run, where this process may create one below its own cgroup
 * (root, or a delegated subtree such as a systemd user scope). Membership is inherited by every
 * fork and cannot be left without write access to the hierarchy, so the cgroup names the run's
 * processes exactly, `cgroup.kill` ends them all at once, and `cgroup.events` says when none is left.
 * Where it cannot be created the broker falls back to the subreaper and /proc tracking.
 */

const namePrefix = "flameox-";

type Location = { directory: string; hierarchyPath: string } | { unavailable: string };

let location: Location | null = null;
let created = 0;

/** The cgroup2 mount point, from /proc/self/mountinfo (hybrid hosts mount it at …/unified). */
function cgroup2Mount(): string | null {
  let text: string;
  try {
    text = readFileSync("/proc/self/mountinfo", "utf8");
  } catch {
    return null;
  }
  for (const line of text.split("\n")) {
    const separator = line.indexOf(" - ");
    if (separator < 0) continue;
    if (line.slice(separator + 3).split(" ")[0] !== "cgroup2") continue;
    const mountPoint = line.slice(0, separator).split(" ")[4];
    if (mountPoint) return mountPoint.replace(/\\040/g, " ");
  }
  return null;
}

/** This process's cgroup v2 path (`0::/path` in /proc/self/cgroup). */
function ownCgroupPath(): string | null {
  try {
    const line = readFileSync("/proc/self/cgroup", "utf8")
      .split("\n")
      .find((entry) => entry.startsWith("0::"));
    return line ? line.slice(3) : null;
  } catch {
    return null;
  }
}

/** Removes empty run cgroups left by flameox processes that died (rmdir refuses populated ones). */
function sweepAbandoned(parent: string): void {
  let entries: string[];
  try {
    entries = readdirSync(parent);
  } catch {
    return;
  }
  for (const entry of entries) {
    const owner = /^flameox-(\d+)-\d+$/.exec(entry);
    if (!owner || Number(owner[1]) === process.pid || readProcessStat(Number(owner[1])) !== null) continue;
    try {
      rmdirSync(join(parent, entry));
    } catch {
      // Still populated or not ours to remove: leave it.
    }
  }
}

function findLocation(): Location {
  if (!procAvailable()) return { unavailable: "no /proc" };
  const mount = cgroup2Mount();
  const own = ownCgroupPath();
  if (mount === null || own === null) return { unavailable: "no cgroup v2 hierarchy is mounted for this process" };
  const directory = join(mount, own);
  if (!existsSync(join(directory, "cgroup.procs"))) return { unavailable: "this process's cgroup is not visible" };
  sweepAbandoned(directory);
  return { directory, hierarchyPath: own };
}

function locate(): Location {
  location ??= findLocation();
  return location;
}

export class RunCgroup {
  private constructor(
    /** Where the cgroup's files are. */
    readonly path: string,
    /** Its name in the hierarchy, as /proc/<pid>/cgroup prints it. */
    private readonly hierarchyPath: string,
  ) {}

  /** A fresh, empty cgroup below this process's own; a reason string when none can be made here. */
  static create(): RunCgroup | string {
    const where = locate();
    if ("unavailable" in where) return where.unavailable;
    created += 1;
    const name = `${namePrefix}${process.pid}-${created}`;
    const path = join(where.directory, name);
    try {
      mkdirSync(path);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? "error";
      // Not delegated to us: remember, so later runs do not retry a hierarchy they cannot write.
      if (code === "EACCES" || code === "EPERM" || code === "EROFS")
        location = { unavailable: `the cgroup hierarchy is not writable (${code})` };
      return `a run cgroup could not be created (${code})`;
    }
    return new RunCgroup(path, join(where.hierarchyPath, name));
  }

  /** Moves a process in; false when it is gone or the move is not permitted. */
  adopt(pid: number): boolean {
    try {
      writeFileSync(join(this.path, "cgroup.procs"), String(pid));
      return true;
    } catch {
      return false;
    }
  }

  /** Pids in the cgroup now (zombies excluded by the kernel); empty when unreadable. */
  members(): number[] {
    try {
      return readFileSync(join(this.path, "cgroup.procs"), "utf8")
        .split("\n")
        .filter((line) => /^\d+$/.test(line))
        .map(Number);
    } catch {
      return [];
    }
  }

  contains(pid: number): boolean {
    try {
      const line = readFileSync(`/proc/${pid}/cgroup`, "utf8")
        .split("\n")
        .find((entry) => entry.startsWith("0::"));
      return line !== undefined && line.slice(3) === this.hierarchyPath;
    } catch {
      return false;
    }
  }

  /** True while a live process is in the cgroup; null when that cannot be read. */
  populated(): boolean | null {
    try {
      const match = /^populated (\d)$/m.exec(readFileSync(join(this.path, "cgroup.events"), "utf8"));
      return match ? match[1] === "1" : null;
    } catch {
      return null;
    }
  }

  /** SIGKILL to every member at once (cgroup.kill, Linux ≥ 5.14), else to each listed member. */
  kill(): void {
    try {
      writeFileSync(join(this.path, "cgroup.kill"), "1");
      return;
    } catch {
      // Older kernel: signal the members one by one; the caller repeats until none is left.
    }
    for (const pid of this.members()) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // Already gone.
      }
    }
  }

  signal(signal: NodeJS.Signals): void {
    for (const pid of this.members()) {
      try {
        process.kill(pid, signal);
      } catch {
        // Already gone.
      }
    }
  }

  /** Removes the (empty) cgroup; false when the kernel refuses because something is still inside. */
  remove(): boolean {
    try {
      rmdirSync(this.path);
      return true;
    } catch {
      return false;
    }
  }
}
