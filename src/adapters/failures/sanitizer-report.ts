/**
 * Sanitizer reports as the compiler runtimes print them (GCC and Clang alike): AddressSanitizer,
 * LeakSanitizer, MemorySanitizer and HWAddressSanitizer (`==pid==ERROR: <Tool>: <what>`),
 * ThreadSanitizer (`WARNING: ThreadSanitizer: <what>`) and UndefinedBehaviorSanitizer
 * (`file:line:col: runtime error: <what>`). Each report becomes the kind of error, its message and
 * the innermost frames of its first stack (where the bad access or the undefined operation was),
 * read line by line so a long log costs one pass.
 */

export type FailureFrame = { function: string | null; file: string | null; line: number | null; module: string | null };

export type SanitizerReport = {
  tool: string;
  /** What went wrong, as the sanitizer names it: `heap-buffer-overflow`, `data race`, `signed integer overflow`. */
  error_kind: string;
  message: string;
  /** Innermost first, as sanitizers print them; only the first `maximumFrames` of the first stack. */
  frames: FailureFrame[];
  frames_omitted: number;
};

const maximumFrames = 8;
const maximumMessageCharacters = 500;
/** A log of thousands of reports (UBSan repeats per occurrence) keeps the first ones. */
export const maximumReports = 1000;

const errorHeader = /^==\d+==\s*ERROR: (AddressSanitizer|LeakSanitizer|MemorySanitizer|HWAddressSanitizer): (.+)$/;
const threadHeader = /^WARNING: (ThreadSanitizer): (.+?)(?: \(pid=\d+\))?\s*$/;
const undefinedHeader = /^(.+?):(\d+):(?:\d+:)? runtime error: (.+)$/;
const summaryLine = /^SUMMARY: (\w+): (.+)$/;
const frameLine = /^\s*#\d+\s+(.*)$/;
const locationAndModule = /^(?<fn>.+?)(?:\s+(?<file>[^\s()]+?):(?<line>\d+)(?::\d+)?)?(?:\s+\((?<module>[^()]+?)\+0x[0-9a-fA-F]+\))?\s*$/;
const moduleOnly = /^\((?<module>[^()]+?)\+0x[0-9a-fA-F]+\)\s*$/;

/** `#3 0x7f… in main /src/x.c:7:12`, `#0 bump /src/t.c:4 (a.out+0x11cf)`, `#2 0x7f… (/lib/libc.so.6+0x29d90)`. */
export function parseFrame(text: string): FailureFrame | null {
  const body = frameLine.exec(text)?.[1];
  if (body === undefined) return null;
  const rest = body.replace(/^0x[0-9a-fA-F]+\s+/, "").replace(/^in\s+/, "");
  const bare = moduleOnly.exec(rest);
  if (bare) return { function: null, file: null, line: null, module: bare.groups!.module! };
  const match = locationAndModule.exec(rest);
  if (!match) return null;
  const { fn, file, line, module } = match.groups!;
  return {
    function: fn === "<null>" ? null : fn!,
    file: file ?? null,
    line: line ? Number(line) : null,
    module: module ?? null,
  };
}

/** A stable name for the kind of an undefined-behaviour message: its lead phrase, numbers and quoted types taken out. */
function undefinedKind(message: string): string {
  const lead = message.includes(":") ? message.slice(0, message.indexOf(":")) : message;
  return lead
    .replace(/0x[0-9a-fA-F]+/g, "0x…")
    .replace(/'[^']*'/g, "'…'")
    .replace(/\b\d+\b/g, "N")
    .slice(0, 80);
}

/** ASan's `heap-buffer-overflow on address …`, `attempting double-free on …`, `SEGV on unknown address …`. */
function errorKind(tool: string, message: string): string {
  if (tool === "LeakSanitizer") return "memory-leak";
  const attempting = /^attempting (\S+)/.exec(message);
  return attempting ? attempting[1]! : (message.split(/\s+/)[0] ?? message);
}

type Draft = SanitizerReport & { stack: "none" | "first" | "done"; undefinedBehaviour: boolean };

/** Feed lines in order; `reports` holds every complete report (at most `maximumReports`). */
export class SanitizerReportReader {
  readonly reports: SanitizerReport[] = [];
  /** Reports past `maximumReports`, counted. */
  dropped = 0;
  private draft: Draft | null = null;

  line(text: string): void {
    const started = this.start(text);
    if (started) {
      this.finish();
      this.draft = started;
      if (started.undefinedBehaviour) {
        // UBSan names the place in its header; a stack follows only with print_stacktrace=1.
        const header = undefinedHeader.exec(text)!;
        started.frames.push({ function: null, file: header[1]!, line: Number(header[2]), module: null });
      }
      return;
    }
    const draft = this.draft;
    if (!draft) return;
    const summary = summaryLine.exec(text);
    if (summary) {
      if (!draft.undefinedBehaviour) draft.error_kind = summaryKind(summary[2]!) ?? draft.error_kind;
      this.finish();
      return;
    }
    const frame = parseFrame(text);
    if (frame) {
      this.addFrame(draft, frame);
      return;
    }
    if (text.trim() === "" && draft.stack === "first") draft.stack = "done";
    // UBSan's report is its header and (optionally) one stack: anything else ends it.
    else if (draft.undefinedBehaviour && text.trim() !== "") this.finish();
  }

  /** The last report, if the log ends inside it. */
  end(): SanitizerReport[] {
    this.finish();
    return this.reports;
  }

  private start(text: string): Draft | null {
    const error = errorHeader.exec(text) ?? threadHeader.exec(text);
    if (error) {
      const message = error[2]!.trim().slice(0, maximumMessageCharacters);
      return draftOf(error[1]!, errorKind(error[1]!, message), message, false);
    }
    const behaviour = undefinedHeader.exec(text);
    if (behaviour) {
      const message = behaviour[3]!.trim().slice(0, maximumMessageCharacters);
      return draftOf("UndefinedBehaviorSanitizer", undefinedKind(message), message, true);
    }
    return null;
  }

  private addFrame(draft: Draft, frame: FailureFrame): void {
    if (draft.stack === "done") return;
    if (draft.undefinedBehaviour && draft.stack === "none") draft.frames.length = 0;
    draft.stack = "first";
    if (draft.frames.length < maximumFrames) draft.frames.push(frame);
    else draft.frames_omitted += 1;
  }

  private finish(): void {
    const draft = this.draft;
    this.draft = null;
    if (!draft) return;
    if (this.reports.length >= maximumReports) {
      this.dropped += 1;
      return;
    }
    const { stack: _stack, undefinedBehaviour: _undefined, ...report } = draft;
    this.reports.push(report);
  }
}

function draftOf(tool: string, kind: string, message: string, undefinedBehaviour: boolean): Draft {
  return { tool, error_kind: kind, message, frames: [], frames_omitted: 0, stack: "none", undefinedBehaviour };
}

/** `heap-buffer-overflow /src/x.c:3 in read_past_end` → `heap-buffer-overflow`; `data race /src/t.c:4 in bump` → `data race`. */
function summaryKind(text: string): string | null {
  const match = /^(.+?)(?:\s+\S+:\d+(?::\d+)?(?:\s+in\s+.+)?|\s+\(.+\))?\s*$/.exec(text);
  return match?.[1]?.trim() || null;
}
