import { parsePythonTraceback, type PythonTraceback } from "../adapters/failures/python-traceback.ts";
import { projectRelativePath } from "../domain/evidence.ts";
import type { OutputRecord } from "../exec/broker.ts";
import type { RunException } from "../store/run-store.ts";

/**
 * What a run printed, as agents see it: the end of each stream (already redacted by the broker),
 * cut to a few lines so get_run and a receipt stay within the result budget, with host paths made
 * project-relative; and for a Python crash the exception that ended it.
 */

/** Characters of each stream's end kept with the run; stderr gets more because that is where crashes are told. */
export const tailCharacters = { stdout: 400, stderr: 1_000 } as const;

export type StreamTail = { tail: string; tail_complete: boolean };

type Places = { projectRoot: string; workspaceRoot: string; home: string | null };

/** Absolute paths of this host replaced by the names agents know: `.diagnostics/…`, project-relative, `~/…`. */
function withoutHostPaths(text: string, places: Places): string {
  let result = text.replaceAll(`${places.workspaceRoot}/`, ".diagnostics/").replaceAll(`${places.projectRoot}/`, "");
  if (places.home && places.home.length > 1) result = result.replaceAll(`${places.home}/`, "~/");
  return result;
}

/** The last `characters` of a stream, starting at a line boundary when the cut falls inside a line. */
export function streamTail(record: Pick<OutputRecord, "tail" | "tail_complete">, characters: number, places: Places): StreamTail {
  const text = withoutHostPaths(record.tail, places);
  if (text.length <= characters) return { tail: text, tail_complete: record.tail_complete };
  const cut = text.slice(text.length - characters);
  const newline = cut.indexOf("\n");
  return { tail: newline >= 0 && newline < cut.length - 1 ? cut.slice(newline + 1) : cut, tail_complete: false };
}

const keptFrames = 3;

function summarize(traceback: PythonTraceback, places: Places): RunException {
  const frames = traceback.frames.slice(-keptFrames);
  return {
    language: "python",
    exception_type: traceback.exception_type,
    message: withoutHostPaths(traceback.message, places),
    frames: frames.map((frame) => ({ ...frame, file: withoutHostPaths(projectRelativePath(frame.file, places.projectRoot)!, places) })),
    frames_omitted: traceback.frames_omitted + traceback.frames.length - frames.length,
    chained: traceback.chained
      ? {
          relation: traceback.chained.relation,
          exception_type: traceback.chained.exception_type,
          message: withoutHostPaths(traceback.chained.message, places),
        }
      : null,
  };
}

/** The Python exception a failed run's stderr ends with, or null when it shows none. */
export function crashException(stderr: Pick<OutputRecord, "tail">, places: Places): RunException | null {
  const traceback = parsePythonTraceback(stderr.tail);
  return traceback ? summarize(traceback, places) : null;
}

export function placesOf(workspace: { projectRoot: string; root: string }): Places {
  return { projectRoot: workspace.projectRoot, workspaceRoot: workspace.root, home: process.env.HOME ?? null };
}
