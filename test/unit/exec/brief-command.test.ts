import { afterAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { runBriefCommand } from "../../../src/exec/brief-command.ts";
import { describeFailure, succeeded } from "../../../src/exec/captured-command.ts";
import { waitFor } from "../../support/wait.ts";
import { scratchDirectory, stillRunning, waitForOutput, refusal } from "./helpers.ts";

setDefaultTimeout(60_000);
const scratch = scratchDirectory();
afterAll(() => scratch.remove());
const isWindows = process.platform === "win32";

const options = (extra: Partial<Parameters<typeof runBriefCommand>[1]> = {}) => ({
  cwd: scratch.path,
  deadline: Date.now() + 60_000,
  outputBudgetBytes: 1024 * 1024,
  ...extra,
});

describe.skipIf(isWindows)("runBriefCommand: the broker's rules without tracking, sampling or files", () => {
  test("argv without a shell, output read whole, the exit code reported", async () => {
    const { outcome, stdout, stderr } = await runBriefCommand(
      ["python3", "-c", "import sys; print(sys.argv[1]); sys.stderr.write('warn'); sys.exit(3)", "$HOME; `x`"],
      options(),
    );
    expect(stdout.toString("utf8")).toBe("$HOME; `x`\n");
    expect(stderr.toString("utf8")).toBe("warn");
    expect(outcome).toEqual({
      exit_code: 3,
      terminating_signal: null,
      timed_out: false,
      cancelled: false,
      truncated: false,
      output_abandoned: false,
    });
  });

  test("the child environment comes from the allowlist; trusted variables pass", async () => {
    const { stdout } = await runBriefCommand(
      ["python3", "-c", "import os, json; print(json.dumps({k: os.environ.get(k) for k in ['API_TOKEN', 'GIT_OPTIONAL_LOCKS', 'HOME']}))"],
      options({
        parentEnvironment: { PATH: process.env.PATH, HOME: "/home/someone", API_TOKEN: "secret-value" },
        trustedEnvironment: { GIT_OPTIONAL_LOCKS: "0" },
      }),
    );
    expect(JSON.parse(stdout.toString("utf8"))).toEqual({ API_TOKEN: null, GIT_OPTIONAL_LOCKS: "0", HOME: "/home/someone" });
  });

  test("the deadline ends the whole group, a member that ignores SIGTERM included", async () => {
    const pids = join(scratch.path, "deadline.pids");
    const { outcome } = await runBriefCommand(
      ["bash", "-c", `sleep 300 & echo $! >> ${pids}; (trap '' TERM; sleep 301) & echo $! >> ${pids}; wait`],
      options({ deadline: Date.now() + 1_500, gracePeriodMs: 200 }),
    );
    expect(outcome.timed_out).toBe(true);
    expect(outcome.exit_code).toBeNull();
    const members = readFileSync(pids, "utf8").trim().split("\n").map(Number);
    expect(members.length).toBe(2);
    // SIGKILL lands a moment after kill() returns.
    for (const pid of members) await waitFor(`member ${pid} to die`, () => !stillRunning(pid));
  });

  test("cancelling ends the group and says so", async () => {
    const controller = new AbortController();
    const ready = join(scratch.path, "cancel.ready");
    const running = runBriefCommand(["bash", "-c", `sleep 300 & echo $! > ${ready}; wait`], options({ signal: controller.signal }));
    const sleeper = Number((await waitForOutput(ready, /^\d+\n/)).trim());
    controller.abort();
    const { outcome } = await running;
    expect(outcome.cancelled).toBe(true);
    expect(outcome.timed_out).toBe(false);
    await waitFor("the sleeper to die", () => !stillRunning(sleeper));
  });

  test("what it leaves in its group after a normal exit is killed, so the pipes close", async () => {
    const { outcome, stdout } = await runBriefCommand(["bash", "-c", "sleep 300 & echo $!; exit 0"], options());
    expect(outcome.exit_code).toBe(0);
    const left = Number(stdout.toString("utf8").trim());
    await waitFor("the process it left to die", () => !stillRunning(left));
  });

  test("a command that exits while a process outside its group holds its output: reading stops at the deadline, not reported as a timeout", async () => {
    // setsid takes the holder out of the command's group, so the group kill after exit cannot reach it;
    // the command exits only once the holder has written its pid, that is once it has left the group.
    const ready = join(scratch.path, "holder-ready");
    const { outcome, stdout } = await runBriefCommand(
      [
        "bash",
        "-c",
        `setsid bash -c 'echo $$ > ${ready}.part && mv ${ready}.part ${ready}; exec sleep 300' & until [ -s ${ready} ]; do sleep 0.01; done; cat ${ready}; exit 0`,
      ],
      options({ deadline: Date.now() + 5_000 }),
    );
    const holder = Number(stdout.toString("utf8").trim());
    try {
      expect(outcome).toMatchObject({ exit_code: 0, timed_out: false, cancelled: false, output_abandoned: true });
      expect(succeeded({ result: outcome, stdout, stderr: "" })).toBe(false);
      expect(describeFailure("probe", { result: outcome, stdout, stderr: "" })).toContain("kept its output open");
    } finally {
      if (holder > 0) process.kill(holder, "SIGKILL");
    }
  });

  test("past the byte budget the command is stopped and its output marked truncated", async () => {
    const { outcome, stdout, stderr } = await runBriefCommand(
      ["python3", "-c", "import sys\nwhile True: sys.stdout.write('x' * 65536)"],
      options({ outputBudgetBytes: 10_000 }),
    );
    expect(outcome.truncated).toBe(true);
    expect(stdout.byteLength + stderr.byteLength).toBeLessThanOrEqual(10_000);
  });

  test("a missing executable, a passed deadline or an aborted signal starts nothing", async () => {
    expect((await refusal(() => runBriefCommand(["flameox-no-such-tool"], options()))).code).toBe("EXECUTION_REFUSED");
    expect((await refusal(() => runBriefCommand(["true"], options({ deadline: Date.now() - 1 })))).code).toBe("PROCESS_TIMEOUT");
    const controller = new AbortController();
    controller.abort();
    expect((await refusal(() => runBriefCommand(["true"], options({ signal: controller.signal })))).code).toBe("PROCESS_CANCELLED");
  });
});
