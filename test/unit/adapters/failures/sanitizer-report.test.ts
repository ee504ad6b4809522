// Sanitizer reports from real runs: each tiny buggy program under test/fixtures/failures is built
// with gcc's sanitizers here, run, and its stderr read back.
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { join } from "node:path";
import { parseFrame, SanitizerReportReader } from "../../../../src/adapters/failures/sanitizer-report.ts";
import { failureSources, gcc, sanitizerStderr } from "../../../fixtures/failures/programs.ts";

// Each case compiles a C file and runs it.
setDefaultTimeout(60_000);

const sources = failureSources;

function read(text: string) {
  const reader = new SanitizerReportReader();
  for (const line of text.split("\n")) reader.line(line);
  return reader.end();
}

describe.skipIf(!gcc)("sanitizer reports of real runs (gcc)", () => {
  test("AddressSanitizer: a heap-buffer-overflow, in read_past_end, called from main", async () => {
    const reports = read(await sanitizerStderr("heap_overflow.c", ["-O0", "-fsanitize=address,undefined"]));
    expect(reports).toHaveLength(1);
    const [report] = reports;
    expect(report!.tool).toBe("AddressSanitizer");
    expect(report!.error_kind).toBe("heap-buffer-overflow");
    expect(report!.message).toStartWith("heap-buffer-overflow on address 0x");
    expect(report!.frames.slice(0, 2)).toEqual([
      { function: "read_past_end", file: join(sources, "heap_overflow.c"), line: 3, module: null },
      { function: "main", file: join(sources, "heap_overflow.c"), line: 7, module: null },
    ]);
  });

  test("UndefinedBehaviorSanitizer: a signed integer overflow in add_one, with and without its stack", async () => {
    const flags = ["-O0", "-fsanitize=undefined"];
    const withStack = read(await sanitizerStderr("signed_overflow.c", flags, { UBSAN_OPTIONS: "print_stacktrace=1" }));
    expect(withStack.map((report) => [report.tool, report.error_kind])).toEqual([
      ["UndefinedBehaviorSanitizer", "signed integer overflow"],
    ]);
    expect(withStack[0]!.message).toContain("cannot be represented in type 'int'");
    expect(withStack[0]!.frames[0]).toEqual({ function: "add_one", file: join(sources, "signed_overflow.c"), line: 3, module: null });
    const bare = read(await sanitizerStderr("signed_overflow.c", flags, { UBSAN_OPTIONS: "print_stacktrace=0" }));
    expect(bare[0]!.frames).toHaveLength(1);
    expect(bare[0]!.frames[0]).toMatchObject({ function: null, line: 3 });
    expect(bare[0]!.frames[0]!.file).toEndWith("signed_overflow.c");
  });

  test("ThreadSanitizer: a data race in bump", async () => {
    const reports = read(await sanitizerStderr("data_race.c", ["-O1", "-fsanitize=thread"]));
    expect(reports.length).toBeGreaterThanOrEqual(1);
    expect(reports[0]!.tool).toBe("ThreadSanitizer");
    expect(reports[0]!.error_kind).toBe("data race");
    expect(reports[0]!.frames[0]).toMatchObject({ function: "bump", file: join(sources, "data_race.c"), line: 4 });
  });
});

test("frame lines of every shape the runtimes print", () => {
  expect(parseFrame("    #0 0x55d5 in main /src/x.c:5:12")).toEqual({ function: "main", file: "/src/x.c", line: 5, module: null });
  expect(parseFrame("    #4 0x556a in _start (/tmp/a.out+0x1120)")).toEqual({
    function: "_start",
    file: null,
    line: null,
    module: "/tmp/a.out",
  });
  expect(parseFrame("    #2 0x7f94 (/lib/x86_64-linux-gnu/libc.so.6+0x29d90)")).toEqual({
    function: null,
    file: null,
    line: null,
    module: "/lib/x86_64-linux-gnu/libc.so.6",
  });
  expect(parseFrame("    #0 bump /src/t.c:4 (t+0x11cf)")).toEqual({ function: "bump", file: "/src/t.c", line: 4, module: "t" });
  expect(parseFrame("    #1 0x4011 in Widget::resize(int, int) /src/w.cc:40:7")).toEqual({
    function: "Widget::resize(int, int)",
    file: "/src/w.cc",
    line: 40,
    module: null,
  });
  expect(parseFrame("not a frame")).toBeNull();
});
