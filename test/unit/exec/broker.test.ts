import { afterAll, describe, expect, test } from "bun:test";
import { chmodSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type ProcessProgress, runProcess } from "../../../src/exec/broker.ts";
import { isProcessAlive } from "../../../src/exec/identity.ts";
import { fixtures, ManualClock, run, scratchDirectory, stillRunning, waitForOutput, refusal } from "./helpers.ts";

const scratch = scratchDirectory();
afterAll(() => scratch.remove());

describe("runProcess: exit and argv", () => {
  test("records a non-zero exit code", async () => {
    const { result } = await run(scratch.path, ["bash", "-c", "echo failing >&2; exit 3"]);
    expect(result.exit_code).toBe(3);
    expect(result.terminating_signal).toBeNull();
    expect(result.timed_out).toBe(false);
    expect(result.cancelled).toBe(false);
    expect(result.cleanup_complete).toBe(true);
    expect(result.stderr.bytes_written).toBe("failing\n".length);
    expect(result.executable.endsWith("/bash")).toBe(true);
    expect(result.wall_time_ns).toBeGreaterThan(0);
    expect(Date.parse(result.finished_at)).toBeGreaterThanOrEqual(Date.parse(result.started_at));
  });

  test("passes argv without a shell", async () => {
    const text = "$(echo injected); rm -rf / | cat && `id` > x";
    const { stdout, result } = await run(scratch.path, ["printf", "%s", text]);
    expect(result.exit_code).toBe(0);
    expect(stdout).toBe(text);
  });

  test("feeds stdin bytes when given, /dev/null otherwise", async () => {
    expect((await run(scratch.path, ["cat"], { stdin: "hello broker" })).stdout).toBe("hello broker");
    expect((await run(scratch.path, ["cat"])).stdout).toBe("");
  });

  test("a process killed by a signal reports the signal", async () => {
    const { result } = await run(scratch.path, ["bash", "-c", "kill -KILL $$"]);
    expect(result.exit_code).toBeNull();
    expect(result.terminating_signal).toBe("SIGKILL");
  });

  test("the child runs in a new session and process group", async () => {
    const { result, stdout } = await run(scratch.path, ["bash", "-c", "cut -d' ' -f5,6 /proc/$$/stat"]);
    expect(stdout.trim()).toBe(`${result.pid} ${result.pid}`);
    expect(result.process_start_time).toMatch(/^\d+$/);
  });
});

