import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runProcess } from "./broker.ts";
import type { ProcessResult } from "./broker-types.ts";
import { executableDigest } from "./executable.ts";

/** Short identity commands (git, an interpreter's version probe) run through the broker, output read back whole. */

export type Captured = { result: ProcessResult; stdout: Buffer; stderr: string };

export type CapturedCommandOptions = {
  cwd: string;
  deadline: number;
  outputBudgetBytes: number;
  trustedEnvironment?: Record<string, string>;
  parentEnvironment?: Record<string, string | undefined>;
  signal?: AbortSignal;
};

export async function runCaptured(argv: string[], options: CapturedCommandOptions): Promise<Captured> {
  const scratch = mkdtempSync(join(tmpdir(), "flameox-identity-"));
  try {
    const result = await runProcess(
      {
        argv,
        cwd: options.cwd,
        deadline: options.deadline,
        stdoutPath: join(scratch, "stdout"),
        stderrPath: join(scratch, "stderr"),
        outputBudgetBytes: options.outputBudgetBytes,
        trustedEnvironment: options.trustedEnvironment,
      },
      { sampling: false, gracePeriodMs: 1_000, parentEnvironment: options.parentEnvironment, signal: options.signal },
    );
    const stdout = readFileSync(join(scratch, "stdout"));
    const stderr = readFileSync(join(scratch, "stderr"), "utf8").slice(0, 4_000);
    return { result, stdout, stderr };
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

export function succeeded(captured: Captured): boolean {
  return captured.result.exit_code === 0 && !captured.result.timed_out && !captured.result.cancelled && !captured.result.stdout.truncated;
}

export function describeFailure(what: string, captured: Captured): string {
  const result = captured.result;
  if (result.timed_out) return `${what} timed out`;
  if (result.cancelled) return `${what} was cancelled`;
  if (result.stdout.truncated) return `${what} printed more than its output budget`;
  const reason = result.terminating_signal ? `signal ${result.terminating_signal}` : `exit code ${result.exit_code}`;
  const message = captured.stderr.trim().split("\n")[0] ?? "";
  return `${what} failed (${reason})${message ? `: ${message}` : ""}`;
}

export async function fileSha256(path: string): Promise<string> {
  return (await executableDigest(path)).slice("sha256:".length);
}
