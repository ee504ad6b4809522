/**
 * Shared helpers of the benchmark modules: medians, load average, a child runner that reports wall
 * time and peak RSS (from the child's rusage, or its polled VmHWM where its parent's peak masks it)
 * and stops a child that outgrows a memory guard, and temp folders that are always removed. Not a
 * benchmark module itself (no `.bench.ts` suffix).
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join, resolve } from "node:path";

export const repositoryRoot = resolve(import.meta.dir, "../../..");
export const binary = process.env.FLAMEOX_BINARY || join(repositoryRoot, "dist", "flameox");
export const benchOutput = join(repositoryRoot, ".test-output", "bench");
export const toolsBin = join(repositoryRoot, ".tools", "venv", "bin");

export function median(values: number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

export function round(value: number, digits = 1): number {
  return Number.isFinite(value) ? Number(value.toFixed(digits)) : value;
}

/** 1-minute load average, so every figure can be read against what else the machine was doing. */
export function load1(): number {
  return round(loadavg()[0] ?? 0, 2);
}

export function mebibytes(bytes: number): number {
  return round(bytes / (1 << 20), 1);
}

/** Runs `body` with a fresh temp folder (under `parent`, default the system temp folder) and removes it afterwards. */
export async function withTempFolder<T>(prefix: string, body: (folder: string) => Promise<T>, parent = tmpdir()): Promise<T> {
  mkdirSync(parent, { recursive: true });
  const folder = mkdtempSync(join(parent, prefix));
  try {
    return await body(folder);
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

export type Measured = {
  exitCode: number | null;
  signal: string | null;
  wallMs: number;
  /**
   * Peak resident set of the child process, bytes: its rusage maxrss, unless that is no more than this
   * process's own peak when it spawned the child (give or take what spawning adds). On Linux a child's
   * maxrss starts from the memory it shared with its parent before exec, so a large parent masks a
   * smaller child; the peak is then the largest VmHWM polled every 50 ms while it ran. A child gone
   * before the first poll keeps its rusage.
   */
  maxRssBytes: number;
  /** Whether `maxRssBytes` is the polled VmHWM rather than the rusage. */
  peakPolled: boolean;
  /** CPU time (user + system) of the child and the descendants it waited for (rusage), ms. */
  cpuMs: number;
  /** True when the guard killed the child for outgrowing `rssGuardBytes`. */
  killedByGuard: boolean;
  stdout: string;
  stderrTail: string;
};

/** The child's resident set now and its peak since it exec'd (VmRSS, VmHWM), bytes; zeros once it is gone. */
function residentBytes(pid: number): { now: number; peak: number } {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const kilobytes = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1] ?? 0) * 1024;
    return { now: kilobytes("VmRSS"), peak: kilobytes("VmHWM") };
  } catch {
    return { now: 0, peak: 0 };
  }
}

/**
 * Spawns argv, waits, and reports wall time and peak RSS. A child whose RSS passes `rssGuardBytes`
 * is killed (SIGKILL) so a baseline that would swap the shared machine fails fast instead.
 */
export async function measure(
  argv: string[],
  options: {
    cwd?: string;
    env?: Record<string, string | undefined>;
    rssGuardBytes?: number;
    timeoutMs?: number;
    /** Called with each stderr line and the ms since spawn it arrived at (phase timing from progress lines). */
    onStderrLine?: (line: string, atMs: number) => void;
  } = {},
): Promise<Measured> {
  // process.resourceUsage() gives kilobytes, a child's resourceUsage() bytes.
  const parentPeakBytes = process.resourceUsage().maxRSS * 1024;
  const started = performance.now();
  const child = Bun.spawn(argv, { cwd: options.cwd, env: options.env ?? process.env, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  let killedByGuard = false;
  let polledPeak = 0;
  const guard = options.rssGuardBytes;
  const poll = setInterval(() => {
    const resident = residentBytes(child.pid);
    polledPeak = Math.max(polledPeak, resident.peak);
    if (guard && resident.now > guard) {
      killedByGuard = true;
      child.kill("SIGKILL");
    }
  }, 50);
  const timer = options.timeoutMs ? setTimeout(() => child.kill("SIGKILL"), options.timeoutMs) : undefined;
  const [stdout, stderr] = await Promise.all([
    new Response(child.stdout).text(),
    readLines(child.stderr, started, options.onStderrLine),
    child.exited,
  ]);
  const wallMs = performance.now() - started;
  clearInterval(poll);
  if (timer) clearTimeout(timer);
  const reported = child.resourceUsage()?.maxRSS ?? 0;
  // The parent grows a little while it spawns: within that margin the figure is still the parent's.
  const peakPolled = reported <= parentPeakBytes * 1.05 + (32 << 20) && polledPeak > 0;
  return {
    exitCode: child.exitCode,
    signal: child.signalCode ? String(child.signalCode) : null,
    wallMs,
    maxRssBytes: peakPolled ? polledPeak : reported,
    peakPolled,
    cpuMs: cpuMillisecondsOf(child.resourceUsage()),
    killedByGuard,
    stdout,
    stderrTail: stderr.slice(-2000),
  };
}

function cpuMillisecondsOf(usage: { cpuTime: { user: number | bigint; system: number | bigint } } | undefined): number {
  return usage ? (Number(usage.cpuTime.user) + Number(usage.cpuTime.system)) / 1000 : Number.NaN;
}

/** `flameox init` of a fresh project folder; throws with the binary's output when it fails. */
export function initProject(project: string): void {
  const init = Bun.spawnSync([binary, "init", project, "--json"], { stdout: "pipe", stderr: "pipe" });
  if (init.exitCode !== 0) throw new Error(`flameox init failed: ${init.stdout.toString()}${init.stderr.toString()}`);
}

export function requireBinary(): void {
  if (!existsSync(binary)) throw new Error(`${binary} is missing; run 'npm run build' (npm run bench builds it).`);
}

async function readLines(
  stream: ReadableStream<Uint8Array>,
  started: number,
  onLine?: (line: string, atMs: number) => void,
): Promise<string> {
  if (!onLine) return new Response(stream).text();
  const decoder = new TextDecoder();
  let text = "";
  let pending = "";
  for await (const chunk of stream) {
    const at = performance.now() - started;
    const piece = decoder.decode(chunk, { stream: true });
    text += piece;
    pending += piece;
    const lines = pending.split("\n");
    pending = lines.pop() ?? "";
    for (const line of lines) onLine(line, at);
  }
  if (pending) onLine(pending, performance.now() - started);
  return text;
}
