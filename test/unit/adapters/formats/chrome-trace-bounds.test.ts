import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { extractChromeTrace } from "../../../../src/adapters/formats/chrome-trace.ts";
import { MemoryEvidenceSink } from "../../../../src/domain/evidence.ts";
import { names, selfByFunction, tempDir } from "./helpers.ts";

function write(dir: string, name: string, events: unknown[] | string): string {
  const path = join(dir, name);
  writeFileSync(path, typeof events === "string" ? events : JSON.stringify(events));
  return path;
}

describe("inputs that do not nest stay linear", () => {
  test("40,000 X slices that overlap without nesting (ts=i, dur=5) end the open slice: flat, one row per slice", async () => {
    const { dir, cleanup } = tempDir();
    try {
      const overlapping = Array.from({ length: 40_000 }, (_, index) => ({ ph: "X", name: "work", pid: 1, tid: 1, ts: index, dur: 5 }));
      const sink = new MemoryEvidenceSink();
      const result = await extractChromeTrace(write(dir, "overlap.json", overlapping), sink, { projectRoot: null });
      expect(sink.traceEvents.length).toBe(40_000);
      expect(Math.max(...sink.traceEvents.map((row) => row.depth))).toBe(0);
      // Every slice is its own root: one distinct stack, each slice's full duration as self time.
      expect(sink.stacks.map((stack) => [names(sink, stack).join(";"), stack.weight, stack.sample_count])).toEqual([
        ["work", 40_000 * 5_000, 40_000],
      ]);
      expect(result.limitations.join(" ")).toContain("39999 X slices started inside the open slice but ended after it");
    } finally {
      cleanup();
    }
  }, 60_000);

  test("10,000 nested slices: every row keeps its parent, emitted stacks are capped at 256 frames", async () => {
    const { dir, cleanup } = tempDir();
    try {
      const depth = 10_000;
      const nested = Array.from({ length: depth }, (_, index) => ({
        ph: "X",
        name: `f${index}`,
        pid: 1,
        tid: 1,
        ts: index,
        dur: 2 * (depth - index),
      }));
      const sink = new MemoryEvidenceSink();
      const result = await extractChromeTrace(write(dir, "deep.json", nested), sink, { projectRoot: null });
      const rows = sink.traceEvents;
      expect(rows.length).toBe(depth);
      expect(rows[depth - 1]).toMatchObject({ name: `f${depth - 1}`, depth: depth - 1, parent_id: rows[depth - 2]!.event_id });
      expect(sink.stacks.length).toBe(depth);
      expect(Math.max(...sink.stacks.map((stack) => stack.frame_keys.length))).toBe(256);
      const deepest = sink.stacks.find((stack) => names(sink, stack).at(-1) === `f${depth - 1}`)!;
      expect(names(sink, deepest)[0]).toBe("[deeper frames truncated]");
      expect(names(sink, deepest).at(-2)).toBe(`f${depth - 2}`);
      // Self time is still every slice's own: 2 µs minus its child's 2 µs... except the innermost.
      expect(selfByFunction(sink).get(`f${depth - 1}`)).toBe(2_000);
      expect(result.limitations.join(" ")).toContain("deeper than 256 frames");
    } finally {
      cleanup();
    }
  }, 60_000);

  test("an args object nested 100,000 deep is a bounded marker, not a stack overflow", async () => {
    const { dir, cleanup } = tempDir();
    try {
      const deepArgs = `${'{"a":'.repeat(100_000)}1${"}".repeat(100_000)}`;
      const path = write(
        dir,
        "deep-args.json",
        `[{"ph":"X","name":"deep","pid":1,"tid":1,"ts":1,"dur":2,"args":${deepArgs}},{"ph":"X","name":"next","pid":1,"tid":1,"ts":5,"dur":1}]`,
      );
      for (const parseMode of ["stream", "whole"] as const) {
        const sink = new MemoryEvidenceSink();
        await extractChromeTrace(path, sink, { projectRoot: null, parseMode });
        expect(sink.traceEvents.map((row) => row.name)).toEqual(["deep", "next"]);
        expect(JSON.parse(sink.traceEvents[0]!.args!)).toEqual({ "…truncated": true, reason: "nested too deeply" });
      }
    } finally {
      cleanup();
    }
  }, 60_000);
});

