import { expect, test, setDefaultTimeout } from "bun:test";
import { copyFileSync, existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { binaryPath, temporaryFolder } from "../support/binary.ts";

// Copies and starts the 190 MB binary in empty folders. The suite's default per-test deadline is 30 s (scripts/test-deadline.ts).
setDefaultTimeout(120_000);

test("the binary copied alone into an empty folder runs init and status with DuckDB loaded", () => {
  const folder = temporaryFolder("alone");
  const home = temporaryFolder("alone-home");
  const project = temporaryFolder("alone-project");
  const executable = join(folder, "flameox");
  copyFileSync(binaryPath(), executable);
  // No node_modules, no Bun on PATH, HOME elsewhere, no cache override: the real first-run path.
  const env = { HOME: home, PATH: "/usr/bin:/bin", LANG: "C.UTF-8" };
  const init = Bun.spawnSync([executable, "init", project, "--json"], { cwd: folder, env, stdout: "pipe", stderr: "pipe" });
  expect(init.stderr.toString()).toBe("");
  expect(init.exitCode).toBe(0);
  expect(JSON.parse(init.stdout.toString()).created).toBe(true);
  const status = Bun.spawnSync([executable, "status", "--json", "--project-root", project], {
    cwd: folder,
    env,
    stdout: "pipe",
    stderr: "pipe",
  });
  expect(status.exitCode).toBe(0);
  const result = JSON.parse(status.stdout.toString());
  expect(result.evidence_engine.version).toMatch(/^v\d+\.\d+/);
  const cache = join(home, ".cache", "flameox", "duckdb");
  expect(existsSync(cache)).toBe(true);
  const [versionFolder] = readdirSync(cache);
  expect(readdirSync(join(cache, versionFolder!))).toContain("duckdb.node");
});

test("two processes extracting DuckDB at once both succeed and leave one verified copy", async () => {
  const home = temporaryFolder("race-home");
  const project = temporaryFolder("race-project");
  const env = { HOME: home, PATH: "/usr/bin:/bin" };
  expect(Bun.spawnSync([binaryPath(), "init", project, "--json"], { env }).exitCode).toBe(0);
  const runs = Array.from({ length: 3 }, () =>
    Bun.spawn([binaryPath(), "status", "--json", "--project-root", project], { env, stdout: "pipe", stderr: "pipe" }),
  );
  const codes = await Promise.all(runs.map((child) => child.exited));
  expect(codes).toEqual([0, 0, 0]);
  for (const child of runs) expect(JSON.parse(await new Response(child.stdout).text()).evidence_engine.version).toMatch(/^v/);
});
