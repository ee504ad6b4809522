import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { type BrokerClock, runProcess, type ProcessOptions, type ProcessRequest, type ProcessResult } from "../../../src/exec/broker.ts";
import { processLiveness } from "../../../src/exec/identity.ts";
import { FlameoxError } from "../../../src/domain/errors.ts";
import { expect } from "bun:test";

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

/** A broker clock that stands still: the deadline fires only when the test says so. */
export class ManualClock implements BrokerClock {
  private current = Date.now();
  private readonly timers: { at: number; callback: () => void }[] = [];

  now(): number {
    return this.current;
  }

  at(at: number, callback: () => void): () => void {
    const timer = { at, callback };
    this.timers.push(timer);
    return () => {
      const index = this.timers.indexOf(timer);
      if (index >= 0) this.timers.splice(index, 1);
    };
  }

  /** Moves time to `to` and runs every timer that is then due. */
  advanceTo(to: number): void {
    this.current = Math.max(this.current, to);
    for (const timer of this.timers.filter((candidate) => candidate.at <= this.current)) {
      this.timers.splice(this.timers.indexOf(timer), 1);
      timer.callback();
    }
  }
}

/** Waits for a line matching `pattern` in a file the broker is writing; the bound only stops a broken run. */
export async function waitForOutput(path: string, pattern: RegExp, boundMs = 60_000): Promise<string> {
  const giveUp = Date.now() + boundMs;
  for (;;) {
    const text = existsSync(path) ? readFileSync(path, "utf8") : "";
    if (pattern.test(text)) return text;
    if (Date.now() > giveUp) throw new Error(`${path} never matched ${pattern}: ${JSON.stringify(text.slice(-200))}`);
    await Bun.sleep(10);
  }
}

/** The FlameoxError `action` rejects with; any other outcome fails the test. */
export async function refusal(action: () => Promise<unknown>): Promise<FlameoxError> {
  try {
    await action();
  } catch (error) {
    expect(error).toBeInstanceOf(FlameoxError);
    return error as FlameoxError;
  }
  throw new Error("expected a FlameoxError");
}
