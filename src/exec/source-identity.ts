import { lstatSync, readlinkSync, realpathSync, statSync } from "node:fs";
import { join, relative, sep } from "node:path";
import { digestOf, sha256Hex } from "../domain/canonical-json.ts";
import { FlameoxError, invalidArguments } from "../domain/errors.ts";
import { type Captured, describeFailure, fileSha256, runCaptured, succeeded } from "./captured-command.ts";

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
  /** sha256 hex of the binary patch of the working tree against HEAD (tracked changes, staged or not). */
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

/**
 * Isolation from user/system git config (no fsmonitor hooks, pagers, external diff or text
 * conversion), and no optional locks: `git status` then leaves a stale index as it found it.
 */
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
/**
 * The tracked diff comes from plumbing: porcelain `git diff HEAD` ignores GIT_OPTIONAL_LOCKS and
 * rewrites `.git/index` whenever a file's stat data is stale, while `diff-index` compares contents
 * for such files and never writes the index.
 */
const trackedDiffArguments = ["diff-index", "-p", "--binary", "--no-ext-diff", "--no-textconv", "--no-color", "HEAD", "--"];

type Git = (args: string[], cwd: string, budget?: number) => Promise<Captured>;

type Located = { repositoryRoot: string; projectSubdirectory: string; limitations: string[] };

type Head = { headCommit: string | null; branch: string | null; missing: string[]; limitations: string[] };

type UntrackedDigests = { files: UntrackedFile[]; truncated: boolean; skipped: number };

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

/** The working-tree fields of an identity whose tree could not be read. */
const unreadTree = {
  diff_sha256: null,
  diff_bytes: null,
  changed_entries: null,
  untracked_files: [],
  untracked_total: 0,
  untracked_truncated: false,
} as const satisfies Partial<SourceIdentity>;

