import { lstatSync, mkdtempSync, readFileSync, readlinkSync, realpathSync, rmSync, statSync } from "node:fs";
import { cpus, release, tmpdir, totalmem } from "node:os";
import { basename, join, relative, sep } from "node:path";
import { digestOf, sha256Hex } from "../domain/canonical-json.ts";
import { FlameoxError, invalidArguments } from "../domain/errors.ts";
import { runProcess, type ProcessResult } from "./broker.ts";
import { executableDigest, resolveExecutable } from "./executable.ts";
import { isGoneState, procAvailable, readBootId, readProcessStat } from "./proc.ts";

// ---------------------------------------------------------------------------------------------
// Process identity for run leases: (pid, start time, boot id) names one process exactly.
// ---------------------------------------------------------------------------------------------

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

// ---------------------------------------------------------------------------------------------
// Running short identity commands through the broker.
// ---------------------------------------------------------------------------------------------

type Captured = { result: ProcessResult; stdout: Buffer; stderr: string };

type CommandOptions = {
  cwd: string;
  deadline: number;
  outputBudgetBytes: number;
  trustedEnvironment?: Record<string, string>;
  parentEnvironment?: Record<string, string | undefined>;
  signal?: AbortSignal;
};

async function runCaptured(argv: string[], options: CommandOptions): Promise<Captured> {
  const scratch = mkdtempSync(join(tmpdir(), "flameox-identity-"));
  try {
    const result = await runProcess(
      {
        argv,
        cwd: options.cwd,
        deadline: options.deadline,
        stdoutPath: join(scratch, "stdout"),
        stderrPath: join(scratch, "stderr"),
        outputBudgetBytes: options.outputBudgetBytes,
        trustedEnvironment: options.trustedEnvironment,
      },
      { sampling: false, gracePeriodMs: 1_000, parentEnvironment: options.parentEnvironment, signal: options.signal },
    );
    const stdout = readFileSync(join(scratch, "stdout"));
    const stderr = readFileSync(join(scratch, "stderr"), "utf8").slice(0, 4_000);
    return { result, stdout, stderr };
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

function succeeded(captured: Captured): boolean {
  return captured.result.exit_code === 0 && !captured.result.timed_out && !captured.result.cancelled && !captured.result.stdout.truncated;
}

function describeFailure(what: string, captured: Captured): string {
  const result = captured.result;
  if (result.timed_out) return `${what} timed out`;
  if (result.cancelled) return `${what} was cancelled`;
  if (result.stdout.truncated) return `${what} printed more than its output budget`;
  const reason = result.terminating_signal ? `signal ${result.terminating_signal}` : `exit code ${result.exit_code}`;
  const message = captured.stderr.trim().split("\n")[0] ?? "";
  return `${what} failed (${reason})${message ? `: ${message}` : ""}`;
}

async function fileSha256(path: string): Promise<string> {
  return (await executableDigest(path)).slice("sha256:".length);
}

// ---------------------------------------------------------------------------------------------
// Source identity.
// ---------------------------------------------------------------------------------------------

export type SourceQuality = "clean" | "dirty" | "untracked" | "not_a_repository" | "unavailable";

export type UntrackedFile = {
  /** Repository-relative, `/`-separated. */
  path: string;
  kind: "file" | "symlink" | "other";
  size_bytes: number | null;
  /** sha256 hex of the content (of the link text for a symlink); null when skipped. */
  sha256: string | null;
  skipped: string | null;
};

export type SourceIdentity = {
  /** digestOf the identifying fields below (not `branch`, `limitations` or counts). */
  source_state_id: string;
  quality: SourceQuality;
  head_commit: string | null;
  /** Descriptive only: renaming a branch does not change the source. */
  branch: string | null;
  /** The project root relative to the repository root (`.` when they are the same). */
  project_subdirectory: string | null;
  /** sha256 hex of `git diff --binary HEAD` (tracked changes, staged or not). */
  diff_sha256: string | null;
  diff_bytes: number | null;
  changed_entries: number | null;
  untracked_files: UntrackedFile[];
  untracked_total: number;
  untracked_truncated: boolean;
  /** Identifying fields that could not be determined; part of the id, so a partial identity never equals a full one. */
  missing_fields: string[];
  limitations: string[];
};

export type SourceIdentityOptions = {
  /** Absolute deadline (ms epoch) for all git commands together; default 30 s from now. */
  deadline?: number;
  maximumDiffBytes?: number;
  maximumUntrackedFiles?: number;
  maximumUntrackedBytes?: number;
  parentEnvironment?: Record<string, string | undefined>;
  signal?: AbortSignal;
};

/** Isolation from user/system git config: no fsmonitor hooks, pagers, external diff or text conversion. */
const gitIsolation: Record<string, string> = {
  GIT_CONFIG_NOSYSTEM: "1",
  GIT_CONFIG_GLOBAL: process.platform === "win32" ? "NUL" : "/dev/null",
  GIT_TERMINAL_PROMPT: "0",
  GIT_OPTIONAL_LOCKS: "0",
};
const gitPrefix = [
  "git",
  "-c",
  "core.fsmonitor=false",
  "-c",
  "core.untrackedCache=false",
  "-c",
  "core.quotePath=false",
  "--no-optional-locks",
];

function finishSource(identity: Omit<SourceIdentity, "source_state_id">): SourceIdentity {
  const source_state_id = digestOf({
    quality: identity.quality,
    head_commit: identity.head_commit,
    project_subdirectory: identity.project_subdirectory,
    diff_sha256: identity.diff_sha256,
    untracked_files: identity.untracked_files.map((file) => ({
      path: file.path,
      kind: file.kind,
      size_bytes: file.size_bytes,
      sha256: file.sha256,
    })),
    untracked_total: identity.untracked_total,
    missing_fields: identity.missing_fields,
  });
  return { source_state_id, ...identity };
}

function emptySource(quality: SourceQuality, limitations: string[]): SourceIdentity {
  return finishSource({
    quality,
    head_commit: null,
    branch: null,
    project_subdirectory: null,
    diff_sha256: null,
    diff_bytes: null,
    changed_entries: null,
    untracked_files: [],
    untracked_total: 0,
    untracked_truncated: false,
    missing_fields: quality === "not_a_repository" ? [] : ["head_commit", "diff_sha256", "untracked_files"],
    limitations,
  });
}

/** Splits `git status --porcelain -z` into (status, path) entries; renames carry a second path. */
function parsePorcelain(output: Buffer): { status: string; path: string }[] {
  const fields = output.toString("utf8").split("\u0000");
  const entries: { status: string; path: string }[] = [];
  for (let index = 0; index < fields.length; index += 1) {
    const field = fields[index] as string;
    if (field.length < 4) continue;
    const status = field.slice(0, 2);
    entries.push({ status, path: field.slice(3) });
    if (status.includes("R") || status.includes("C")) index += 1;
  }
  return entries;
}

/**
 * Identity of the source a workload runs from: HEAD, a digest of the tracked diff against HEAD,
 * and digests of untracked files (bounded). Every git command runs through the broker with the
 * user's and system's git config ignored.
 */
export async function sourceIdentity(projectRoot: string, options: SourceIdentityOptions = {}): Promise<SourceIdentity> {
  try {
    return await readSourceIdentity(projectRoot, options);
  } catch (error) {
    // git missing, refused, unable to start, or out of time before a step could start.
    if (error instanceof FlameoxError && ["EXECUTION_REFUSED", "PROCESS_FAILED", "PROCESS_TIMEOUT"].includes(error.code)) {
      return emptySource("unavailable", [`git could not run: ${error.message}`]);
    }
    throw error;
  }
}

async function readSourceIdentity(projectRoot: string, options: SourceIdentityOptions): Promise<SourceIdentity> {
  let rootIsDirectory = false;
  try {
    rootIsDirectory = statSync(projectRoot).isDirectory();
  } catch {
    rootIsDirectory = false;
  }
  if (!rootIsDirectory) {
    throw invalidArguments("sourceIdentity", [{ field: "projectRoot", message: "must be an existing directory", type: "string" }]);
  }
  const deadline = options.deadline ?? Date.now() + 30_000;
  const maximumDiffBytes = options.maximumDiffBytes ?? 64 * 1024 * 1024;
  const maximumUntrackedFiles = options.maximumUntrackedFiles ?? 1_000;
  const maximumUntrackedBytes = options.maximumUntrackedBytes ?? 64 * 1024 * 1024;
  const git = (args: string[], cwd: string, budget = 1024 * 1024): Promise<Captured> =>
    runCaptured([...gitPrefix, ...args], {
      cwd,
      deadline,
      outputBudgetBytes: budget,
      trustedEnvironment: gitIsolation,
      parentEnvironment: options.parentEnvironment,
      signal: options.signal,
    });

  const topLevel = await git(["rev-parse", "--show-toplevel"], projectRoot);
  if (!succeeded(topLevel)) {
    if (topLevel.result.exit_code !== null && /not a git repository/i.test(topLevel.stderr)) return emptySource("not_a_repository", []);
    return emptySource("unavailable", [describeFailure("git rev-parse --show-toplevel", topLevel)]);
  }
  const repositoryRoot = topLevel.stdout.toString("utf8").trim();
  const limitations: string[] = [];
  const missing: string[] = [];
  let projectSubdirectory: string;
  try {
    const relativePath = relative(realpathSync(repositoryRoot), realpathSync(projectRoot));
    projectSubdirectory = relativePath === "" ? "." : relativePath.split(sep).join("/");
  } catch {
    projectSubdirectory = ".";
    limitations.push("the project root could not be placed inside the repository");
  }

  const head = await git(["rev-parse", "--verify", "--quiet", "HEAD"], repositoryRoot);
  const headCommit = succeeded(head) ? head.stdout.toString("utf8").trim() : null;
  if (headCommit === null) {
    missing.push("head_commit");
    limitations.push(head.result.exit_code === 1 ? "the repository has no commits yet" : describeFailure("git rev-parse HEAD", head));
  }
  const branchRun = await git(["symbolic-ref", "--quiet", "--short", "HEAD"], repositoryRoot);
  const branch = succeeded(branchRun) ? branchRun.stdout.toString("utf8").trim() || null : null;

  const status = await git(
    ["status", "--porcelain", "-z", "--untracked-files=all", "--ignore-submodules=none"],
    repositoryRoot,
    16 * 1024 * 1024,
  );
  if (!succeeded(status)) {
    return finishSource({
      quality: "unavailable",
      head_commit: headCommit,
      branch,
      project_subdirectory: projectSubdirectory,
      diff_sha256: null,
      diff_bytes: null,
      changed_entries: null,
      untracked_files: [],
      untracked_total: 0,
      untracked_truncated: false,
      missing_fields: [...missing, "diff_sha256", "untracked_files"],
      limitations: [...limitations, describeFailure("git status", status)],
    });
  }
  const entries = parsePorcelain(status.stdout);
  const tracked = entries.filter((entry) => entry.status !== "??" && entry.status !== "!!");
  const untrackedPaths = entries
    .filter((entry) => entry.status === "??")
    .map((entry) => entry.path)
    .sort();

  let diffSha256: string | null = null;
  let diffBytes: number | null = null;
  if (headCommit !== null) {
    const diff = await git(
      ["diff", "--binary", "--no-ext-diff", "--no-textconv", "--no-color", "HEAD", "--"],
      repositoryRoot,
      maximumDiffBytes,
    );
    if (succeeded(diff)) {
      diffSha256 = sha256Hex(diff.stdout);
      diffBytes = diff.stdout.byteLength;
    } else {
      missing.push("diff_sha256");
      limitations.push(describeFailure("git diff HEAD", diff));
    }
  } else if (tracked.length > 0) {
    missing.push("diff_sha256");
  }

  const untrackedFiles: UntrackedFile[] = [];
  let bytesLeft = maximumUntrackedBytes;
  let skipped = 0;
  for (const path of untrackedPaths.slice(0, maximumUntrackedFiles)) {
    const absolute = join(repositoryRoot, path);
    try {
      const stats = lstatSync(absolute);
      if (stats.isSymbolicLink()) {
        untrackedFiles.push({ path, kind: "symlink", size_bytes: null, sha256: sha256Hex(readlinkSync(absolute)), skipped: null });
      } else if (!stats.isFile()) {
        untrackedFiles.push({ path, kind: "other", size_bytes: null, sha256: null, skipped: "not a regular file" });
      } else if (stats.size > bytesLeft) {
        skipped += 1;
        untrackedFiles.push({ path, kind: "file", size_bytes: stats.size, sha256: null, skipped: "over the untracked byte budget" });
      } else {
        bytesLeft -= stats.size;
        untrackedFiles.push({ path, kind: "file", size_bytes: stats.size, sha256: await fileSha256(absolute), skipped: null });
      }
    } catch (error) {
      skipped += 1;
      untrackedFiles.push({
        path,
        kind: "other",
        size_bytes: null,
        sha256: null,
        skipped: error instanceof Error ? error.message : String(error),
      });
    }
  }
  const untrackedTruncated = untrackedPaths.length > maximumUntrackedFiles;
  if (untrackedTruncated || skipped > 0) {
    missing.push("untracked_files");
    limitations.push(
      `untracked files are only partly identified: ${untrackedPaths.length} found, ${Math.min(untrackedPaths.length, maximumUntrackedFiles)} listed, ${skipped} without a digest`,
    );
  }

  const quality: SourceQuality = tracked.length > 0 || (diffBytes ?? 0) > 0 ? "dirty" : untrackedPaths.length > 0 ? "untracked" : "clean";
  return finishSource({
    quality,
    head_commit: headCommit,
    branch,
    project_subdirectory: projectSubdirectory,
    diff_sha256: diffSha256,
    diff_bytes: diffBytes,
    changed_entries: tracked.length,
    untracked_files: untrackedFiles,
    untracked_total: untrackedPaths.length,
    untracked_truncated: untrackedTruncated,
    missing_fields: missing,
    limitations,
  });
}

// ---------------------------------------------------------------------------------------------
// Environment identity: the machine and the workload's interpreter (never flameox's own runtime).
// ---------------------------------------------------------------------------------------------

export type MachineIdentity = {
  os: string;
  os_release: string;
  arch: string;
  cpu_model: string | null;
  cpu_count: number;
  total_memory_bytes: number;
  /** Descriptive: changes on every reboot, so it is kept out of `environment_id`. */
  boot_id: string | null;
};

export type PythonIdentity = {
  implementation: string;
  version: string;
  full_version: string;
  cache_tag: string | null;
  in_virtual_environment: boolean;
  /** The interpreter binary that actually ran (behind shims and venv links). */
  executable_real_path: string | null;
  executable_sha256: string | null;
};

export type InterpreterIdentity = {
  requested: string;
  path: string;
  real_path: string;
  sha256: string;
  size_bytes: number;
  kind: "python" | "other";
  python: PythonIdentity | null;
  missing_fields: string[];
  limitations: string[];
};

export type EnvironmentIdentity = {
  /** digestOf machine (without boot id) and interpreter contents (without paths). */
  environment_id: string;
  quality: "complete" | "partial";
  machine: MachineIdentity;
  interpreter: InterpreterIdentity | null;
  missing_fields: string[];
};

export function machineIdentity(): MachineIdentity {
  const processors = cpus();
  return {
    os: process.platform,
    os_release: release(),
    arch: process.arch,
    cpu_model: processors[0]?.model?.trim() || null,
    cpu_count: processors.length,
    total_memory_bytes: totalmem(),
    boot_id: readBootId(),
  };
}

const pythonProbe = [
  "import sys, platform, json",
  "print(json.dumps({'implementation': sys.implementation.name, 'version': platform.python_version(),",
  " 'full_version': sys.version, 'cache_tag': sys.implementation.cache_tag, 'executable': sys.executable,",
  " 'venv': sys.prefix != getattr(sys, 'base_prefix', sys.prefix)}))",
].join("\n");

function looksLikePython(...names: string[]): boolean {
  return names.some((name) => /^(python|pypy)[0-9.]*(\.exe)?$/i.test(basename(name)));
}

export type InterpreterIdentityOptions = {
  /** Where a relative interpreter path is taken from, and the probe's cwd. */
  cwd?: string;
  deadline?: number;
  parentEnvironment?: Record<string, string | undefined>;
  signal?: AbortSignal;
};

/** The workload's interpreter: resolved path, real path, sha256; for Python also its version as it reports it. */
export async function interpreterIdentity(executable: string, options: InterpreterIdentityOptions = {}): Promise<InterpreterIdentity> {
  const cwd = options.cwd ?? process.cwd();
  const parent = options.parentEnvironment ?? process.env;
  const path = resolveExecutable(executable, parent.PATH, cwd);
  const realPath = realpathSync(path);
  const identity: InterpreterIdentity = {
    requested: executable,
    path,
    real_path: realPath,
    sha256: (await executableDigest(realPath)).slice("sha256:".length),
    size_bytes: statSync(realPath).size,
    kind: looksLikePython(executable, path, realPath) ? "python" : "other",
    python: null,
    missing_fields: [],
    limitations: [],
  };
  if (identity.kind !== "python") return identity;
  try {
    const probe = await runCaptured([path, "-I", "-c", pythonProbe], {
      cwd,
      deadline: options.deadline ?? Date.now() + 30_000,
      outputBudgetBytes: 64 * 1024,
      parentEnvironment: options.parentEnvironment,
      signal: options.signal,
    });
    if (!succeeded(probe)) {
      identity.missing_fields.push("python");
      identity.limitations.push(describeFailure("the Python version probe", probe));
      return identity;
    }
    const reported = JSON.parse(probe.stdout.toString("utf8")) as Record<string, unknown>;
    let executableRealPath: string | null = null;
    let executableSha256: string | null = null;
    if (typeof reported.executable === "string" && reported.executable.length > 0) {
      try {
        executableRealPath = realpathSync(reported.executable);
        executableSha256 = await fileSha256(executableRealPath);
      } catch {
        identity.missing_fields.push("python.executable_sha256");
      }
    }
    identity.python = {
      implementation: String(reported.implementation ?? ""),
      version: String(reported.version ?? ""),
      full_version: String(reported.full_version ?? ""),
      cache_tag: typeof reported.cache_tag === "string" ? reported.cache_tag : null,
      in_virtual_environment: reported.venv === true,
      executable_real_path: executableRealPath,
      executable_sha256: executableSha256,
    };
  } catch (error) {
    identity.missing_fields.push("python");
    identity.limitations.push(`the Python version probe failed: ${error instanceof Error ? error.message : String(error)}`);
  }
  return identity;
}

/**
 * Environment identity of a run: the machine plus the workload's interpreter. Paths and the boot
 * id are recorded but kept out of the id, so the same interpreter reached through another venv
 * or after a reboot is the same environment.
 */
export async function environmentIdentity(
  options: InterpreterIdentityOptions & { interpreter?: string | null } = {},
): Promise<EnvironmentIdentity> {
  const machine = machineIdentity();
  const missing: string[] = [];
  if (machine.boot_id === null) missing.push("machine.boot_id");
  if (machine.cpu_model === null) missing.push("machine.cpu_model");
  const interpreter = options.interpreter ? await interpreterIdentity(options.interpreter, options) : null;
  if (interpreter) missing.push(...interpreter.missing_fields.map((field) => `interpreter.${field}`));
  const quality = missing.filter((field) => field !== "machine.boot_id").length === 0 ? "complete" : "partial";
  const { boot_id: _bootId, ...machineFields } = machine;
  const environment_id = digestOf({
    quality,
    machine: machineFields,
    interpreter: interpreter
      ? {
          sha256: interpreter.sha256,
          kind: interpreter.kind,
          python: interpreter.python
            ? {
                implementation: interpreter.python.implementation,
                version: interpreter.python.version,
                full_version: interpreter.python.full_version,
                cache_tag: interpreter.python.cache_tag,
                in_virtual_environment: interpreter.python.in_virtual_environment,
                executable_sha256: interpreter.python.executable_sha256,
              }
            : null,
          missing_fields: interpreter.missing_fields,
        }
      : null,
  });
  return { environment_id, quality, machine, interpreter, missing_fields: missing };
}
