/**
 * py-spy `record --format raw`: folded stacks of `function (file:line)` frames (checked against
 * py-spy 0.4.3). With `--threads` each line starts with `thread (<tid>)[: <name>]`, with
 * `--subprocesses` with `process <pid>:"<command line>"`; `--nolineno` drops the `:line`.
 * An empty stack (` 1`) is an idle sample.
 */
import type { EvidenceSink } from "../../domain/evidence.ts";
import { extractFolded, type CollapsedOptions } from "./collapsed.ts";
import type { ExtractResult } from "./common.ts";

const processPattern = /^process (\d+):"/;
const threadPattern = /^thread \(([^)]*)\)(?:: ([^;]*))?(?:;|$)/;

/** Takes py-spy's process/thread pseudo-frames off the front of a folded stack. */
export function splitPySpyContext(stack: string): { thread: string | null; process: string | null; tid: string | null; stack: string } {
  let rest = stack;
  let process: string | null = null;
  let thread: string | null = null;
  let tid: string | null = null;
  const processMatch = processPattern.exec(rest);
  if (processMatch) {
    process = processMatch[1] as string;
    // The command line may hold ';'; the pseudo-frame ends at the first `";` after it.
    const close = rest.indexOf('";', processMatch[0].length);
    rest = close === -1 ? (rest.endsWith('"') ? "" : rest) : rest.slice(close + 2);
  }
  const threadMatch = threadPattern.exec(rest);
  if (threadMatch) {
    const name = threadMatch[2]?.trim();
    tid = threadMatch[1] as string;
    thread = name ? name : tid;
    rest = rest.slice(threadMatch[0].length);
  }
  return { thread, process, tid, stack: rest };
}

export async function extractPySpyRaw(path: string, sink: EvidenceSink, options: CollapsedOptions): Promise<ExtractResult> {
  const result = await extractFolded(path, sink, options, {
    language: "python",
    allowFileOnly: true,
    splitContext: splitPySpyContext,
  });
  result.producer = "py-spy";
  return result;
}
