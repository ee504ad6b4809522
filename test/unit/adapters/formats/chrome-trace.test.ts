import { describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { boundedArgsJson, extractChromeTrace, maxArgsBytes } from "../../../../src/adapters/formats/chrome-trace.ts";
import { MemoryEvidenceSink, type TraceEventRow } from "../../../../src/domain/evidence.ts";
import { fixtures, hottest, leaf, names, parseFailure, projectRoot, snapshot, tempDir } from "./helpers.ts";

/** Written in completion order (children before parents), as Chrome itself does. */
const handEvents = [
  { ph: "M", name: "process_name", pid: 1, args: { name: "trainer" } },
  { ph: "M", name: "thread_name", pid: 1, tid: 2, args: { name: "worker" } },
  { ph: "i", name: "mark", cat: "user", pid: 1, tid: 1, ts: 20, s: "t" },
  { ph: "X", name: "b", cat: "py", pid: 1, tid: 1, ts: 15, dur: 10, args: { filename: "/proj/src/b.py", line: 7 } },
  { ph: "X", name: "a", cat: "py", pid: 1, tid: 1, ts: 10, dur: 30 },
  { ph: "X", name: "a", cat: "py", pid: 1, tid: 1, ts: 50, dur: 20 },
  { ph: "X", name: "root", cat: "py", pid: 1, tid: 1, ts: 0, dur: 100 },
  { ph: "B", name: "outer", pid: 1, tid: 2, ts: 0, args: { phase: "decode" } },
  { ph: "B", name: "inner", pid: 1, tid: 2, ts: 5 },
  { ph: "E", pid: 1, tid: 2, ts: 15 },
  { ph: "E", pid: 1, tid: 2, ts: 30.0015, args: { result: "ok" } },
  { ph: "C", name: "queue", pid: 1, ts: 5, args: { depth: 3 } },
  { ph: "s", name: "flow", cat: "ac2g", id: 7, pid: 1, tid: 1, ts: 12 },
  { ph: "f", name: "flow", cat: "ac2g", id: 7, bp: "e", pid: 1, tid: 2, ts: 16 },
];

const torchTrace = {
  schemaVersion: 1,
  deviceProperties: [{ id: 0, name: "NVIDIA H200", totalGlobalMem: 150_000_000_000 }],
  distributedInfo: { backend: "nccl", rank: 0, world_size: 1 },
  traceEvents: [
    { ph: "X", cat: "user_annotation", name: "ProfilerStep#3", pid: 100, tid: 100, ts: 1_000.5, dur: 50 },
    {
      ph: "X",
      cat: "cpu_op",
      name: "aten::mm",
      pid: 100,
      tid: 100,
      ts: 1_001.25,
      dur: 10.5,
      args: {
        "External id": 42,
        "Input Dims": [
          [2, 3],
          [3, 4],
        ],
        "Input type": ["float", "float"],
        "Record function id": 0,
      },
    },
    {
      ph: "i",
      cat: "cpu_instant_event",
      s: "t",
      name: "[memory]",
      pid: 100,
      tid: 100,
      ts: 1_002,
      args: { "Total Reserved": 0, "Total Allocated": 96, Bytes: 96, Addr: 1234, "Device Id": -1, "Device Type": 0 },
    },
    {
      ph: "X",
      cat: "cuda_runtime",
      name: "cudaLaunchKernel",
      pid: 100,
      tid: 100,
      ts: 1_003,
      dur: 4,
      args: { correlation: 99, "External id": 42 },
    },
    {
      ph: "X",
      cat: "kernel",
      name: "gemm_kernel",
      pid: 0,
      tid: 7,
      ts: 1_010,
      dur: 3,
      args: { "External id": 42, correlation: 99, device: 0, stream: 7, grid: [1, 1, 1] },
    },
    { ph: "s", cat: "ac2g", name: "ac2g", id: 99, pid: 100, tid: 100, ts: 1_003 },
    { ph: "f", cat: "ac2g", name: "ac2g", id: 99, pid: 0, tid: 7, ts: 1_010, bp: "e" },
  ],
  traceName: "trace.json",
};

function byName(rows: TraceEventRow[], name: string): TraceEventRow {
  const row = rows.find((candidate) => candidate.name === name);
  if (!row) throw new Error(`no row ${name}`);
  return row;
}

describe("extractChromeTrace on hand-written traces", () => {
  test("nesting, self time per stack, B/E pairs, instants, counters, flows, metadata", async () => {
    const { dir, cleanup } = tempDir();
    try {
      const path = join(dir, "trace.json");
      writeFileSync(path, JSON.stringify(handEvents));
      const sink = new MemoryEvidenceSink();
      const result = await extractChromeTrace(path, sink, { projectRoot: "/proj" });
      expect(result.limitations).toEqual([]);
      expect(result.rows.trace_events).toBe(handEvents.length - 2); // E events merge into their B rows
      const rows = sink.traceEvents;
      const root = rows.find((row) => row.name === "root")!;
      const firstA = rows.find((row) => row.name === "a" && row.ts_ns === 10_000)!;
      const secondA = rows.find((row) => row.name === "a" && row.ts_ns === 50_000)!;
      const b = byName(rows, "b");
      expect(root).toMatchObject({ parent_id: null, depth: 0, dur_ns: 100_000, phase: "X", pid: "1", tid: "1", category: "py" });
      expect(firstA).toMatchObject({ parent_id: root.event_id, depth: 1, dur_ns: 30_000 });
      expect(secondA).toMatchObject({ parent_id: root.event_id, depth: 1 });
      expect(b).toMatchObject({ parent_id: firstA.event_id, depth: 2 });
      expect(byName(rows, "mark")).toMatchObject({ parent_id: b.event_id, depth: 3, dur_ns: null, phase: "i" });
      const outer = byName(rows, "outer");
      expect(outer).toMatchObject({ phase: "B", ts_ns: 0, dur_ns: 30_002, parent_id: null });
      expect(JSON.parse(outer.args!)).toEqual({ phase: "decode", result: "ok" });
      expect(byName(rows, "inner")).toMatchObject({ parent_id: outer.event_id, depth: 1, dur_ns: 10_000 });
      expect(byName(rows, "queue")).toMatchObject({ phase: "C", args: '{"depth":3}', parent_id: null });
      const flows = rows.filter((row) => row.name === "flow");
      expect(flows.map((row) => [row.phase, row.correlation])).toEqual([
        ["s", "7"],
        ["f", "7"],
      ]);
      expect(flows[0]?.parent_id).toBe(firstA.event_id);
      expect(rows.filter((row) => row.phase === "M").length).toBe(2);

      const stacks = sink.stacks.map((stack) => ({
        thread: stack.thread,
        process: stack.process,
        stack: names(sink, stack).join(";"),
        weight: stack.weight,
        count: stack.sample_count,
        unit: stack.unit,
      }));
      stacks.sort((left, right) => `${left.thread};${left.stack}`.localeCompare(`${right.thread};${right.stack}`));
      expect(stacks).toEqual([
        { thread: "1", process: "trainer", stack: "root", weight: 50_000, count: 1, unit: "ns" },
        { thread: "1", process: "trainer", stack: "root;a", weight: 40_000, count: 2, unit: "ns" },
        { thread: "1", process: "trainer", stack: "root;a;b", weight: 10_000, count: 1, unit: "ns" },
        { thread: "worker", process: "trainer", stack: "outer", weight: 20_002, count: 1, unit: "ns" },
        { thread: "worker", process: "trainer", stack: "outer;inner", weight: 10_000, count: 1, unit: "ns" },
      ]);
      const bFrame = leaf(sink, sink.stacks.find((stack) => stack.frame_keys.length === 3)!);
      expect(bFrame).toMatchObject({ function: "b", file: "src/b.py", line: 7, module: "py", language: "trace" });
    } finally {
      cleanup();
    }
  });

  test("torch.profiler shapes: Input Dims and [memory] Bytes survive in args; correlation, device, stream", async () => {
    const { dir, cleanup } = tempDir();
    try {
      const path = join(dir, "torch.json");
      writeFileSync(path, JSON.stringify(torchTrace));
      for (const parseMode of ["whole", "stream"] as const) {
        const sink = new MemoryEvidenceSink();
        const result = await extractChromeTrace(path, sink, { projectRoot: null, parseMode });
        expect(result.producer).toBe("torch.profiler");
        const rows = sink.traceEvents;
        const step = byName(rows, "ProfilerStep#3");
        const mm = byName(rows, "aten::mm");
        expect(step.ts_ns).toBe(1_000_500);
        expect(mm).toMatchObject({ ts_ns: 1_001_250, dur_ns: 10_500, parent_id: step.event_id, depth: 1, correlation: "42" });
        expect(JSON.parse(mm.args!)["Input Dims"]).toEqual([
          [2, 3],
          [3, 4],
        ]);
        const memory = byName(rows, "[memory]");
        expect(JSON.parse(memory.args!).Bytes).toBe(96);
        expect(memory.parent_id).toBe(mm.event_id);
        expect(byName(rows, "cudaLaunchKernel")).toMatchObject({ correlation: "99", parent_id: mm.event_id, depth: 2 });
        expect(byName(rows, "gemm_kernel")).toMatchObject({ correlation: "99", device: "0", stream: "7", pid: "0", tid: "7" });
        const kernelStack = sink.stacks.find((stack) => leaf(sink, stack).function === "gemm_kernel")!;
        expect(kernelStack).toMatchObject({ weight: 3_000, thread: "7", process: "0" });
        expect(leaf(sink, kernelStack).module).toBe("kernel");
        expect(hottest(sink)).toBe("ProfilerStep#3");
      }
    } finally {
      cleanup();
    }
  });

  test("args are bounded to 4 KiB of valid JSON, small keys kept", () => {
    const args = {
      "Input Dims": [[1024, 1024]],
      big: "x".repeat(10_000),
      list: Array.from({ length: 2000 }, (_, index) => index),
      Bytes: 96,
    };
    const text = boundedArgsJson(args)!;
    expect(text.length).toBeLessThanOrEqual(maxArgsBytes);
    const parsed = JSON.parse(text);
    expect(parsed["Input Dims"]).toEqual([[1024, 1024]]);
    expect(parsed.Bytes).toBe(96);
    expect(parsed["…truncated"]).toBe(true);
    expect(boundedArgsJson(undefined)).toBeNull();
    expect(boundedArgsJson({ a: 1 })).toBe('{"a":1}');
  });

  test("truncated and malformed traces fail with ARTIFACT_PARSE_FAILED naming the byte offset", async () => {
    const { dir, cleanup } = tempDir();
    try {
      const text = JSON.stringify(torchTrace);
      const cut = join(dir, "cut.json");
      const at = Math.floor(text.length / 2);
      writeFileSync(cut, text.slice(0, at));
      for (const parseMode of ["whole", "stream"] as const) {
        const error = await parseFailure(() => extractChromeTrace(cut, new MemoryEvidenceSink(), { projectRoot: null, parseMode }));
        expect(error.code).toBe("ARTIFACT_PARSE_FAILED");
        expect(error.message).toContain(`byte ${at}`);
        expect(error.details.byte_offset).toBe(at);
      }
      const malformed = join(dir, "bad.json");
      writeFileSync(malformed, '[{"ph":"X","ts":1,"dur":2,"name":"a"},{"ph":"X" "ts":3}]');
      const error = await parseFailure(() =>
        extractChromeTrace(malformed, new MemoryEvidenceSink(), { projectRoot: null, parseMode: "stream" }),
      );
      expect(error.message).toMatch(/byte 38/);
      const noEvents = join(dir, "object.json");
      writeFileSync(noEvents, '{"nodes": []}');
      expect((await parseFailure(() => extractChromeTrace(noEvents, new MemoryEvidenceSink(), { projectRoot: null }))).code).toBe(
        "ARTIFACT_PARSE_FAILED",
      );
    } finally {
      cleanup();
    }
  });

  test("a 200k-event trace streams through a bounded window", async () => {
    const { dir, cleanup } = tempDir();
    try {
      const path = join(dir, "large.json");
      const pairs = 100_000;
      const writer = Bun.file(path).writer();
      writer.write('{"traceEvents":[\n');
      for (let index = 0; index < pairs; index++) {
        const ts = index * 10;
        const tid = index % 4;
        // child first (completion order), then its parent
        writer.write(`{"ph":"X","name":"child","cat":"c","pid":1,"tid":${tid},"ts":${ts + 1},"dur":3,"args":{"i":${index}}},\n`);
        writer.write(`{"ph":"X","name":"parent","cat":"c","pid":1,"tid":${tid},"ts":${ts},"dur":8}${index + 1 < pairs ? "," : ""}\n`);
      }
      writer.write('],"displayTimeUnit":"ns"}');
      await writer.end();
      const sink = new MemoryEvidenceSink();
      const result = await extractChromeTrace(path, sink, { projectRoot: null, parseMode: "stream", reorderWindow: 1000 });
      expect(result.rows.trace_events).toBe(2 * pairs);
      expect(result.limitations).toEqual([]);
      expect(sink.stacks.length).toBe(8);
      const parentSelf = sink.stacks
        .filter((stack) => names(sink, stack).join(";") === "parent")
        .reduce((sum, stack) => sum + stack.weight, 0);
      const childSelf = sink.stacks
        .filter((stack) => names(sink, stack).join(";") === "parent;child")
        .reduce((sum, stack) => sum + stack.weight, 0);
      expect(parentSelf).toBe(pairs * 5_000);
      expect(childSelf).toBe(pairs * 3_000);
      const children = sink.traceEvents.filter((row) => row.name === "child");
      expect(children.every((row) => row.depth === 1 && row.parent_id !== null)).toBe(true);
    } finally {
      cleanup();
    }
  }, 60_000);

  test("maxRows caps trace_events rows", async () => {
    const { dir, cleanup } = tempDir();
    try {
      const path = join(dir, "trace.json");
      writeFileSync(path, JSON.stringify(handEvents));
      const sink = new MemoryEvidenceSink();
      const result = await extractChromeTrace(path, sink, { projectRoot: null, maxRows: 3 });
      expect(sink.traceEvents.length).toBe(3);
      expect(sink.stacks.length).toBe(3);
      expect(result.limitations.join(" ")).toMatch(/trace_events rows were not emitted/);
    } finally {
      cleanup();
    }
  });
});

describe("extractChromeTrace on real py-spy chrometrace output", () => {
  const path = join(fixtures, "py-spy.chrometrace.json");

  test("B/E slices from py-spy: hot function has the largest self time, python frames", async () => {
    const sink = new MemoryEvidenceSink();
    const result = await extractChromeTrace(path, sink, { projectRoot });
    expect(result.producer).toBe("py-spy");
    const events = JSON.parse(readFileSync(path, "utf8")) as { ph: string }[];
    expect(result.rows.trace_events).toBe(events.filter((event) => event.ph === "B").length);
    expect(hottest(sink)).toBe("hot_loop");
    const hot = sink.stacks.find((stack) => leaf(sink, stack).function === "hot_loop")!;
    expect(names(sink, hot)).toEqual(["<module>", "outer", "hot_loop"]);
    expect(leaf(sink, hot)).toMatchObject({ file: "test/fixtures/formats/busy.py", language: "python", module: "py-spy" });
    const nested = sink.traceEvents.find((row) => row.name === "hot_loop")!;
    expect(nested.depth).toBe(2);
    expect(sink.traceEvents.find((row) => row.event_id === nested.parent_id)?.name).toBe("outer");
  });

  test("the streaming path equals the JSON.parse path", async () => {
    for (const file of [path]) {
      const whole = new MemoryEvidenceSink();
      const streamed = new MemoryEvidenceSink();
      const wholeResult = await extractChromeTrace(file, whole, { projectRoot, parseMode: "whole" });
      const streamResult = await extractChromeTrace(file, streamed, { projectRoot, parseMode: "stream" });
      expect(snapshot(streamed)).toEqual(snapshot(whole));
      expect(streamResult).toEqual(wholeResult);
    }
  });
});
