import { afterAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { childrenListsAvailable, readChildren, readThreadChildren } from "../../../src/exec/proc.ts";
import { python } from "../../support/project.ts";
import { scratchDirectory, waitForOutput } from "./helpers.ts";

setDefaultTimeout(60_000);
const scratch = scratchDirectory();
afterAll(() => scratch.remove());

/** A parent that forks `count` sleeping children, then writes their pids (whole, by rename) to `out`. */
const forkChildren = `
import os, sys, time
count, out = int(sys.argv[1]), sys.argv[2]
pids = []
for _ in range(count):
    pid = os.fork()
    if pid == 0:
        time.sleep(300)
        os._exit(0)
    pids.append(pid)
with open(out + ".part", "w") as file:
    file.write(" ".join(map(str, pids)) + "\\n")
os.rename(out + ".part", out)
time.sleep(300)
`;

/** Enough children that their list passes one 4,096-byte page whatever the pids: even 3-digit pids take 4 bytes each. */
const childCount = 1200;

describe.skipIf(!childrenListsAvailable())("readThreadChildren", () => {
  test("reads a children list longer than the page the kernel returns per read", async () => {
    const out = join(scratch.path, "children.pids");
    const parent = Bun.spawn([python(), "-c", forkChildren, String(childCount), out], {
      stdout: "ignore",
      stderr: "ignore",
      detached: true,
    });
    try {
      const expected = (await waitForOutput(out, /\n$/)).trim().split(" ").map(Number);
      expect(expected).toHaveLength(childCount);
      // Only meaningful when the list is longer than one page, which childCount guarantees.
      const listText = readFileSync(`/proc/${parent.pid}/task/${parent.pid}/children`, "latin1");
      expect(listText.length).toBeGreaterThan(4096);
      const sorted = (pids: number[] | null): number[] => [...(pids ?? [])].sort((a, b) => a - b);
      expect(sorted(readThreadChildren(parent.pid, parent.pid))).toEqual(sorted(expected));
      expect(sorted(readChildren(parent.pid))).toEqual(sorted(expected));
    } finally {
      process.kill(-parent.pid, "SIGKILL");
    }
  });
});
