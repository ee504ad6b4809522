/**
 * Through the compiled binary over real stdio: a capture leaves no process behind (a double-forking
 * daemon included) and writes nowhere it did not promise (not `.git/index`, not `~/.debug`).
 */
import { afterEach, describe, expect, setDefaultTimeout, test } from "bun:test";
import { chmodSync, copyFileSync, existsSync, mkdirSync, readFileSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { callTool, connectMcp, repositoryRoot, temporaryFolder, toolPath, type McpSession } from "../support/binary.ts";
import { declare, planAndExecute, python, workloadProject } from "../support/project.ts";

setDefaultTimeout(120_000);

let session: McpSession | undefined;
afterEach(async () => {
  await session?.close();
  session = undefined;
});

/** Alive and not a zombie, for the exact (pid, start time) the workload reported. */
function alive(pid: number, startTime: string): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return !/^[ZXx]$/.test(fields[0] ?? "") && fields[19] === startTime;
  } catch {
    return false;
  }
}

function git(cwd: string, ...args: string[]): void {
  const result = Bun.spawnSync(["git", "-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false", ...args], {
    cwd,
    env: {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: cwd,
      GIT_CONFIG_NOSYSTEM: "1",
      GIT_CONFIG_GLOBAL: "/dev/null",
      GIT_AUTHOR_NAME: "Test",
      GIT_AUTHOR_EMAIL: "test@example.invalid",
      GIT_COMMITTER_NAME: "Test",
      GIT_COMMITTER_EMAIL: "test@example.invalid",
    },
  });
  if (result.exitCode !== 0) throw new Error(`git ${args.join(" ")} failed: ${result.stderr.toString()}`);
}

describe("a capture leaves nothing behind", () => {
  test("a double-forking daemon is gone after its capture, and a stale-stat .git/index is byte-identical", async () => {
    const project = workloadProject("daemon");
    copyFileSync(join(repositoryRoot, "test", "fixtures", "exec", "daemon.py"), join(project, "daemon.py"));
    git(project, "init", "-q");
    git(project, "add", "-A");
    git(project, "commit", "-q", "-m", "fixtures");
    session = await connectMcp(project, ["--init"]);
    // Same bytes, older and newer times than the index recorded: the stat data is stale, which is
    // when porcelain `git diff` would refresh and rewrite the index.
    utimesSync(join(project, "hot.py"), 946_684_800, 946_684_800);
    utimesSync(join(project, "daemon.py"), 2_000_000_000, 2_000_000_000);
    const index = join(project, ".git", "index");
    const before = readFileSync(index);

    await declare(session, "daemon", [python(), "daemon.py", "daemon.pid"], { timeout_seconds: 60 });
    const { executed } = await planAndExecute(session, "daemon", "command");
    expect(executed.isError).toBe(false);
    const receipt = executed.envelope.result;
    expect(receipt.execution_status).toBe("succeeded");
    // The daemon reported itself before the root exited, so the file is there once the capture returns.
    const [pid, startTime] = readFileSync(join(project, "daemon.pid"), "utf8").trim().split(" ");
    expect(alive(Number(pid), startTime!)).toBe(false);
    const manifest = (await callTool(session, "get_run", { run_id: receipt.run_id })).envelope.result;
    expect(manifest.process.cleanup_complete).toBe(true);
    expect(manifest.process.leftover_processes).toBeGreaterThanOrEqual(1);
    expect(manifest.source.quality).toBe("untracked");

    expect(readFileSync(index).equals(before)).toBe(true);
    expect(existsSync(join(project, ".git", "index.lock"))).toBe(false);
  });

  test("list_capabilities and a perf capture leave HOME/.debug absent", async () => {
    const home = temporaryFolder("home");
    mkdirSync(join(home, ".config"), { recursive: true });
    const project = workloadProject("perf-home");
    session = await connectMcp(project, ["--init"], { HOME: home });
    const listed = await callTool(session, "list_capabilities", { mode: "active_refresh", adapter: "perf" });
    expect(listed.envelope.ok).toBe(true);
    // The probe really recorded (perf record -- true), which is what used to fill ~/.debug.
    expect(listed.envelope.result.capabilities[0].status).toBe("available");
    expect(existsSync(join(home, ".debug"))).toBe(false);

    await declare(session, "hot", [python(), "hot.py", "{seconds}"], { parameters: { seconds: ["0.5"] } });
    const { executed } = await planAndExecute(session, "hot", "perf");
    expect(executed.envelope.result.execution_status).toBe("succeeded");
    expect(executed.envelope.result.capture_status).toBe("registered");
    expect(existsSync(join(home, ".debug"))).toBe(false);
  });

  test("capability probes run with the workload's scrubbed environment, not the server's", async () => {
    // A stand-in py-spy first on PATH records the environment each probe (version, permission) got.
    const tools = temporaryFolder("probe-tools");
    const dump = join(tools, "environments.txt");
    const fake = join(tools, "py-spy");
    writeFileSync(fake, `#!/bin/sh\n{ echo "--- $1"; env; } >> '${dump}'\necho "py-spy 0.4.1"\n`);
    chmodSync(fake, 0o755);
    const project = workloadProject("probe-env");
    session = await connectMcp(project, ["--init"], {
      PATH: `${tools}:${toolPath()}`,
      FLAMEOX_TEST_API_TOKEN: "server-secret-value",
      SHELL: "/bin/sh-from-the-server",
      UNLISTED_SERVER_SETTING: "1",
    });
    const listed = await callTool(session, "list_capabilities", { mode: "active_refresh", adapter: "py-spy" });
    expect(listed.envelope.ok).toBe(true);
    const probes = readFileSync(dump, "utf8");
    expect(probes).toContain("--- --version");
    expect(probes).toContain("--- record");
    expect(probes).toContain(`PATH=${tools}:`);
    expect(probes).not.toContain("server-secret-value");
    expect(probes).not.toContain("SHELL=");
    expect(probes).not.toContain("UNLISTED_SERVER_SETTING");
  });
});
