import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { digestPattern } from "../../../src/domain/canonical-json.ts";
import {
  bootId,
  environmentIdentity,
  interpreterIdentity,
  isProcessAlive,
  machineIdentity,
  processLiveness,
  processStartTime,
  sourceIdentity,
} from "../../../src/exec/identity.ts";
import { run, scratchDirectory } from "./helpers.ts";

const scratch = scratchDirectory();
afterAll(() => scratch.remove());
const isLinux = process.platform === "linux";

const gitEnvironment = {
  GIT_AUTHOR_NAME: "Test",
  GIT_AUTHOR_EMAIL: "test@example.invalid",
  GIT_COMMITTER_NAME: "Test",
  GIT_COMMITTER_EMAIL: "test@example.invalid",
};

async function git(cwd: string, ...args: string[]): Promise<void> {
  const { result, stderr } = await run(scratch.path, ["git", "-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false", ...args], {
    cwd,
    environment: gitEnvironment,
    trustedEnvironment: { GIT_CONFIG_GLOBAL: "/dev/null", GIT_CONFIG_NOSYSTEM: "1" },
  });
  if (result.exit_code !== 0) throw new Error(`git ${args.join(" ")} failed: ${stderr}`);
}

describe("process identity for leases", () => {
  test.skipIf(!isLinux)("start time and boot id name this process", () => {
    const start = processStartTime(process.pid);
    expect(start).toMatch(/^\d+$/);
    expect(bootId()).toMatch(/^[0-9a-f-]{36}$/);
    expect(isProcessAlive(process.pid, start)).toBe(true);
    expect(isProcessAlive(process.pid, `${start}1`)).toBe(false);
    expect(processLiveness(process.pid, start)).toBe("alive");
  });

  test("a finished process is dead", async () => {
    const { result } = await run(scratch.path, ["true"]);
    expect(isProcessAlive(result.pid, result.process_start_time)).toBe(false);
    expect(processStartTime(-5)).toBeNull();
    expect(isProcessAlive(0, null)).toBe(false);
  });
});

describe("source identity", () => {
  const repository = join(scratch.path, "repo");
  beforeAll(async () => {
    mkdirSync(join(repository, "pkg"), { recursive: true });
    writeFileSync(join(repository, "pkg", "main.py"), "print('v1')\n");
    await git(repository, "init", "-q");
    await git(repository, "add", "-A");
    await git(repository, "commit", "-q", "-m", "one");
  });

  test("clean, dirty, back to clean, untracked", async () => {
    const clean = await sourceIdentity(repository);
    expect(clean.quality).toBe("clean");
    expect(clean.head_commit).toMatch(/^[0-9a-f]{40,64}$/);
    expect(clean.branch).toBe("main");
    expect(clean.project_subdirectory).toBe(".");
    expect(clean.source_state_id).toMatch(digestPattern);
    expect(clean.missing_fields).toEqual([]);

    writeFileSync(join(repository, "pkg", "main.py"), "print('v2')\n");
    const dirty = await sourceIdentity(repository);
    expect(dirty.quality).toBe("dirty");
    expect(dirty.diff_bytes).toBeGreaterThan(0);
    expect(dirty.source_state_id).not.toBe(clean.source_state_id);

    writeFileSync(join(repository, "pkg", "main.py"), "print('v3')\n");
    const dirtier = await sourceIdentity(repository);
    expect(dirtier.source_state_id).not.toBe(dirty.source_state_id);

    writeFileSync(join(repository, "pkg", "main.py"), "print('v1')\n");
    expect((await sourceIdentity(repository)).source_state_id).toBe(clean.source_state_id);

    writeFileSync(join(repository, "notes.txt"), "scratch\n");
    const untracked = await sourceIdentity(repository);
    expect(untracked.quality).toBe("untracked");
    expect(untracked.untracked_files).toEqual([
      { path: "notes.txt", kind: "file", size_bytes: 8, sha256: expect.stringMatching(/^[0-9a-f]{64}$/), skipped: null },
    ]);
    expect(untracked.source_state_id).not.toBe(clean.source_state_id);
    writeFileSync(join(repository, "notes.txt"), "scratch 2\n");
    expect((await sourceIdentity(repository)).source_state_id).not.toBe(untracked.source_state_id);
  }, 60_000);

  test("a subdirectory of the repository is placed relative to its root", async () => {
    const identity = await sourceIdentity(join(repository, "pkg"));
    expect(identity.project_subdirectory).toBe("pkg");
  }, 30_000);

  test("bounded untracked digests mark the identity partial", async () => {
    for (let index = 0; index < 3; index += 1) writeFileSync(join(repository, `extra-${index}.txt`), `x${index}\n`);
    const identity = await sourceIdentity(repository, { maximumUntrackedFiles: 2 });
    expect(identity.untracked_truncated).toBe(true);
    expect(identity.untracked_files.length).toBe(2);
    expect(identity.untracked_total).toBeGreaterThan(2);
    expect(identity.missing_fields).toContain("untracked_files");
  }, 30_000);

  test("a plain directory is not a repository; no git is unavailable", async () => {
    const plain = join(scratch.path, "plain");
    mkdirSync(plain);
    expect((await sourceIdentity(plain)).quality).toBe("not_a_repository");
    const unavailable = await sourceIdentity(repository, { parentEnvironment: { PATH: "/nonexistent-flameox" } });
    expect(unavailable.quality).toBe("unavailable");
    expect(unavailable.limitations.length).toBeGreaterThan(0);
  }, 30_000);
});

