/**
 * Python tracebacks as CPython prints them, read back into the exception that ended the program:
 * its type, message and innermost frames, and the exception it was chained from. The text is often
 * only the tail of a stream (a bounded ring, an imported log), so a traceback whose header was cut
 * off still parses from its first frame line.
 */

export type TracebackFrame = { file: string; line: number | null; function: string };

export type PythonTraceback = {
  exception_type: string;
  message: string;
  /** Innermost last, as Python prints them; only the innermost `maximumFrames` are kept. */
  frames: TracebackFrame[];
  /** Frames of this traceback the text showed but `frames` leaves out (outer ones, or cut from the text). */
  frames_omitted: number;
  /** The exception this one was raised from (`cause`: `raise … from …`) or while handling (`context`). */
  chained?: PythonTraceback & { relation: "cause" | "context" };
};

const maximumFrames = 5;
const maximumMessageCharacters = 500;
const maximumChainDepth = 3;

const headerPattern = /^\s*(?:Exception Group )?Traceback \(most recent call last\):\s*$/;
const framePattern = /^\s+File "(.+)", line (\d+)(?:, in (.+))?\s*$/;
/** CPython folds a frame repeated more than three times (recursion) into this note. */
const repeatPattern = /^\s*\[Previous line repeated (\d+) more times?\]\s*$/;
const causeSeparator = "The above exception was the direct cause of the following exception:";
const contextSeparator = "During handling of the above exception, another exception occurred:";
/** `module.Type: message` or a bare `Type`; dotted names, optionally generic-looking (`ExceptionGroup`). */
const exceptionPattern = /^([A-Za-z_][\w]*(?:\.[A-Za-z_][\w]*)*)(?::\s?(.*))?$/;
/** CPython's own `  + Exception Group Traceback` tree prefixes; stripped so the frames inside still read. */
const groupPrefix = /^\s*[|+](?:-+(?: \d+ -+)?|\s)\s?/;

type Block = {
  frames: TracebackFrame[];
  framesSeen: number;
  exception: { type: string; message: string } | null;
  relation: "cause" | "context" | null;
};

/** The exception that ended the program, or null when the text holds no complete traceback. */
export function parsePythonTraceback(text: string): PythonTraceback | null {
  const blocks = readBlocks(text.replaceAll("\r\n", "\n").split("\n"));
  // The last complete block is the exception that escaped; the ones before it, joined by a separator, are its chain.
  let index = blocks.length - 1;
  while (index >= 0 && blocks[index]!.exception === null) index -= 1;
  if (index < 0) return null;
  return assemble(blocks, index, 0);
}

function assemble(blocks: Block[], index: number, depth: number): PythonTraceback {
  const block = blocks[index]!;
  const kept = block.frames.slice(-maximumFrames);
  const result: PythonTraceback = {
    exception_type: block.exception!.type,
    message: block.exception!.message,
    frames: kept,
    frames_omitted: block.framesSeen - kept.length,
  };
  const previous = blocks[index - 1];
  if (block.relation !== null && previous?.exception && depth + 1 < maximumChainDepth) {
    result.chained = { ...assemble(blocks, index - 1, depth + 1), relation: block.relation };
  }
  return result;
}

function readBlocks(lines: string[]): Block[] {
  const blocks: Block[] = [];
  let current: Block | null = null;
  let pendingRelation: Block["relation"] = null;
  for (const raw of lines) {
    const line = raw.replace(groupPrefix, "");
    if (headerPattern.test(line)) {
      current = { frames: [], framesSeen: 0, exception: null, relation: pendingRelation };
      blocks.push(current);
      pendingRelation = null;
      continue;
    }
    const trimmed = line.trim();
    if (trimmed === causeSeparator || trimmed === contextSeparator) {
      pendingRelation = trimmed === causeSeparator ? "cause" : "context";
      current = null;
      continue;
    }
    const frame = framePattern.exec(line);
    if (frame) {
      // A frame without a header: the text began inside a traceback (the head of the stream was cut).
      if (current === null || current.exception !== null) {
        current = { frames: [], framesSeen: 0, exception: null, relation: null };
        blocks.push(current);
      }
      current.frames.push({ file: frame[1]!, line: Number(frame[2]), function: frame[3]?.trim() ?? "<unknown>" });
      if (current.frames.length > maximumFrames) current.frames.shift();
      current.framesSeen += 1;
      continue;
    }
    if (current === null || current.exception !== null || trimmed === "") continue;
    const repeated = repeatPattern.exec(line);
    if (repeated) {
      current.framesSeen += Number(repeated[1]);
      continue;
    }
    // Source lines, carets and SyntaxError's pointer are indented; the exception line is not.
    if (/^\s/.test(line)) continue;
    const exception = exceptionPattern.exec(trimmed);
    if (exception && (current.framesSeen > 0 || exception[2] !== undefined)) {
      current.exception = { type: exception[1]!, message: (exception[2] ?? "").slice(0, maximumMessageCharacters) };
    } else {
      // Something else interrupted the traceback (interleaved output): it is not one we can read.
      blocks.pop();
      current = null;
    }
  }
  return blocks;
}
