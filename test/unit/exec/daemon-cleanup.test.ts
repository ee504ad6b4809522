/**
 * Every descendant ends with its run, including a classic double-forking daemon (setsid, stdio on
 * /dev/null) whose parent exits before any /proc scan need have seen it. The daemon reports its
 * pid and start time before the root exits, so each assertion waits on that event, never on time.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { ProcessResult } from "../../../src/exec/broker.ts";
import { runProcess } from "../../../src/exec/broker.ts";
import { RunCgroup } from "../../../src/exec/cgroup.ts";
import { processLiveness } from "../../../src/exec/identity.ts";
import { readProcessStat } from "../../../src/exec/proc.ts";
import { fixtures, run, scratchDirectory, waitForOutput } from "./helpers.ts";

const scratch = scratchDirectory();
afterAll(() => scratch.remove());
const isLinux = process.platform === "linux";

/** Whether this host lets flameox make a cgroup of its own (root, or a delegated subtree). */
function cgroupWritable(): boolean {
  if (!isLinux) return false;
  const probe = RunCgroup.create();
  return typeof probe !== "string" && probe.remove();
}

type Daemon = { pid: number; startTime: string };

function readDaemon(path: string): Daemon {
  const [pid, startTime] = readFileSync(path, "utf8").trim().split(" ");
  return { pid: Number(pid), startTime: startTime! };
}

/** Dead and reaped: no process, not even a zombie, holds the daemon's identity any more. */
function expectGone(daemon: Daemon): void {
  expect(processLiveness(daemon.pid, daemon.startTime)).toBe("dead");
  expect(readProcessStat(daemon.pid)?.startTime === daemon.startTime).toBe(false);
}

function expectKilledAndRecorded(result: ProcessResult, daemon: Daemon): void {
  const record = result.processes.find((process) => process.pid === daemon.pid && process.start_time === daemon.startTime);
  // The daemon was reparented to this process (the child subreaper), so /proc showed it as our child.
  expect(record?.parent_pid).toBe(process.pid);
  expect(record?.session_id).not.toBe(result.pid);
  expect(record?.alive_after_cleanup).toBe(false);
  expectGone(daemon);
}

describe("a double-forking daemon ends with its run", () => {
  const modes = [
    { name: "in a run cgroup", cgroup: true, expected: "cgroup", skip: !cgroupWritable() },
    { name: "with the child subreaper alone", cgroup: false, expected: "subreaper", skip: !isLinux },
  ] as const;
  for (const mode of modes) {
    test.skipIf(mode.skip)(
      `${mode.name}: no process of the daemon is left and cleanup is verified`,
      async () => {
        // Repeated, because the old failure was a race that a single run could miss: 13 of 21 survived.
        for (let attempt = 0; attempt < 5; attempt += 1) {
          const report = join(scratch.path, `daemon-${mode.expected}-${attempt}`);
          const { result } = await run(
            scratch.path,
            ["python3", join(fixtures, "daemon.py"), report],
            {},
            { containment: { cgroup: mode.cgroup }, gracePeriodMs: 500 },
          );
          expect(result.exit_code).toBe(0);
          expect(result.descendant_containment).toBe(mode.expected);
          expect(result.cleanup_complete).toBe(true);
          expect(result.leftover_processes).toBeGreaterThanOrEqual(1);
          expect(result.limitations).toEqual([]);
          expectKilledAndRecorded(result, readDaemon(report));
        }
      },
      60_000,
    );
  }

  test.skipIf(!isLinux)(
    "among concurrent runs, orphans go to the run whose marker they carry; an unmarked one is not claimed by a guess",
    async () => {
      // Run A waits for a release file; meanwhile B (marked) and C (unmarked) each leave a daemon.
      const release = join(scratch.path, "release-a");
      const aOut = join(scratch.path, "a.out");
      const waiting = runProcess(
        {
          argv: [
            "python3",
            "-c",
            `import os, time\nprint("a ready", flush=True)\nwhile not os.path.exists(${JSON.stringify(release)}): time.sleep(0.01)`,
          ],
          cwd: scratch.path,
          deadline: Date.now() + 120_000,
          stdoutPath: aOut,
          stderrPath: join(scratch.path, "a.err"),
          trustedEnvironment: { FLAMEOX_RUN_ID: "run-a" },
        },
        { containment: { cgroup: false }, gracePeriodMs: 500 },
      );
      try {
        await waitForOutput(aOut, /a ready/);
        const marked = await run(
          scratch.path,
          ["python3", join(fixtures, "daemon.py"), join(scratch.path, "daemon-b")],
          { trustedEnvironment: { FLAMEOX_RUN_ID: "run-b" } },
          { containment: { cgroup: false }, gracePeriodMs: 500 },
        );
        expect(marked.result.cleanup_complete).toBe(true);
        expectKilledAndRecorded(marked.result, readDaemon(join(scratch.path, "daemon-b")));

        const unmarked = await run(
          scratch.path,
          ["python3", join(fixtures, "daemon.py"), join(scratch.path, "daemon-c")],
          {},
          { containment: { cgroup: false }, gracePeriodMs: 500 },
        );
        const daemonC = readDaemon(join(scratch.path, "daemon-c"));
        expect(unmarked.result.cleanup_complete).toBe(false);
        expect(unmarked.result.limitations.join(" ")).toContain("could not be attributed among concurrent runs");
        expect(processLiveness(daemonC.pid, daemonC.startTime)).toBe("alive");

        writeFileSync(release, "");
        const alone = await waiting;
        // Once A is the only run, the unattributed orphan can only be from a run of ours: A ends it.
        expect(alone.exit_code).toBe(0);
        expect(alone.cleanup_complete).toBe(true);
        expect(alone.leftover_processes).toBeGreaterThanOrEqual(1);
        expectGone(daemonC);
      } finally {
        if (!existsSync(release)) writeFileSync(release, "");
        await waiting.catch(() => undefined);
      }
    },
    90_000,
  );
});