function emptySource(quality: SourceQuality, limitations: string[]): SourceIdentity {
  return finishSource({
    quality,
    head_commit: null,
    branch: null,
    project_subdirectory: null,
    ...unreadTree,
    untracked_files: [],
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
 * user's and system's git config ignored, and none of them writes to the repository.
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

function requireDirectory(projectRoot: string): void {
  let rootIsDirectory = false;
  try {
    rootIsDirectory = statSync(projectRoot).isDirectory();
  } catch {
    rootIsDirectory = false;
  }
  if (!rootIsDirectory) {
    throw invalidArguments("sourceIdentity", [{ field: "projectRoot", message: "must be an existing directory", type: "string" }]);
  }
}

/** The repository's top level and the project's place in it; a SourceIdentity when there is no usable repository. */
async function locateRepository(git: Git, projectRoot: string): Promise<Located | SourceIdentity> {
  const topLevel = await git(["rev-parse", "--show-toplevel"], projectRoot);
  if (!succeeded(topLevel)) {
    if (topLevel.result.exit_code !== null && /not a git repository/i.test(topLevel.stderr)) return emptySource("not_a_repository", []);
    return emptySource("unavailable", [describeFailure("git rev-parse --show-toplevel", topLevel)]);
  }
  const repositoryRoot = topLevel.stdout.toString("utf8").trim();
  try {
    const relativePath = relative(realpathSync(repositoryRoot), realpathSync(projectRoot));
    return { repositoryRoot, projectSubdirectory: relativePath === "" ? "." : relativePath.split(sep).join("/"), limitations: [] };
  } catch {
    return { repositoryRoot, projectSubdirectory: ".", limitations: ["the project root could not be placed inside the repository"] };
  }
}

async function readHead(git: Git, repositoryRoot: string): Promise<Head> {
  const head = await git(["rev-parse", "--verify", "--quiet", "HEAD"], repositoryRoot);
  const headCommit = succeeded(head) ? head.stdout.toString("utf8").trim() : null;
  const missing: string[] = [];
  const limitations: string[] = [];
  if (headCommit === null) {
    missing.push("head_commit");
    limitations.push(head.result.exit_code === 1 ? "the repository has no commits yet" : describeFailure("git rev-parse HEAD", head));
  }
  const branchRun = await git(["symbolic-ref", "--quiet", "--short", "HEAD"], repositoryRoot);
  const branch = succeeded(branchRun) ? branchRun.stdout.toString("utf8").trim() || null : null;
  return { headCommit, branch, missing, limitations };
}

/** sha256 of the working tree's binary patch against HEAD; null fields when there is no HEAD or git failed. */
async function digestTrackedDiff(
  git: Git,
  repositoryRoot: string,
  hasHead: boolean,
  maximumBytes: number,
): Promise<{ sha256: string | null; bytes: number | null; failure: string | null }> {
  if (!hasHead) return { sha256: null, bytes: null, failure: null };
  const diff = await git(trackedDiffArguments, repositoryRoot, maximumBytes);
  if (!succeeded(diff)) return { sha256: null, bytes: null, failure: describeFailure("git diff-index HEAD", diff) };
  return { sha256: sha256Hex(diff.stdout), bytes: diff.stdout.byteLength, failure: null };
}

async function digestUntracked(
  repositoryRoot: string,
  paths: readonly string[],
  limits: { maximumFiles: number; maximumBytes: number },
): Promise<UntrackedDigests> {
  const files: UntrackedFile[] = [];
  let bytesLeft = limits.maximumBytes;
  let skipped = 0;
  for (const path of paths.slice(0, limits.maximumFiles)) {
    const absolute = join(repositoryRoot, path);
    try {
      const stats = lstatSync(absolute);
      if (stats.isSymbolicLink()) {
        files.push({ path, kind: "symlink", size_bytes: null, sha256: sha256Hex(readlinkSync(absolute)), skipped: null });
      } else if (!stats.isFile()) {
        files.push({ path, kind: "other", size_bytes: null, sha256: null, skipped: "not a regular file" });
      } else if (stats.size > bytesLeft) {
        skipped += 1;
        files.push({ path, kind: "file", size_bytes: stats.size, sha256: null, skipped: "over the untracked byte budget" });
      } else {
        bytesLeft -= stats.size;
        files.push({ path, kind: "file", size_bytes: stats.size, sha256: await fileSha256(absolute), skipped: null });
      }
    } catch (error) {
      skipped += 1;
      files.push({ path, kind: "other", size_bytes: null, sha256: null, skipped: error instanceof Error ? error.message : String(error) });
    }
  }
  return { files, truncated: paths.length > limits.maximumFiles, skipped };
}

async function readSourceIdentity(projectRoot: string, options: SourceIdentityOptions): Promise<SourceIdentity> {
  requireDirectory(projectRoot);
  const deadline = options.deadline ?? Date.now() + 30_000;
  const maximumUntrackedFiles = options.maximumUntrackedFiles ?? 1_000;
  const git: Git = (args, cwd, budget = 1024 * 1024) =>
    runCaptured([...gitPrefix, ...args], {
      cwd,
      deadline,
      outputBudgetBytes: budget,
      trustedEnvironment: gitIsolation,
      parentEnvironment: options.parentEnvironment,
      signal: options.signal,
    });

  const located = await locateRepository(git, projectRoot);
  if ("source_state_id" in located) return located;
  const { repositoryRoot, projectSubdirectory } = located;
  const head = await readHead(git, repositoryRoot);
  const limitations = [...located.limitations, ...head.limitations];
  const missing = [...head.missing];
  const common = { head_commit: head.headCommit, branch: head.branch, project_subdirectory: projectSubdirectory };

  const status = await git(
    ["status", "--porcelain", "-z", "--untracked-files=all", "--ignore-submodules=none"],
    repositoryRoot,
    16 * 1024 * 1024,
  );
  if (!succeeded(status)) {
    return finishSource({
      quality: "unavailable",
      ...common,
      ...unreadTree,
      untracked_files: [],
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

  const diff = await digestTrackedDiff(git, repositoryRoot, head.headCommit !== null, options.maximumDiffBytes ?? 64 * 1024 * 1024);
  if (diff.failure !== null) limitations.push(diff.failure);
  // Without HEAD there is no diff to take; tracked entries then make the digest missing, not empty.
  if (diff.failure !== null || (head.headCommit === null && tracked.length > 0)) missing.push("diff_sha256");

  const untracked = await digestUntracked(repositoryRoot, untrackedPaths, {
    maximumFiles: maximumUntrackedFiles,
    maximumBytes: options.maximumUntrackedBytes ?? 64 * 1024 * 1024,
  });
  if (untracked.truncated || untracked.skipped > 0) {
    missing.push("untracked_files");
    limitations.push(
      `untracked files are only partly identified: ${untrackedPaths.length} found, ${Math.min(untrackedPaths.length, maximumUntrackedFiles)} listed, ${untracked.skipped} without a digest`,
    );
  }

  const quality: SourceQuality = tracked.length > 0 || (diff.bytes ?? 0) > 0 ? "dirty" : untrackedPaths.length > 0 ? "untracked" : "clean";
  return finishSource({
    quality,
    ...common,
    diff_sha256: diff.sha256,
    diff_bytes: diff.bytes,
    changed_entries: tracked.length,
    untracked_files: untracked.files,
    untracked_total: untrackedPaths.length,
    untracked_truncated: untracked.truncated,
    missing_fields: missing,
    limitations,
  });
}
