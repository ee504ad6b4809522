/**
 * py-spy `record --format raw`: folded stacks of `function (file:line)` frames (checked against
 * py-spy 0.4.3). With `--threads` each line starts with `thread (<tid>)[: <name>]`, with
 * `--subprocesses` with `process <pid>:"<command line>"` (a child's with its parents' too);
 * `--nolineno` drops the `:line`.
 * An empty stack (` 1`) is an idle sample.
 */
import type { EvidenceSink } from "../../domain/evidence.ts";
import { extractFolded, type CollapsedOptions } from "./collapsed.ts";
import type { ExtractResult } from "./common.ts";

const processPattern = /^process (\d+):"/;
const threadPattern = /^thread \(([^)]*)\)(?:: ([^;]*))?(?:;|$)/;

/** Whether a frame name is one of py-spy's process or thread pseudo-frames. */
export function isPySpyContextFrame(name: string): boolean {
  return processPattern.test(name) || /^thread \([^)]*\)(?:: .*)?$/.test(name);
}

export type PySpyContext = { thread: string | null; process: string | null; tid: string | null; stack: string; frames: number };

/**
 * Takes py-spy's process/thread pseudo-frames off the front of a folded stack. A child process's
 * samples start with its parents' `process` frames too (`process 1:"…";process 2:"…";thread (2)`):
 * all come off, and the innermost names the process.
 */
export function splitPySpyContext(stack: string): PySpyContext {
  let rest = stack;
  let process: string | null = null;
  let thread: string | null = null;
  let tid: string | null = null;
  let frames = 0;
  for (let processMatch = processPattern.exec(rest); processMatch; processMatch = processPattern.exec(rest)) {
    process = processMatch[1] as string;
    frames++;
    // The command line may hold ';'; the pseudo-frame ends at the first `";` after it.
    const close = rest.indexOf('";', processMatch[0].length);
    if (close === -1) {
      rest = rest.endsWith('"') ? "" : rest;
      break;
    }
    rest = rest.slice(close + 2);
  }
  const threadMatch = threadPattern.exec(rest);
  if (threadMatch) {
    const name = threadMatch[2]?.trim();
    tid = threadMatch[1] as string;
    thread = name ? name : tid;
    frames++;
    rest = rest.slice(threadMatch[0].length);
  }
  return { thread, process, tid, stack: rest, frames };
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
