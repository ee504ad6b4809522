import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { CommandRunner } from "../adapters/capture-adapter.ts";
import { runProcess } from "../exec/broker.ts";

/** Extraction helpers and probes run through the one broker, with output captured to scratch files. */
export function brokerCommandRunner(scratchDirectory: string): CommandRunner {
  return async (argv, options) => {
    mkdirSync(scratchDirectory, { recursive: true });
    const stamp = crypto.randomUUID();
    const stdoutPath = join(scratchDirectory, `${stamp}.stdout`);
    const stderrPath = join(scratchDirectory, `${stamp}.stderr`);
    const result = await runProcess(
      {
        argv,
        cwd: options.cwd ?? scratchDirectory,
        deadline: Date.now() + options.timeoutMs,
        stdoutPath,
        stderrPath,
        trustedEnvironment: options.env ?? {},
        outputBudgetBytes: 256 * 1024 * 1024,
      },
      { sampling: false },
    );
    return { exitCode: result.exit_code, stdout: readFileSync(stdoutPath, "utf8"), stderr: readFileSync(stderrPath, "utf8") };
  };
}