describe("runProcess: deadline, cancellation and tree cleanup", () => {
  test("the deadline kills a sleep tree and reports timed_out with verified cleanup", async () => {
    // The deadline is on a clock the test advances, and only once the whole tree exists: the
    // outcome cannot depend on how fast this machine forks.
    const clock = new ManualClock();
    const stdoutPath = join(scratch.path, "deadline.out");
    const running = runProcess(
      {
        argv: ["bash", "-c", "sleep 300 & sleep 301 & (trap '' TERM; sleep 302) & echo ready; wait"],
        cwd: scratch.path,
        deadline: clock.now() + 60_000,
        stdoutPath,
        stderrPath: join(scratch.path, "deadline.err"),
      },
      { gracePeriodMs: 500, clock },
    );
    await waitForOutput(stdoutPath, /ready/);
    clock.advanceTo(clock.now() + 60_000);
    const result = await running;
    expect(result.timed_out).toBe(true);
    expect(result.cancelled).toBe(false);
    expect(result.cancellation_cause).toBe("timeout");
    expect(result.exit_code).toBeNull();
    expect(result.terminating_signal).not.toBeNull();
    expect(result.cleanup_complete).toBe(true);
    // bash, the two sleeps and the subshell that ignores SIGTERM were all forked before "ready".
    expect(result.processes.length).toBeGreaterThanOrEqual(4);
    for (const process of result.processes) {
      expect(stillRunning(process.pid) && isProcessAlive(process.pid, process.start_time)).toBe(false);
      expect(process.alive_after_cleanup).toBe(false);
    }
  }, 40_000);

  test("cancel leaves no survivor among grandchildren that escaped with setsid", async () => {
    const controller = new AbortController();
    const stdoutPath = join(scratch.path, "escape.out");
    const running = runProcess(
      {
        argv: ["python3", join(fixtures, "escape.py")],
        cwd: scratch.path,
        deadline: Date.now() + 60_000,
        stdoutPath,
        stderrPath: join(scratch.path, "escape.err"),
      },
      { signal: controller.signal, gracePeriodMs: 500, trackingIntervalMs: 50 },
    );
    const text = await waitForOutput(stdoutPath, /ready/);
    const grandchildren = [...text.matchAll(/grandchild (\d+)/g)].map((match) => Number(match[1]));
    expect(grandchildren.length).toBe(2);
    // They are outside the group and orphaned now: only tracking can reach them.
    for (const pid of grandchildren) expect(stillRunning(pid)).toBe(true);
    controller.abort();
    const result = await running;
    expect(result.cancelled).toBe(true);
    expect(result.cancellation_cause).toBe("caller_cancelled");
    expect(result.timed_out).toBe(false);
    expect(result.cleanup_complete).toBe(true);
    const recorded = result.processes.map((process) => process.pid);
    for (const pid of grandchildren) {
      expect(recorded).toContain(pid);
      const entry = result.processes.find((process) => process.pid === pid);
      expect(entry?.session_id).not.toBe(result.pid);
    }
    for (const pid of [...recorded, ...grandchildren]) expect(stillRunning(pid)).toBe(false);
  }, 60_000);

  test("processes left behind after a normal exit are killed and counted", async () => {
    const pidFile = join(scratch.path, "left.pid");
    // bash exits at once: the setsid'd sleep is reparented before any scan need have seen it.
    const { result } = await run(
      scratch.path,
      ["bash", "-c", `setsid sleep 300 & echo $! > ${pidFile}; exit 0`],
      {},
      { gracePeriodMs: 500 },
    );
    expect(result.exit_code).toBe(0);
    expect(result.leftover_processes).toBeGreaterThanOrEqual(1);
    expect(result.cleanup_complete).toBe(true);
    const left = Number(readFileSync(pidFile, "utf8").trim());
    expect(result.processes.map((process) => process.pid)).toContain(left);
    expect(stillRunning(left)).toBe(false);
  }, 30_000);

  test("an already-aborted signal or a passed deadline starts nothing", async () => {
    const controller = new AbortController();
    controller.abort();
    const cancelled = await refusal(() => run(scratch.path, ["true"], {}, { signal: controller.signal }));
    expect(cancelled.code).toBe("PROCESS_CANCELLED");
    const late = await refusal(() => run(scratch.path, ["true"], { deadline: Date.now() - 1 }));
    expect(late.code).toBe("PROCESS_TIMEOUT");
  });

  test("onStarted sees the pid and its start time inside the deadline", async () => {
    let seen: { pid: number; start: string | null } | null = null;
    const { result } = await run(
      scratch.path,
      ["true"],
      {},
      {
        onStarted: (info) => {
          seen = { pid: info.pid, start: info.process_start_time };
        },
      },
    );
    expect(seen).not.toBeNull();
    expect(seen!.pid).toBe(result.pid);
  });
});

describe("runProcess: a failing start callback", () => {
  test("stops the run, kills its tree and rethrows the callback's error", async () => {
    let started = 0;
    const failure = new Error("lease could not be written");
    const outcome = await run(
      scratch.path,
      ["sleep", "300"],
      {},
      {
        gracePeriodMs: 500,
        onStarted: (info) => {
          started = info.pid;
          throw failure;
        },
      },
    ).then(
      () => null,
      (error: unknown) => error,
    );
    expect(outcome).toBe(failure);
    expect(started).toBeGreaterThan(0);
    expect(stillRunning(started)).toBe(false);
  }, 30_000);
});

describe("runProcess: progress", () => {
  test("reports progress while the process runs", async () => {
    // The workload waits for a file the first progress report creates, so it cannot finish unobserved.
    const flag = join(scratch.path, "progress-seen");
    const seen: ProcessProgress[] = [];
    await run(
      scratch.path,
      ["bash", "-c", `until [ -e ${flag} ]; do sleep 0.01; done`],
      {},
      {
        progressIntervalMs: 50,
        trackingIntervalMs: 20,
        onProgress: (progress) => {
          seen.push(progress);
          writeFileSync(flag, "");
        },
      },
    );
    expect(seen.length).toBeGreaterThan(0);
    expect(seen[0]!.elapsed_ns).toBeGreaterThan(0);
    expect(seen[0]!.live_processes).toBeGreaterThanOrEqual(1);
  });
});

