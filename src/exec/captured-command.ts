import { type BriefCommandOptions, type BriefOutcome, runBriefCommand } from "./brief-command.ts";
import { executableDigest } from "./executable.ts";

/** Short identity commands (git, an interpreter's version probe), their output read whole within a budget. */

export type Captured = { result: BriefOutcome; stdout: Buffer; stderr: string };

export type CapturedCommandOptions = Omit<BriefCommandOptions, "gracePeriodMs">;

export async function runCaptured(argv: string[], options: CapturedCommandOptions): Promise<Captured> {
  const { outcome, stdout, stderr } = await runBriefCommand(argv, { ...options, gracePeriodMs: 1_000 });
  return { result: outcome, stdout, stderr: stderr.toString("utf8").slice(0, 4_000) };
}

export function succeeded(captured: Captured): boolean {
  return (
    captured.result.exit_code === 0 &&
    !captured.result.timed_out &&
    !captured.result.cancelled &&
    !captured.result.truncated &&
    !captured.result.output_abandoned
  );
}

export function describeFailure(what: string, captured: Captured): string {
  const result = captured.result;
  if (result.timed_out) return `${what} timed out`;
  if (result.cancelled) return `${what} was cancelled`;
  if (result.truncated) return `${what} printed more than its output budget`;
  if (result.output_abandoned) return `${what} exited, but a process it started kept its output open past the deadline`;
  const reason = result.terminating_signal ? `signal ${result.terminating_signal}` : `exit code ${result.exit_code}`;
  const message = captured.stderr.trim().split("\n")[0] ?? "";
  return `${what} failed (${reason})${message ? `: ${message}` : ""}`;
}

export async function fileSha256(path: string): Promise<string> {
  return (await executableDigest(path)).slice("sha256:".length);
}
