import { processFailed } from "../../domain/errors.ts";
import type { CommandRunner } from "../capture-adapter.ts";

/**
 * Runs `script` in `python` in isolated mode (-I: no user site, no PYTHON* variables) and returns the
 * JSON its last line of stdout holds. An interpreter that exits non-zero, or whose last line is not a
 * JSON object or array, is PROCESS_FAILED with the end of its stderr; callers that know what the
 * question was for retell it with their own recovery.
 */
export async function askPython(
  python: string,
  run: CommandRunner,
  question: { script: string; argv: string[]; timeoutMs: number },
): Promise<unknown> {
  const result = await run([python, "-I", "-c", question.script, ...question.argv], { timeoutMs: question.timeoutMs });
  const last = result.stdout.trim().split("\n").pop() ?? "";
  if (result.exitCode === 0 && /^[[{]/.test(last)) {
    try {
      return JSON.parse(last);
    } catch {
      // A line that only starts like JSON is refused below like any other answer that is not JSON.
    }
  }
  const detail = result.stderr.trim().split("\n").slice(-3).join(" | ").slice(-500);
  throw processFailed(`the interpreter could not be asked (exit ${result.exitCode})${detail ? `: ${detail}` : ""}`, {
    details: { exit_code: result.exitCode },
    remediation: ["Check that the interpreter starts and can import json and importlib.metadata, then repeat the call."],
  });
}