describe("source identity writes nothing", () => {
  test("a tracked file with stale stat data leaves .git/index byte-identical", async () => {
    const repository = join(scratch.path, "stale");
    mkdirSync(repository, { recursive: true });
    writeFileSync(join(repository, "main.py"), "print('v1')\n");
    writeFileSync(join(repository, "other.py"), "print('other')\n");
    await git(repository, "init", "-q");
    await git(repository, "add", "-A");
    await git(repository, "commit", "-q", "-m", "one");
    const clean = await sourceIdentity(repository);
    // Same bytes, new times: the index's cached stat data no longer matches the file, which is
    // exactly when porcelain `git diff` refreshes and rewrites the index.
    for (const [file, seconds] of [
      ["main.py", 946_684_800],
      ["other.py", 2_000_000_000],
    ] as const) {
      utimesSync(join(repository, file), seconds, seconds);
    }
    const index = join(repository, ".git", "index");
    const before = readFileSync(index);
    const beforeTime = statSync(index).mtimeMs;
    const identity = await sourceIdentity(repository);
    expect(readFileSync(index).equals(before)).toBe(true);
    expect(statSync(index).mtimeMs).toBe(beforeTime);
    expect(existsSync(join(repository, ".git", "index.lock"))).toBe(false);
    // Stale stat data is not a change: the identity still says clean and equals the fresh one.
    expect(identity.quality).toBe("clean");
    expect(identity.diff_bytes).toBe(0);
    expect(identity.source_state_id).toBe(clean.source_state_id);
    writeFileSync(join(repository, "main.py"), "print('v2')\n");
    utimesSync(join(repository, "main.py"), 946_684_800, 946_684_800);
    const changed = await sourceIdentity(repository);
    expect(changed.quality).toBe("dirty");
    expect(readFileSync(index).equals(before)).toBe(true);
  }, 60_000);
});

describe("environment identity", () => {
  test("machine fields", () => {
    const machine = machineIdentity();
    expect(machine.cpu_count).toBeGreaterThan(0);
    expect(machine.total_memory_bytes).toBeGreaterThan(0);
    if (isLinux) expect(machine.boot_id).toMatch(/^[0-9a-f-]{36}$/);
  });

  test("the workload's python interpreter is identified and the id is stable", async () => {
    const interpreter = await interpreterIdentity("python3");
    expect(interpreter.kind).toBe("python");
    expect(interpreter.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(interpreter.python?.version).toMatch(/^3\.\d+\.\d+/);
    expect(interpreter.python?.executable_sha256).toMatch(/^[0-9a-f]{64}$/);
    const first = await environmentIdentity({ interpreter: "python3" });
    const second = await environmentIdentity({ interpreter: "python3" });
    expect(first.environment_id).toMatch(digestPattern);
    expect(first.environment_id).toBe(second.environment_id);
    expect(first.quality).toBe("complete");
    const bare = await environmentIdentity();
    expect(bare.environment_id).not.toBe(first.environment_id);
    expect(bare.interpreter).toBeNull();
  }, 60_000);

  test("a non-python executable gets a digest and no probe", async () => {
    const identity = await interpreterIdentity("true");
    expect(identity.kind).toBe("other");
    expect(identity.python).toBeNull();
    expect(identity.sha256).toMatch(/^[0-9a-f]{64}$/);
  });
});
