/**
 * Text formats told apart by their first lines: GHC reports, DTrace aggregated stacks, `perf script`
 * output, folded stacks (collapsed and py-spy raw, a few bad lines allowed), and text formats flameox
 * does not read but can name (legacy pprof text, callgrind, Python's -X importtime).
 */
import { dtraceCountLine, dtraceFrameLine, dtraceHeader } from "./dtrace-stacks.ts";
import { type FormatAdvice, conversionAdvice, unrecognizedAdvice } from "./format-catalog.ts";
import { ghcReportTitle } from "./ghc-prof.ts";
import { perfFrameLine, perfHeaderOf } from "./perf-script.ts";

export type TextDetection = {
  format: "ghc_prof" | "dtrace_stacks" | "perf_script" | "collapsed" | "py_spy_raw";
  hints: string[];
  producer: string | null;
};

/** A weight ends the line: digits, maybe a fraction, an exponent or a sign (the reader judges the value). */
const foldedLine = /\S\s+[-+]?\d+(\.\d+)?([eE][-+]?\d+)?$/;
const bareWeight = /^\s*\d+$/;

/** Which folded-stack lines parse (`frames weight`) and which do not, comments and blank lines aside. */
export function foldedLineCounts(lines: readonly string[]): { valid: string[]; bad: number } {
  const valid: string[] = [];
  let bad = 0;
  for (const line of lines) {
    if (line.trim() === "" || line.startsWith("#")) continue;
    if (foldedLine.test(line) || bareWeight.test(line)) valid.push(line);
    else bad++;
  }
  return { valid, bad };
}

/** Folded stacks when at least two thirds of the lines parse (and, if any do not, some line has a `;`). */
export function looksFolded(lines: readonly string[]): boolean {
  const { valid, bad } = foldedLineCounts(lines);
  if (valid.length === 0 || valid.length < 2 * bad) return false;
  return bad === 0 || valid.some((line) => line.includes(";"));
}

export function detectText(lines: readonly string[]): TextDetection | null {
  const content = lines.filter((line) => line.trim() !== "");
  const first = content.find((line) => !line.startsWith("#"));
  if (content.slice(0, 12).some((line) => ghcReportTitle.test(line)) || (first !== undefined && /^COST CENTRE\s+MODULE\b/.test(first))) {
    return { format: "ghc_prof", hints: ["GHC profiling report"], producer: "ghc" };
  }
  if (first !== undefined && dtraceHeader.test(first))
    return { format: "dtrace_stacks", hints: ["CPU ID FUNCTION:NAME header"], producer: "dtrace" };
  if (first !== undefined && perfHeaderOf(first) && content.some((line) => perfFrameLine.test(line))) {
    return { format: "perf_script", hints: ["perf script sample header and call chain"], producer: "perf" };
  }
  if (first !== undefined && perfHeaderOf(first) && content.every((line) => line.startsWith("#") || perfHeaderOf(line))) {
    return { format: "perf_script", hints: ["perf script sample headers (no call chains)"], producer: "perf" };
  }
  if (
    content.some((line) => dtraceFrameLine.test(line)) &&
    content.some((line) => dtraceCountLine.test(line)) &&
    content.every((line) => /^\s/.test(line))
  ) {
    return { format: "dtrace_stacks", hints: ["module`function frames and count lines"], producer: "dtrace" };
  }
  if (looksFolded(lines)) {
    const { valid } = foldedLineCounts(lines);
    const pySpyContext = valid.some((line) => /^(process \d+:"|thread \()/.test(line));
    const pythonFrames = valid.filter((line) => /\(\S+\.pyx?(:\d+)?\)(;| \d)/.test(line)).length;
    if (pySpyContext || pythonFrames * 2 >= valid.length) {
      return {
        format: "py_spy_raw",
        hints: [pySpyContext ? "py-spy process/thread prefix" : "function (file.py:line) frames"],
        producer: "py-spy",
      };
    }
    return { format: "collapsed", hints: ["folded stack lines"], producer: null };
  }
  return null;
}

/** Text flameox does not read, named so the receipt can say what to do with it. */
export function adviseText(lines: readonly string[]): FormatAdvice {
  const content = lines.filter((line) => line.trim() !== "");
  if (content.some((line) => /^(heap profile:|heap_v2\/|--- (symbol|contention|heapz|growthz))/.test(line))) {
    return conversionAdvice(
      "a legacy (text) pprof profile",
      "convert it to profile.proto with `pprof -proto <program> <file> > profile.pb.gz`",
    );
  }
  if (content.some((line) => /^(events|cmd|positions):/.test(line)) && content.some((line) => /^c?fn=/.test(line))) {
    return unrecognizedAdvice("a callgrind profile, which flameox does not read");
  }
  if (content.some((line) => line.startsWith("import time:"))) {
    return unrecognizedAdvice(
      "Python -X importtime output; flameox records import times itself with the python-startup adapter (plan_capture with adapter python-startup)",
    );
  }
  if (content.some((line) => line.startsWith("Flat profile:") || line.startsWith("Call graph (explanation follows)"))) {
    return unrecognizedAdvice(
      "a gprof report, which flameox does not read; record the program with `perf record -g` and import `perf script` output instead",
    );
  }
  return unrecognizedAdvice("text of no known profile shape");
}