describe("runProcess: output budget", () => {
  test("a 50 MB stdout flood is capped at the budget, counted, and the child still exits", async () => {
    const budget = 1024 * 1024;
    const { result } = await run(
      scratch.path,
      [
        "python3",
        "-c",
        "import sys\nfor _ in range(50): sys.stdout.buffer.write(b'x' * 1000000)\nsys.stdout.flush()\nprint('done', file=sys.stderr)",
      ],
      { outputBudgetBytes: budget },
    );
    expect(result.exit_code).toBe(0);
    const written = result.stdout.bytes_written + result.stderr.bytes_written;
    const dropped = result.stdout.bytes_dropped + result.stderr.bytes_dropped;
    expect(written).toBe(budget);
    expect(written + dropped).toBe(50_000_000 + "done\n".length);
    expect(result.stdout.truncated).toBe(true);
    expect(statSync(result.stdout.path).size).toBe(result.stdout.bytes_written);
    expect(statSync(result.stderr.path).size).toBe(result.stderr.bytes_written);
  }, 60_000);

  test("stdout and stderr share one budget", async () => {
    const { result, stdout, stderr } = await run(
      scratch.path,
      ["bash", "-c", "printf 'aaaaaaaa'; printf 'bbbbbbbb' >&2; sleep 0.1; printf 'cccccccc'"],
      { outputBudgetBytes: 12 },
    );
    expect(result.stdout.bytes_written + result.stderr.bytes_written).toBe(12);
    expect(result.stdout.bytes_dropped + result.stderr.bytes_dropped).toBe(12);
    expect(stdout.length + stderr.length).toBe(12);
    expect(result.stdout.truncated || result.stderr.truncated).toBe(true);
  });
});

describe("runProcess: environment policy", () => {
  const refusedNames = [
    "LD_PRELOAD",
    "LD_LIBRARY_PATH",
    "LD_AUDIT",
    "DYLD_INSERT_LIBRARIES",
    "PYTHONPATH",
    "PYTHONSTARTUP",
    "PYTHONHOME",
    "NODE_OPTIONS",
    "BUN_OPTIONS",
    "PERL5LIB",
    "RUBYOPT",
    "JAVA_TOOL_OPTIONS",
    "GITHUB_TOKEN",
    "NPM_TOKEN",
    "MY_SECRET",
    "DB_PASSWORD",
    "OPENAI_API_KEY",
    "AWS_ACCESS_KEY_ID",
    "AWS_PROFILE",
    "GIT_CONFIG_GLOBAL",
    "BASH_ENV",
  ];
  for (const name of refusedNames) {
    test(`refuses ${name} and names it`, async () => {
      const error = await refusal(() => run(scratch.path, ["true"], { environment: { [name]: "x" } }));
      expect(error.code).toBe("EXECUTION_REFUSED");
      expect(error.message).toContain(name);
      expect(error.details.variable).toBe(name);
    });
  }

  test("builds the child environment from the allowlist and records only the narrow one", async () => {
    const { stdout, result } = await run(
      scratch.path,
      ["env"],
      {
        environment: { WORKLOAD_SIZE: "3", KEYBOARD_LAYOUT: "us" },
        trustedEnvironment: { FLAMEOX_COLLECTOR: "/x", GIT_CONFIG_GLOBAL: "/dev/null" },
      },
      {
        parentEnvironment: {
          PATH: process.env.PATH,
          HOME: "/home/someone",
          LANG: "C.UTF-8",
          LC_ALL: "C",
          GITHUB_TOKEN: "ghp_secret",
          LD_PRELOAD: "/evil.so",
          SHELL: "/bin/zsh",
          OTHER: "1",
        },
      },
    );
    const lines = new Set(stdout.trim().split("\n"));
    expect(lines.has("WORKLOAD_SIZE=3")).toBe(true);
    expect(lines.has("KEYBOARD_LAYOUT=us")).toBe(true);
    expect(lines.has("FLAMEOX_COLLECTOR=/x")).toBe(true);
    expect(lines.has("GIT_CONFIG_GLOBAL=/dev/null")).toBe(true);
    expect(lines.has("HOME=/home/someone")).toBe(true);
    expect(stdout).not.toContain("GITHUB_TOKEN");
    expect(stdout).not.toContain("LD_PRELOAD");
    expect(stdout).not.toContain("SHELL=");
    expect(stdout).not.toContain("OTHER=");
    expect(result.environment.values).toEqual({ LANG: "C.UTF-8", LC_ALL: "C" });
    expect(result.environment.names).toContain("PATH");
    expect(JSON.stringify(result.environment)).not.toContain("ghp_secret");
  });

  test("refuses names that are not identifiers and values with NUL", async () => {
    expect((await refusal(() => run(scratch.path, ["true"], { environment: { "A=B": "x" } }))).code).toBe("EXECUTION_REFUSED");
    expect((await refusal(() => run(scratch.path, ["true"], { environment: { A: "x\u0000y" } }))).code).toBe("EXECUTION_REFUSED");
  });
});