describe("what trace viewers accept, and where flameox says what it did", () => {
  test("a bare event array without its closing bracket (even after a trailing comma) is read", async () => {
    const { dir, cleanup } = tempDir();
    try {
      for (const tail of ["", ",", ",\n  "]) {
        const path = write(
          dir,
          "open.json",
          `[{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":5},\n{"ph":"X","name":"b","pid":1,"tid":1,"ts":2,"dur":1}${tail}`,
        );
        for (const parseMode of ["stream", "whole"] as const) {
          const sink = new MemoryEvidenceSink();
          const result = await extractChromeTrace(path, sink, { projectRoot: null, parseMode });
          expect(sink.traceEvents.map((row) => [row.name, row.depth])).toEqual([
            ["a", 0],
            ["b", 1],
          ]);
          expect(result.limitations[0]).toContain("without its closing `]`");
        }
      }
      // An event cut in the middle is still a parse failure.
      const cut = write(dir, "cut.json", '[{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":5},{"ph":"X","na');
      await expect(extractChromeTrace(cut, new MemoryEvidenceSink(), { projectRoot: null })).rejects.toMatchObject({
        code: "ARTIFACT_PARSE_FAILED",
      });
    } finally {
      cleanup();
    }
  });

  test("an E with another name does not close the open B; an E without a name closes the innermost", async () => {
    const { dir, cleanup } = tempDir();
    try {
      const events = [
        { ph: "B", name: "outer", pid: 1, tid: 1, ts: 0 },
        { ph: "B", name: "inner", pid: 1, tid: 1, ts: 1 },
        { ph: "E", name: "stray", pid: 1, tid: 1, ts: 2 },
        { ph: "E", name: "inner", pid: 1, tid: 1, ts: 3 },
        { ph: "E", pid: 1, tid: 1, ts: 10 },
      ];
      const sink = new MemoryEvidenceSink();
      const result = await extractChromeTrace(write(dir, "be.json", events), sink, { projectRoot: null });
      const byName = Object.fromEntries(sink.traceEvents.map((row) => [row.name, row]));
      expect(byName.inner).toMatchObject({ dur_ns: 2_000, depth: 1 });
      expect(byName.outer).toMatchObject({ dur_ns: 10_000, depth: 0 });
      expect(result.limitations).toContain("1 E events matched no open B of their name on their thread.");
    } finally {
      cleanup();
    }
  });

  test("an E finds the innermost open B of its name among repeated names, on its own thread, after earlier closes", async () => {
    const { dir, cleanup } = tempDir();
    try {
      const events = [
        { ph: "B", name: "x", pid: 1, tid: 1, ts: 0 },
        { ph: "B", name: "y", pid: 1, tid: 1, ts: 1 },
        { ph: "B", name: "x", pid: 1, tid: 2, ts: 1 },
        { ph: "B", name: "x", pid: 1, tid: 1, ts: 2 },
        { ph: "B", name: "z", pid: 1, tid: 1, ts: 3 },
        // Closes the inner x of thread 1 and, being above it, z; not thread 2's x.
        { ph: "E", name: "x", pid: 1, tid: 1, ts: 4 },
        { ph: "E", name: "z", pid: 1, tid: 1, ts: 5 },
        { ph: "E", name: "y", pid: 1, tid: 1, ts: 6 },
        { ph: "E", pid: 1, tid: 1, ts: 9 },
        { ph: "E", name: "x", pid: 1, tid: 2, ts: 7 },
      ];
      const sink = new MemoryEvidenceSink();
      const result = await extractChromeTrace(write(dir, "names.json", events), sink, { projectRoot: null });
      const rows = sink.traceEvents.map((row) => [row.tid, row.name, row.ts_ns, row.dur_ns, row.depth]).sort();
      expect(rows).toEqual([
        ["1", "x", 0, 9_000, 0],
        ["1", "x", 2_000, 2_000, 2],
        ["1", "y", 1_000, 5_000, 1],
        ["1", "z", 3_000, 1_000, 3],
        ["2", "x", 1_000, 6_000, 0],
      ]);
      expect(result.limitations).toContain("1 E events matched no open B of their name on their thread.");
    } finally {
      cleanup();
    }
  });

  test("threads are keyed by pid and tid: three processes' MainThreads stay apart", async () => {
    const { dir, cleanup } = tempDir();
    try {
      const events = [1, 2, 3].flatMap((pid) => [
        { ph: "M", name: "thread_name", pid, tid: 7, args: { name: "MainThread" } },
        { ph: "M", name: "process_name", pid, args: { name: `worker-${pid}` } },
        { ph: "X", name: "step", pid, tid: 7, ts: pid, dur: pid },
      ]);
      const sink = new MemoryEvidenceSink();
      await extractChromeTrace(write(dir, "threads.json", events), sink, { projectRoot: null });
      expect(sink.stacks.map((stack) => [stack.thread, stack.process, stack.weight]).sort()).toEqual([
        ["MainThread (pid 1, tid 7)", "worker-1", 1_000],
        ["MainThread (pid 2, tid 7)", "worker-2", 2_000],
        ["MainThread (pid 3, tid 7)", "worker-3", 3_000],
      ]);
    } finally {
      cleanup();
    }
  });

  test("epoch-microsecond timestamps keep nanosecond precision: back-to-back slices 3 µs apart do not nest", async () => {
    const { dir, cleanup } = tempDir();
    try {
      const text = `[{"ph":"X","name":"first","pid":1,"tid":1,"ts":1690000000000000.123,"dur":10.001},
        {"ph":"X","name":"second","pid":1,"tid":1,"ts":1690000000000013.124,"dur":0.5},
        {"ph":"X","name":"touching","pid":1,"tid":1,"ts":1690000000000010.124,"dur":0.001}]`;
      for (const parseMode of ["stream", "whole"] as const) {
        const sink = new MemoryEvidenceSink();
        await extractChromeTrace(write(dir, "epoch.json", text), sink, { projectRoot: null, parseMode });
        expect(sink.traceEvents.map((row) => [row.name, row.depth, row.dur_ns])).toEqual([
          ["first", 0, 10_001],
          ["touching", 0, 1],
          ["second", 0, 500],
        ]);
      }
    } finally {
      cleanup();
    }
  });

  test("a negative dur is an instant, with a limitation", async () => {
    const { dir, cleanup } = tempDir();
    try {
      const sink = new MemoryEvidenceSink();
      const result = await extractChromeTrace(
        write(dir, "negative.json", [{ ph: "X", name: "bad", pid: 1, tid: 1, ts: 5, dur: -3 }]),
        sink,
        {
          projectRoot: null,
        },
      );
      expect(sink.traceEvents[0]).toMatchObject({ dur_ns: 0 });
      expect(sink.stacks).toEqual([]);
      expect(result.limitations.join(" ")).toContain("1 X slices had a negative dur");
    } finally {
      cleanup();
    }
  });
});

describe("skipped top-level values", () => {
  test("a skipped value larger than a read chunk, with brackets and escaped quotes inside its strings, is passed over", async () => {
    const { dir, cleanup } = tempDir();
    try {
      const filler = Array.from({ length: 200_000 }, (_, index) => ({ name: `gpu ${index} ]}\\"[{`, sizes: [index, [index + 1]] }));
      const text = `{"deviceProperties": ${JSON.stringify(filler)}, "schemaVersion": 1, "traceEvents": [{"ph": "X", "name": "aten::mm", "cat": "cpu_op", "pid": 1, "tid": 1, "ts": 0, "dur": 5}]}`;
      expect(text.length).toBeGreaterThan(9 << 20);
      const sink = new MemoryEvidenceSink();
      await extractChromeTrace(write(dir, "metadata.json", text), sink, { projectRoot: null, parseMode: "stream" });
      expect(sink.traceEvents.map((row) => [row.name, row.dur_ns])).toEqual([["aten::mm", 5_000]]);
    } finally {
      cleanup();
    }
  });
});
