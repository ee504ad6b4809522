import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { runProcess, type ProcessOptions, type ProcessRequest, type ProcessResult } from "../../../src/exec/broker.ts";
import { processLiveness } from "../../../src/exec/identity.ts";

export const fixtures = resolve(import.meta.dir, "../../fixtures/exec");

export function scratchDirectory(): { path: string; remove: () => void } {
  const path = mkdtempSync(join(tmpdir(), "flameox-exec-test-"));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

export type Ran = { result: ProcessResult; stdout: string; stderr: string };

/** Runs argv through the broker with output files in `directory`. */
export async function run(
  directory: string,
  argv: string[],
  request: Partial<ProcessRequest> = {},
  options: ProcessOptions = {},
): Promise<Ran> {
  const stdoutPath = join(directory, `stdout-${Math.random().toString(16).slice(2)}`);
  const stderrPath = join(directory, `stderr-${Math.random().toString(16).slice(2)}`);
  const result = await runProcess({ argv, cwd: directory, deadline: Date.now() + 60_000, stdoutPath, stderrPath, ...request }, options);
  return { result, stdout: readFileSync(stdoutPath, "utf8"), stderr: readFileSync(stderrPath, "utf8") };
}

/** `kill -0`, except that a zombie (dead, not yet reaped) counts as gone. */
export function stillRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  return processLiveness(pid, null) !== "dead";
}