describe("runProcess: executable and cwd", () => {
  test("a missing executable is refused", async () => {
    const error = await refusal(() => run(scratch.path, ["definitely-not-a-tool-flameox"]));
    expect(error.code).toBe("EXECUTION_REFUSED");
  });

  test("a non-executable file and a directory are refused", async () => {
    const plain = join(scratch.path, "plain.sh");
    writeFileSync(plain, "#!/bin/sh\necho hi\n");
    chmodSync(plain, 0o644);
    expect((await refusal(() => run(scratch.path, [plain]))).code).toBe("EXECUTION_REFUSED");
    expect((await refusal(() => run(scratch.path, ["./plain.sh"]))).code).toBe("EXECUTION_REFUSED");
    expect((await refusal(() => run(scratch.path, [scratch.path]))).code).toBe("EXECUTION_REFUSED");
  });

  test("the executable is looked up on the child's PATH, not the parent's", async () => {
    const error = await refusal(() => run(scratch.path, ["ls"], { environment: { PATH: "/nonexistent-flameox" } }));
    expect(error.code).toBe("EXECUTION_REFUSED");
    const { result } = await run(scratch.path, ["true"], {}, { parentEnvironment: { PATH: "/usr/bin:/bin" } });
    expect(result.executable === "/usr/bin/true" || result.executable === "/bin/true").toBe(true);
  });

  test("a missing cwd is refused", async () => {
    const error = await refusal(() => run(scratch.path, ["true"], { cwd: join(scratch.path, "nope") }));
    expect(error.code).toBe("EXECUTION_REFUSED");
  });

  test("argv with a NUL byte is invalid", async () => {
    const error = await refusal(() => run(scratch.path, ["printf", "a\u0000b"]));
    expect(error.code).toBe("INVALID_ARGUMENTS");
  });
});

describe("runProcess: truthful cleanup", () => {
  test("a setsid'd grandchild whose parent exits at once, holding the pipes, is found and killed", async () => {
    const pidFile = join(scratch.path, "escapee.pid");
    // The root exits as soon as the escapee has written its pid (an event, not a pause); the
    // escapee is reparented at that moment, before any scan need have seen it.
    const { result } = await run(
      scratch.path,
      [
        "bash",
        "-c",
        `(setsid sh -c 'echo $$ > ${pidFile}.tmp && mv ${pidFile}.tmp ${pidFile}; exec sleep 300' &); until [ -s ${pidFile} ]; do sleep 0.01; done; exit 0`,
      ],
      {},
      { gracePeriodMs: 300 },
    );
    const escapee = Number(readFileSync(pidFile, "utf8").trim());
    expect(result.exit_code).toBe(0);
    expect(result.cleanup_complete).toBe(true);
    expect(result.processes.map((process) => process.pid)).toContain(escapee);
    expect(stillRunning(escapee)).toBe(false);
  }, 30_000);
});
