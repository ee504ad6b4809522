/**
 * A log that holds failures (a sanitizer's report, a Python traceback, several of them, among other
 * output) → one `failure_report` observation per failure: its tool, the kind of error, its message
 * and its innermost frames. The log is read once, bounded: past `maxLogBytes` only its head and its
 * tail are read (failures are printed where a program starts going wrong and where it dies).
 */
import { closeSync, openSync, readSync, statSync } from "node:fs";
import { artifactParseFailed } from "../../domain/errors.ts";
import { type EvidenceSink, projectRelativePath } from "../../domain/evidence.ts";
import { type PythonTraceback, parsePythonTraceback } from "./python-traceback.ts";
import { type FailureFrame, maximumReports, SanitizerReportReader } from "./sanitizer-report.ts";

export const failureLogExtractorVersion = "flameox.failure-log@1";
export const maxLogBytes = 32 << 20;
const detectionBytes = 1 << 20;

/** The artifact kinds a failure log is registered under: a sanitizer's report, or a program's output. */
export type FailureLogKind = "sanitizer_report" | "process_output";

export type FailureRecord = {
  tool: string;
  error_kind: string;
  message: string;
  /** Innermost first, for sanitizer reports and tracebacks alike. */
  frames: FailureFrame[];
  frames_omitted: number;
  /** The exception a Python exception was raised from or while handling. */
  chained: { relation: "cause" | "context"; exception_type: string; message: string } | null;
};

export type FailureLogSummary = { failures: FailureRecord[]; byTool: Record<string, number>; limitations: string[] };

const sanitizerHeader = /^(==\d+==\s*ERROR: \w*Sanitizer: |WARNING: ThreadSanitizer: |.+?:\d+:(?:\d+:)? runtime error: )/m;
const tracebackHeader = /^\s*Traceback \(most recent call last\):\s*$/m;
const chainSeparator =
  /^(The above exception was the direct cause of the following exception:|During handling of the above exception, another exception occurred:)$/;

function readRange(path: string, start: number, length: number): string {
  const handle = openSync(path, "r");
  try {
    const buffer = Buffer.alloc(length);
    const read = readSync(handle, buffer, 0, length, start);
    return buffer.subarray(0, read).toString("utf8");
  } finally {
    closeSync(handle);
  }
}

/** What a log holds, judged from its first megabyte: sanitizer reports, a Python traceback, or neither. */
export function detectFailureLog(path: string): FailureLogKind | null {
  const head = readRange(path, 0, detectionBytes);
  if (head.includes("\u0000")) return null;
  if (sanitizerHeader.test(head)) return "sanitizer_report";
  if (tracebackHeader.test(head) && parsePythonTraceback(head) !== null) return "process_output";
  return null;
}

function readLog(path: string): { text: string; skipped: number } {
  const size = statSync(path).size;
  if (size <= maxLogBytes) return { text: readRange(path, 0, size), skipped: 0 };
  const half = maxLogBytes / 2;
  return { text: `${readRange(path, 0, half)}\n${readRange(path, size - half, half)}`, skipped: size - maxLogBytes };
}

/** Tracebacks one by one: a header starts a new one unless a chain separator joins it to the last. */
function tracebackSegments(lines: string[]): string[] {
  const segments: string[][] = [];
  let lastText = "";
  for (const line of lines) {
    if (tracebackHeader.test(line) && !chainSeparator.test(lastText)) segments.push([]);
    segments.at(-1)?.push(line);
    if (line.trim() !== "") lastText = line.trim();
  }
  return segments.map((segment) => segment.join("\n"));
}

function fromTraceback(traceback: PythonTraceback): FailureRecord {
  return {
    tool: "python",
    error_kind: traceback.exception_type,
    message: traceback.message,
    frames: [...traceback.frames]
      .reverse()
      .map((frame) => ({ function: frame.function, file: frame.file, line: frame.line, module: null })),
    frames_omitted: traceback.frames_omitted,
    chained: traceback.chained
      ? { relation: traceback.chained.relation, exception_type: traceback.chained.exception_type, message: traceback.chained.message }
      : null,
  };
}

/** Reads every sanitizer report and Python traceback of a log into failure_report observations. */
export function extractFailureLog(path: string, sink: EvidenceSink, options: { projectRoot: string | null }): FailureLogSummary {
  const { text, skipped } = readLog(path);
  const lines = text.replaceAll("\r\n", "\n").split("\n");
  const reader = new SanitizerReportReader();
  for (const line of lines) reader.line(line);
  const failures: FailureRecord[] = reader.end().map((report) => ({ ...report, chained: null }));
  for (const segment of tracebackSegments(lines)) {
    if (failures.length >= maximumReports) break;
    const traceback = parsePythonTraceback(segment);
    if (traceback) failures.push(fromTraceback(traceback));
  }
  if (failures.length === 0) {
    throw artifactParseFailed("The log holds no sanitizer report and no Python traceback.", {
      remediation: [
        "Import the stderr of a sanitizer-instrumented run (-fsanitize=address, undefined or thread) or a log with a Python traceback, or import it with kind process_output to keep it without evidence.",
      ],
    });
  }
  const byTool: Record<string, number> = {};
  for (const failure of failures) {
    failure.frames = failure.frames.map((frame) => ({ ...frame, file: projectRelativePath(frame.file, options.projectRoot) }));
    byTool[failure.tool] = (byTool[failure.tool] ?? 0) + 1;
    emit(sink, failure);
  }
  const limitations: string[] = [];
  if (skipped > 0) limitations.push(`The log is larger than ${maxLogBytes} bytes: its middle ${skipped} bytes were not read.`);
  if (reader.dropped > 0) limitations.push(`${reader.dropped} sanitizer report(s) past the first ${maximumReports} were not kept.`);
  return { failures, byTool, limitations };
}

function emit(sink: EvidenceSink, failure: FailureRecord): void {
  // The place to look: the innermost frame with a source file, else the innermost one.
  const place = failure.frames.find((frame) => frame.file !== null && frame.line !== null) ?? failure.frames[0] ?? null;
  sink.observation({
    kind: "failure_report",
    name: `${failure.tool}: ${failure.error_kind}`.slice(0, 200),
    file: place?.file ?? null,
    lines: place?.line !== null && place?.line !== undefined ? String(place.line) : null,
    context: failure.tool,
    value: JSON.stringify(failure),
  });
}
