/**
 * The suite's per-test deadline reaches bun: a test that sleeps past bun's 5 s default passes under the
 * arguments scripts/test.ts uses and times out without them. The sleep is the workload under test here (a
 * test that outlives the default), not a stand-in for an event; it costs wall time, no CPU.
 */
import { expect, setDefaultTimeout, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { bunTestArguments, perTestDeadlineMs } from "../../../scripts/test-deadline.ts";
import { temporaryFolder } from "../../support/temporary-folders.ts";

// Two nested runs of 5.5 s each, plus bun's start-up on a loaded machine.
setDefaultTimeout(90_000);

const bunDefaultMs = 5_000;
const sleepMs = bunDefaultMs + 500;

function nestedRun(argv: string[], cwd: string): { exitCode: number; output: string } {
  const result = Bun.spawnSync(argv, { cwd, stdout: "pipe", stderr: "pipe", env: { ...process.env, FORCE_COLOR: "0" } });
  return { exitCode: result.exitCode ?? -1, output: `${result.stdout.toString()}${result.stderr.toString()}` };
}

test("a test longer than bun's 5 s default passes under the suite's --timeout and fails without it", () => {
  expect(perTestDeadlineMs).toBeGreaterThan(sleepMs);
  const folder = temporaryFolder("deadline");
  writeFileSync(
    join(folder, "outlives-default.test.ts"),
    `import { test } from "bun:test";\ntest("outlives the default", async () => { await Bun.sleep(${sleepMs}); });\n`,
  );
  const withDeadline = nestedRun(bunTestArguments(process.execPath, ["./outlives-default.test.ts"]), folder);
  expect(withDeadline.output).toContain("1 pass");
  expect(withDeadline.exitCode).toBe(0);
  const withoutDeadline = nestedRun([process.execPath, "test", "./outlives-default.test.ts"], folder);
  expect(withoutDeadline.output).toContain(`timed out after ${bunDefaultMs}ms`);
  expect(withoutDeadline.exitCode).not.toBe(0);
});
