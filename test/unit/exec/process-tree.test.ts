import { afterAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { join } from "node:path";
import { becomeChildSubreaper, reapChild } from "../../../src/exec/libc.ts";
import { childrenListsAvailable, readProcessStat } from "../../../src/exec/proc.ts";
import { ProcessTreeTracker } from "../../../src/exec/process-tree.ts";
import { waitFor } from "../../support/wait.ts";
import { scratchDirectory, stillRunning, waitForOutput } from "./helpers.ts";

setDefaultTimeout(60_000);
const scratch = scratchDirectory();
afterAll(() => scratch.remove());

/** A tree whose pids it writes out once all of it exists: bash → sleep, bash → subshell → sleep. */
function spawnTree(name: string): { root: Bun.Subprocess; ready: Promise<number[]> } {
  const out = join(scratch.path, `${name}.pids`);
  const root = Bun.spawn(
    [
      "bash",
      "-c",
      `sleep 300 & a=$!; (sleep 301 & echo $! > ${out}.inner; wait) & b=$!; while [ ! -s ${out}.inner ]; do sleep 0.01; done; echo "$a $b $(cat ${out}.inner)" > ${out}; wait`,
    ],
    {
      stdout: "ignore",
      stderr: "ignore",
      detached: true,
    },
  );
  return { root, ready: waitForOutput(out, /^\d+ \d+ \d+\n/).then((text) => text.trim().split(" ").map(Number)) };
}

function end(root: Bun.Subprocess): void {
  try {
    process.kill(-root.pid, "SIGKILL");
  } catch {
    // Already gone.
  }
}

describe.skipIf(!childrenListsAvailable())("ProcessTreeTracker.walk: the tree from children lists, without scanning /proc", () => {
  test("finds children and grandchildren born after the last full scan, and sees them go", async () => {
    const { root, ready } = spawnTree("walk");
    try {
      const tracker = new ProcessTreeTracker(root.pid);
      const members = await ready;
      const walked = new Set(tracker.walk().map((member) => member.pid));
      for (const pid of [root.pid, ...members]) expect(walked).toContain(pid);
      // The same set a full scan finds.
      expect(new Set(new ProcessTreeTracker(root.pid).refresh().map((member) => member.pid))).toEqual(walked);
      const grandchild = members[2]!;
      process.kill(grandchild, "SIGKILL");
      await waitFor("the grandchild to die", () => !stillRunning(grandchild));
      expect(tracker.walk().map((member) => member.pid)).not.toContain(grandchild);
      expect(tracker.all().find((member) => member.pid === grandchild)?.alive).toBe(false);
    } finally {
      end(root);
    }
  });

  test("an orphan reparented to this process (child subreaper) is found among its own children when claimed", async () => {
    if (!(await becomeChildSubreaper())) return;
    const out = join(scratch.path, "orphan.pid");
    // The subshell exits at once: its setsid'd sleep is reparented to this process, outside the root's session.
    const root = Bun.spawn(["bash", "-c", `(setsid sleep 302 & echo $! > ${out}); sleep 300`], {
      stdout: "ignore",
      stderr: "ignore",
      detached: true,
    });
    try {
      const tracker = new ProcessTreeTracker(root.pid, { claim: (stat) => stat.parentPid === process.pid && stat.pid !== root.pid });
      const orphan = Number((await waitForOutput(out, /^\d+\n/)).trim());
      await waitFor("the orphan to be reparented here", () => readProcessStat(orphan)?.parentPid === process.pid);
      expect(tracker.walk().map((member) => member.pid)).toContain(orphan);
      process.kill(orphan, "SIGKILL");
      await waitFor("the orphan to be reaped", async () => (await reapChild(orphan)) || !stillRunning(orphan));
    } finally {
      end(root);
    }
  });
});
