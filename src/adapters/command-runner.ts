/**
 * Helper commands (probes, extraction helpers) run through the one broker like every other process;
 * their output goes to files in a scratch folder and is read back whole, within an output budget.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runProcess } from "../exec/broker.ts";
import type { CommandResult, CommandRunner } from "./capture-adapter.ts";

async function runCaptured(
  argv: string[],
  options: Parameters<CommandRunner>[1],
  scratch: { directory: string; stem: string; outputBudgetBytes: number },
): Promise<CommandResult> {
  const stdoutPath = join(scratch.directory, `${scratch.stem}.stdout`);
  const stderrPath = join(scratch.directory, `${scratch.stem}.stderr`);
  const result = await runProcess(
    {
      argv,
      cwd: options.cwd ?? scratch.directory,
      deadline: Date.now() + options.timeoutMs,
      stdoutPath,
      stderrPath,
      trustedEnvironment: options.env ?? {},
      outputBudgetBytes: scratch.outputBudgetBytes,
    },
    { sampling: false },
  );
  return { exitCode: result.exit_code, stdout: readFileSync(stdoutPath, "utf8"), stderr: readFileSync(stderrPath, "utf8") };
}

/** Extraction helpers write into the run's scratch folder, which outlives them; their output may be large. */
export function brokerCommandRunner(scratchDirectory: string): CommandRunner {
  return async (argv, options) => {
    mkdirSync(scratchDirectory, { recursive: true });
    return runCaptured(argv, options, { directory: scratchDirectory, stem: crypto.randomUUID(), outputBudgetBytes: 256 * 1024 * 1024 });
  };
}

/** Probes get a scratch folder of their own, removed after; what they print is short. */
export function probeRunner(): CommandRunner {
  return async (argv, options) => {
    const scratch = mkdtempSync(join(tmpdir(), "flameox-probe-"));
    try {
      return await runCaptured(argv, options, { directory: scratch, stem: "probe", outputBudgetBytes: 4 * 1024 * 1024 });
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  };
}
