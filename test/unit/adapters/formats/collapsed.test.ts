import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { extractCollapsed, parseCollapsedFrame } from "../../../../src/adapters/formats/collapsed.ts";
import { extractPySpyRaw, splitPySpyContext } from "../../../../src/adapters/formats/py-spy-raw.ts";
import { MemoryEvidenceSink, frameKey } from "../../../../src/domain/evidence.ts";
import { fixtures, hottest, leaf, names, parseFailure, projectRoot, tempDir } from "./helpers.ts";

describe("parseCollapsedFrame", () => {
  test("reads (file:line) and [module] decorations", () => {
    expect(parseCollapsedFrame("hot_loop (busy.py:8)")).toEqual({ function: "hot_loop", file: "busy.py", line: 8, module: null });
    expect(parseCollapsedFrame("Thread.run (/usr/lib/python3.11/threading.py:982)")).toMatchObject({
      function: "Thread.run",
      file: "/usr/lib/python3.11/threading.py",
      line: 982,
    });
    expect(parseCollapsedFrame("memcpy [libc.so.6]")).toEqual({ function: "memcpy", file: null, line: null, module: "libc.so.6" });
    expect(parseCollapsedFrame("std::vector<int>::push_back(int const&)")).toMatchObject({
      function: "std::vector<int>::push_back(int const&)",
      file: null,
    });
    expect(parseCollapsedFrame("[unknown]")).toMatchObject({ function: "[unknown]", module: null });
    expect(parseCollapsedFrame("main (app.py)", { allowFileOnly: true })).toEqual({
      function: "main",
      file: "app.py",
      line: null,
      module: null,
    });
  });

  test("a module after the place, and the empty ` []` that keeps a decorated-looking name literal", () => {
    expect(parseCollapsedFrame("run (src/app.go:12) [app]")).toEqual({ function: "run", file: "src/app.go", line: 12, module: "app" });
    expect(parseCollapsedFrame("operator[] [x] []")).toEqual({ function: "operator[] [x]", file: null, line: null, module: null });
    expect(parseCollapsedFrame("looks (like.py:3) []")).toEqual({ function: "looks (like.py:3)", file: null, line: null, module: null });
  });
});

describe("extractCollapsed", () => {
  test("aggregates folded lines into stacks with the given unit", async () => {
    const { dir, cleanup } = tempDir();
    try {
      const path = join(dir, "out.folded");
      writeFileSync(
        path,
        [
          "# comment",
          "main (/proj/src/app.py:3);parse (/proj/src/parse.py:10);tokenize (/proj/src/parse.py:40) 70",
          "main (/proj/src/app.py:3);parse (/proj/src/parse.py:10) 20",
          "main (/proj/src/app.py:3);memcpy [libc.so.6] 5",
          "main (/proj/src/app.py:3);parse (/proj/src/parse.py:10);tokenize (/proj/src/parse.py:40) 30",
          "",
        ].join("\r\n"),
      );
      const sink = new MemoryEvidenceSink();
      const result = await extractCollapsed(path, sink, { projectRoot: "/proj" });
      expect(result.rows).toEqual({ frames: 4, stacks: 3, trace_events: 0 });
      expect(hottest(sink)).toBe("tokenize");
      const hot = sink.stacks.find((stack) => leaf(sink, stack).function === "tokenize")!;
      expect(hot).toMatchObject({ weight: 100, sample_count: 100, unit: "samples", thread: null });
      expect(names(sink, hot)).toEqual(["main", "parse", "tokenize"]);
      expect(leaf(sink, hot)).toEqual({
        frame_key: frameKey({ language: "python", function: "tokenize", file: "src/parse.py", line: 40 }),
        function: "tokenize",
        file: "src/parse.py",
        line: 40,
        module: null,
        language: "python",
      });
      const native = sink.stacks.find((stack) => leaf(sink, stack).function === "memcpy")!;
      expect(leaf(sink, native)).toMatchObject({ module: "libc.so.6", language: "unknown" });

      const timed = new MemoryEvidenceSink();
      await extractCollapsed(path, timed, { projectRoot: "/proj", unit: "ns", language: "go" });
      expect(timed.stacks.every((stack) => stack.unit === "ns")).toBe(true);
      expect(timed.stacks.find((stack) => stack.weight === 100)?.sample_count).toBe(2);
      expect([...timed.frames.values()].every((frame) => frame.language === "go")).toBe(true);
    } finally {
      cleanup();
    }
  });

  test("a line without a numeric weight fails with ARTIFACT_PARSE_FAILED naming line and byte", async () => {
    const { dir, cleanup } = tempDir();
    try {
      const path = join(dir, "bad.folded");
      writeFileSync(path, "a;b 1\na;c oops\n");
      const error = await parseFailure(() => extractCollapsed(path, new MemoryEvidenceSink(), { projectRoot: null }));
      expect(error.code).toBe("ARTIFACT_PARSE_FAILED");
      expect(error.message).toContain("line 2 (byte 6)");
      const empty = join(dir, "empty.folded");
      writeFileSync(empty, "\n\n");
      expect((await parseFailure(() => extractCollapsed(empty, new MemoryEvidenceSink(), { projectRoot: null }))).code).toBe(
        "ARTIFACT_PARSE_FAILED",
      );
    } finally {
      cleanup();
    }
  });
});

describe("extractPySpyRaw on real py-spy output", () => {
  test("plain raw output: hot function first, callers kept, python frames", async () => {
    const sink = new MemoryEvidenceSink();
    const result = await extractPySpyRaw(join(fixtures, "py-spy.raw.txt"), sink, { projectRoot });
    expect(result.producer).toBe("py-spy");
    expect(hottest(sink)).toBe("hot_loop");
    const hot = sink.stacks.find((stack) => leaf(sink, stack).function === "hot_loop")!;
    expect(names(sink, hot)).toEqual(["<module>", "outer", "hot_loop"]);
    expect(leaf(sink, hot)).toMatchObject({ file: "busy.py", language: "python" });
    expect(sink.stacks.every((stack) => stack.thread === null && stack.unit === "samples")).toBe(true);
  });

  test("--threads --subprocesses output: thread and process come off the front of each line", async () => {
    const sink = new MemoryEvidenceSink();
    await extractPySpyRaw(join(fixtures, "py-spy-threads.raw.txt"), sink, { projectRoot });
    expect(hottest(sink)).toBe("hot_loop");
    expect(new Set(sink.stacks.map((stack) => stack.thread))).toEqual(new Set(["MainThread", "background"]));
    for (const frame of sink.frames.values()) expect(frame.function).not.toMatch(/^(thread|process) /);
    const background = sink.stacks.find((stack) => stack.thread === "background")!;
    expect(names(sink, background)).toEqual(["Thread._bootstrap", "Thread._bootstrap_inner", "Thread.run", "background"]);
    expect(background.process).toMatch(/^\d+$/);
  });

  test("context prefixes", () => {
    expect(splitPySpyContext('process 12:"python -c \\"a;b\\"";thread (0x7f3a2b): MainThread;main (x.py:1)')).toEqual({
      process: "12",
      thread: "MainThread",
      tid: "0x7f3a2b",
      stack: "main (x.py:1)",
      frames: 2,
    });
    expect(splitPySpyContext("thread (0x7f3a2b);main (x.py:1)")).toEqual({
      process: null,
      thread: "0x7f3a2b",
      tid: "0x7f3a2b",
      stack: "main (x.py:1)",
      frames: 1,
    });
    expect(splitPySpyContext("main (x.py:1)")).toEqual({ process: null, thread: null, tid: null, stack: "main (x.py:1)", frames: 0 });
  });
});
