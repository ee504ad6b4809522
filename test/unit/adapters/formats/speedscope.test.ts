import { describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { extractSpeedscope, parseSpeedscopeProfileName } from "../../../../src/adapters/formats/speedscope.ts";
import { MemoryEvidenceSink, frameKey } from "../../../../src/domain/evidence.ts";
import { fixtures, hottest, leaf, names, parseFailure, projectRoot, selfByFunction, snapshot, tempDir } from "./helpers.ts";

describe("extractSpeedscope on real py-spy output", () => {
  test("the hot function has the largest self weight, in ns, with its callers", async () => {
    const sink = new MemoryEvidenceSink();
    const result = await extractSpeedscope(join(fixtures, "py-spy.speedscope.json"), sink, { projectRoot });
    expect(result.producer).toBe("py-spy");
    expect(result.producer_version).toMatch(/^0\.4\./);
    expect(result.rows.stacks).toBe(sink.stacks.length);
    expect(hottest(sink)).toBe("hot_loop");
    for (const stack of sink.stacks) {
      expect(stack.unit).toBe("ns");
      expect(stack.thread).toBe("MainThread");
      expect(Number.isInteger(stack.weight)).toBe(true);
    }
    const hot = sink.stacks.find((stack) => leaf(sink, stack).function === "hot_loop");
    expect(names(sink, hot!)).toEqual(["<module>", "outer", "hot_loop"]);
    const frame = leaf(sink, hot!);
    expect(frame.file).toBe("test/fixtures/formats/busy.py");
    expect(frame.language).toBe("python");
    expect(frame.frame_key).toBe(frameKey({ language: "python", function: "hot_loop", file: frame.file, line: frame.line }));
    // 50 Hz sampling: 20 ms per sample
    const samples = sink.stacks.reduce((sum, stack) => sum + stack.sample_count, 0);
    const weight = sink.stacks.reduce((sum, stack) => sum + stack.weight, 0);
    expect(weight).toBe(samples * 20_000_000);
  });

  test("--threads --subprocesses: profiles are threads and py-spy's pseudo-frames become thread/process", async () => {
    const sink = new MemoryEvidenceSink();
    await extractSpeedscope(join(fixtures, "py-spy-threads.speedscope.json"), sink, { projectRoot });
    expect(hottest(sink)).toBe("hot_loop");
    for (const frame of sink.frames.values()) expect(frame.function).not.toMatch(/^(thread \(|process \d+:)/);
    const threads = new Set(sink.stacks.map((stack) => stack.thread));
    expect(threads.has("MainThread")).toBe(true);
    expect(threads.has("background")).toBe(true);
    const background = sink.stacks.find((stack) => stack.thread === "background");
    expect(names(sink, background!).slice(-1)).toEqual(["background"]);
    expect(new Set(sink.stacks.map((stack) => stack.process)).size).toBe(1);
    expect(sink.stacks[0]?.process).toMatch(/^\d+$/);
  });

  test("the streaming path equals the JSON.parse path", async () => {
    for (const name of ["py-spy.speedscope.json", "py-spy-threads.speedscope.json"]) {
      const whole = new MemoryEvidenceSink();
      const streamed = new MemoryEvidenceSink();
      const wholeResult = await extractSpeedscope(join(fixtures, name), whole, { projectRoot, parseMode: "whole" });
      const streamResult = await extractSpeedscope(join(fixtures, name), streamed, { projectRoot, parseMode: "stream" });
      expect(snapshot(streamed)).toEqual(snapshot(whole));
      expect(streamResult).toEqual(wholeResult);
    }
  });

  test("a file cut in the middle fails with ARTIFACT_PARSE_FAILED naming the byte offset", async () => {
    const { dir, cleanup } = tempDir();
    try {
      const text = readFileSync(join(fixtures, "py-spy.speedscope.json"), "utf8");
      const cut = join(dir, "cut.speedscope.json");
      writeFileSync(cut, text.slice(0, Math.floor(text.length / 2)));
      for (const parseMode of ["whole", "stream"] as const) {
        const error = await parseFailure(() => extractSpeedscope(cut, new MemoryEvidenceSink(), { projectRoot, parseMode }));
        expect(error.code).toBe("ARTIFACT_PARSE_FAILED");
        expect(error.message).toContain(`byte ${Math.floor(text.length / 2)}`);
      }
      const notSpeedscope = join(dir, "other.json");
      writeFileSync(notSpeedscope, '{"hello": 1}');
      expect((await parseFailure(() => extractSpeedscope(notSpeedscope, new MemoryEvidenceSink(), { projectRoot }))).code).toBe(
        "ARTIFACT_PARSE_FAILED",
      );
    } finally {
      cleanup();
    }
  });
});

describe("extractSpeedscope on hand-written files", () => {
  const file = {
    $schema: "https://www.speedscope.app/file-format-schema.json",
    exporter: "speedscope@1.20.0",
    profiles: [
      {
        type: "evented",
        name: "main",
        unit: "milliseconds",
        startValue: 0,
        endValue: 10,
        events: [
          { type: "O", frame: 0, at: 0 },
          { type: "O", frame: 1, at: 1 },
          { type: "O", frame: 2, at: 2 },
          { type: "C", frame: 2, at: 6 },
          { type: "C", frame: 1, at: 7 },
          { type: "O", frame: 2, at: 8 },
          { type: "C", frame: 2, at: 9 },
          { type: "C", frame: 0, at: 10 },
        ],
      },
      {
        type: "sampled",
        name: "alloc",
        unit: "bytes",
        startValue: 0,
        endValue: 3,
        samples: [[0, 2], [0, 2], [0], []],
        weights: [100, 50, 7, 1],
      },
      { type: "sampled", name: "counts", unit: "none", startValue: 0, endValue: 2, samples: [[3], [3]], weights: [1, 1] },
    ],
    // frames after the profiles, as py-spy writes them
    shared: {
      frames: [
        { name: "main", file: "/proj/app/main.py", line: 3 },
        { name: "parse", file: "/proj/app/parse.py", line: 10, col: 4 },
        { name: "tokenize", file: "/elsewhere/lib.py", line: 99 },
        { name: "native_thing" },
      ],
    },
    name: "hand",
    activeProfileIndex: 0,
  };

  test("evented profiles get self time per open stack; units map to ns, bytes and samples", async () => {
    const { dir, cleanup } = tempDir();
    try {
      const path = join(dir, "hand.speedscope.json");
      writeFileSync(path, JSON.stringify(file, null, 1));
      for (const parseMode of ["whole", "stream"] as const) {
        const sink = new MemoryEvidenceSink();
        const result = await extractSpeedscope(path, sink, { projectRoot: "/proj", parseMode });
        expect(result.producer).toBe("speedscope");
        expect(result.producer_version).toBe("1.20.0");
        const rows = sink.stacks.map((stack) => ({
          thread: stack.thread,
          stack: names(sink, stack).join(";"),
          weight: stack.weight,
          unit: stack.unit,
        }));
        expect(rows).toEqual([
          { thread: "main", stack: "main", weight: 3_000_000, unit: "ns" },
          { thread: "main", stack: "main;parse", weight: 2_000_000, unit: "ns" },
          { thread: "main", stack: "main;parse;tokenize", weight: 4_000_000, unit: "ns" },
          { thread: "main", stack: "main;tokenize", weight: 1_000_000, unit: "ns" },
          { thread: "alloc", stack: "main;tokenize", weight: 150, unit: "bytes" },
          { thread: "alloc", stack: "main", weight: 7, unit: "bytes" },
          { thread: "counts", stack: "native_thing", weight: 2, unit: "samples" },
        ]);
        const parse = [...sink.frames.values()].find((frame) => frame.function === "parse");
        expect(parse).toMatchObject({ file: "app/parse.py", line: 10, language: "python" });
        const tokenize = [...sink.frames.values()].find((frame) => frame.function === "tokenize");
        expect(tokenize?.file).toBe("/elsewhere/lib.py");
        expect([...sink.frames.values()].find((frame) => frame.function === "native_thing")?.language).toBe("unknown");
        expect(result.limitations.join(" ")).toMatch(/1 samples had an empty stack/);
      }
    } finally {
      cleanup();
    }
  });

  test("profile names from py-spy", () => {
    expect(parseSpeedscopeProfileName('Thread 5010 "MainThread"')).toEqual({ thread: "MainThread", process: null });
    expect(parseSpeedscopeProfileName('Process 5016 Thread 5021 "background"')).toEqual({ thread: "background", process: "5016" });
    expect(parseSpeedscopeProfileName('Process 5016 Thread 5016 ""')).toEqual({ thread: "5016", process: "5016" });
    expect(parseSpeedscopeProfileName("worker")).toEqual({ thread: "worker", process: null });
  });

  test("maxRows caps the stacks rows", async () => {
    const { dir, cleanup } = tempDir();
    try {
      const path = join(dir, "hand.speedscope.json");
      writeFileSync(path, JSON.stringify(file));
      const sink = new MemoryEvidenceSink();
      const result = await extractSpeedscope(path, sink, { projectRoot: "/proj", maxRows: 2 });
      expect(sink.stacks.length).toBe(2);
      expect(result.rows.stacks).toBe(2);
      expect(result.limitations.join(" ")).toMatch(/maxRows reached: 5 stacks rows/);
    } finally {
      cleanup();
    }
  });
});

test("self weights sum per function", async () => {
  const sink = new MemoryEvidenceSink();
  await extractSpeedscope(join(fixtures, "py-spy.speedscope.json"), sink, { projectRoot });
  const self = selfByFunction(sink);
  expect(self.get("outer") ?? 0).toBeLessThan(self.get("hot_loop") ?? 0);
});
