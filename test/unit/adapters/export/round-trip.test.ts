/**
 * Every export re-imports through flameox's own format extractors with the same hotspots, and the
 * speedscope file passes speedscope's schema.
 */
import { afterAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { writeChromeTrace } from "../../../../src/adapters/export/chrome-trace.ts";
import { toCollapsed, writeCollapsed } from "../../../../src/adapters/export/collapsed.ts";
import { toPprof, writePprof } from "../../../../src/adapters/export/pprof.ts";
import { toSpeedscope, writeSpeedscope } from "../../../../src/adapters/export/speedscope.ts";
import { extractChromeTrace } from "../../../../src/adapters/formats/chrome-trace.ts";
import { extractCollapsed } from "../../../../src/adapters/formats/collapsed.ts";
import { frameRow } from "../../../../src/adapters/formats/common.ts";
import { detectProfileFormat } from "../../../../src/adapters/formats/detect.ts";
import { extractProfile } from "../../../../src/adapters/formats/extract-profile.ts";
import { extractPprof } from "../../../../src/adapters/formats/pprof.ts";
import { extractSpeedscope } from "../../../../src/adapters/formats/speedscope.ts";
import { rankFrames } from "../../../../src/analysis/flamegraph/tree.ts";
import { type FrameRow, MemoryEvidenceSink, type StackRow } from "../../../../src/domain/evidence.ts";
import { largeSampleSet, syntheticFrameRows, syntheticStacks } from "../../../fixtures/report/synthetic-profile.ts";
import { speedscopeSchemaViolations } from "./speedscope-schema.ts";

setDefaultTimeout(90_000);

const directory = mkdtempSync(join(tmpdir(), "flameox-export-"));
afterAll(() => rmSync(directory, { recursive: true, force: true }));
const options = { projectRoot: "/nonexistent/project" };

type Hotspot = { function: string; file: string | null; line: number | null; self_share: number; total_share: number };

/** Top functions by self, identified by name and place (frame keys may differ in language across formats). */
function hotspots(frames: ReadonlyMap<string, FrameRow> | FrameRow[], stacks: StackRow[], limit = 6): Hotspot[] {
  const lookup = frames instanceof Map ? frames : new Map((frames as FrameRow[]).map((frame) => [frame.frame_key, frame]));
  return rankFrames({ frames: lookup, stacks }, { limit }).map((row) => {
    const frame = lookup.get(row.frame_key);
    return {
      function: frame?.function ?? row.frame_key,
      file: frame?.file ?? null,
      line: frame?.line ?? null,
      self_share: row.self_share,
      total_share: row.total_share,
    };
  });
}

function expectSameHotspots(actual: Hotspot[], expected: Hotspot[]): void {
  expect(actual.map((row) => [row.function, row.file, row.line])).toEqual(expected.map((row) => [row.function, row.file, row.line]));
  actual.forEach((row, index) => {
    expect(row.self_share).toBeCloseTo((expected[index] as Hotspot).self_share, 6);
    expect(row.total_share).toBeCloseTo((expected[index] as Hotspot).total_share, 6);
  });
}

const frames = syntheticFrameRows();
const cpuStacks = syntheticStacks("ns");
const expectedCpu = hotspots(frames, cpuStacks);

describe("speedscope", () => {
  test("passes the speedscope schema and keeps one profile per thread", () => {
    const document = toSpeedscope(frames, cpuStacks, { name: "synthetic" });
    expect(speedscopeSchemaViolations(document)).toEqual([]);
    expect(document.profiles.map((profile) => profile.name).sort()).toEqual(["MainThread", "worker-1"]);
    expect(document.profiles.every((profile) => profile.unit === "nanoseconds" && profile.type === "sampled")).toBe(true);
    expect(document.shared.frames.find((frame) => frame.name === "hot_path")).toEqual({ name: "hot_path", file: "app/hot.py", line: 5 });
    const main = document.profiles.find((profile) => profile.name === "MainThread");
    expect(main?.endValue).toBe(100_000_000);
    expect(main?.weights.reduce((sum, weight) => sum + weight, 0)).toBe(100_000_000);
    const mixed = toSpeedscope(frames, [...syntheticStacks("ns"), ...syntheticStacks("bytes")]);
    expect(speedscopeSchemaViolations(mixed)).toEqual([]);
    expect(new Set(mixed.profiles.map((profile) => profile.unit))).toEqual(new Set(["nanoseconds", "bytes"]));
    expect(speedscopeSchemaViolations({ ...document, profiles: [{ ...main, samples: [[99]], weights: [1] }] })).toEqual([
      "profiles[0].samples[0] must list frame indices below 9",
    ]);
  });

  test("re-imports with the same hotspots", async () => {
    const path = join(directory, "cpu.speedscope.json");
    const summary = await writeSpeedscope(path, frames, cpuStacks);
    expect(summary.bytes).toBeGreaterThan(0);
    expect(speedscopeSchemaViolations(JSON.parse(readFileSync(path, "utf8")))).toEqual([]);
    const sink = new MemoryEvidenceSink();
    await extractSpeedscope(path, sink, options);
    expect(new Set(sink.stacks.map((row) => row.unit))).toEqual(new Set(["ns"]));
    expectSameHotspots(hotspots(sink.frames, sink.stacks), expectedCpu);
  });
});

describe("collapsed", () => {
  test("writes py-spy style frames with integer weights", () => {
    const text = toCollapsed(frames, syntheticStacks("samples"));
    expect(text.split("\n")).toContain(
      "main (app/main.py:1);handle_request (app/server.py:10);hot_path (app/hot.py:5);compute_a (app/hot.py:20) 30",
    );
    expect(() => toCollapsed(frames, [...syntheticStacks("samples"), ...syntheticStacks("bytes")])).toThrow(/mix samples and bytes/);
    expect(toCollapsed(frames, [...syntheticStacks("samples"), ...syntheticStacks("bytes")], { unit: "bytes" })).toContain(" 30\n");
  });

  test("re-imports with the same hotspots", async () => {
    const path = join(directory, "cpu.collapsed.txt");
    const summary = await writeCollapsed(path, frames, cpuStacks);
    expect(summary.unit).toBe("ns");
    const sink = new MemoryEvidenceSink();
    await extractCollapsed(path, sink, { ...options, unit: summary.unit });
    expectSameHotspots(hotspots(sink.frames, sink.stacks), expectedCpu);
  });
});

describe("collapsed re-imports whatever the names hold", () => {
  test("a first frame starting with '[', a NUL, a name that reads as decorated, one symbol in two modules, a line over 64 KiB", async () => {
    const native = (name: string, module: string | null) =>
      frameRow({ function: name, file: null, line: null, module, language: "native" });
    const unknown = native("[unknown]", null);
    const main = native("main", "app");
    const nul = native("read\u0000buffer", null);
    const decorated = native("operator[] [x]", null);
    const placed = native("looks (like.py:3)", null);
    const libc = native("memcpy", "libc.so.6");
    const libfoo = native("memcpy", "libfoo.so");
    const long = native(`template<${"T".repeat(70_000)}>`, null);
    const all = [unknown, main, nul, decorated, placed, libc, libfoo, long];
    const stack = (leaf: FrameRow, weight: number): StackRow => ({
      thread: null,
      process: null,
      frame_keys: [unknown.frame_key, main.frame_key, leaf.frame_key],
      weight,
      unit: "samples",
      sample_count: weight,
    });
    const stacks = [stack(long, 60), stack(nul, 50), stack(libc, 40), stack(decorated, 30), stack(libfoo, 20), stack(placed, 10)];
    const path = join(directory, "names.collapsed.txt");
    await writeCollapsed(path, all, stacks);
    expect(readFileSync(path, "utf8").startsWith("[unknown];main [app];template<")).toBe(true);
    expect((await detectProfileFormat(path)).format).toBe("collapsed");
    const sink = new MemoryEvidenceSink();
    await extractProfile(path, sink, { projectRoot: null });
    const read = sink.stacks
      .map((row) => {
        const leaf = sink.frames.get(row.frame_keys[row.frame_keys.length - 1] as string) as FrameRow;
        return [leaf.function, leaf.module, row.weight];
      })
      .sort((left, right) => (right[2] as number) - (left[2] as number));
    expect(read).toEqual([
      [long.function, null, 60],
      ["read\u0000buffer", null, 50],
      ["memcpy", "libc.so.6", 40],
      ["operator[] [x]", null, 30],
      ["memcpy", "libfoo.so", 20],
      ["looks (like.py:3)", null, 10],
    ]);
  });
});

describe("chrome trace", () => {
  test("stacks become a flame chart that re-imports with the same hotspots", async () => {
    const path = join(directory, "cpu.trace.json");
    await writeChromeTrace(path, { frames, stacks: cpuStacks });
    const document = JSON.parse(readFileSync(path, "utf8")) as {
      traceEvents: Array<{ ph: string; name: string; dur?: number; args?: { name?: string } }>;
    };
    const hot = document.traceEvents.find((event) => event.name === "hot_path");
    expect(hot?.ph).toBe("X");
    expect(hot?.dur).toBe(60_000);
    expect(
      document.traceEvents
        .filter((event) => event.ph === "M")
        .map((event) => event.args?.name)
        .sort(),
    ).toEqual(["MainThread", "worker-1"]);
    const sink = new MemoryEvidenceSink();
    await extractChromeTrace(path, sink, options);
    expectSameHotspots(hotspots(sink.frames, sink.stacks), expectedCpu);
  });

  test("trace events are written back and re-import as the same events", async () => {
    const { syntheticTraceEvents } = await import("../../../fixtures/report/report-input.ts");
    const events = syntheticTraceEvents(5, ["1", "2"]);
    const path = join(directory, "events.trace.json");
    await writeChromeTrace(path, { trace_events: events });
    const sink = new MemoryEvidenceSink();
    await extractChromeTrace(path, sink, options);
    const simplify = (rows: typeof events) =>
      rows
        .map((row) => [row.name, row.ts_ns, row.dur_ns, row.pid, row.tid, row.depth, row.phase])
        .sort((left, right) => String(left).localeCompare(String(right)));
    expect(simplify(sink.traceEvents)).toEqual(simplify(events));
    expect(sink.traceEvents.find((row) => row.name === "aten::matmul")?.args).toBe('{"shape":[64,64]}');
  });
});

describe("pprof", () => {
  test("is a gzip-compressed profile.proto with leaf-first locations", () => {
    const bytes = toPprof(frames, cpuStacks);
    expect(bytes[0]).toBe(0x1f);
    expect(bytes[1]).toBe(0x8b);
    const raw = gunzipSync(bytes);
    // Field 1 (sample_type, length-delimited) opens the message; the string table holds the names.
    expect(raw[0]).toBe(0x0a);
    const text = new TextDecoder().decode(raw);
    for (const name of ["cpu", "nanoseconds", "samples", "count", "hot_path", "app/hot.py", "thread", "MainThread"])
      expect(text).toContain(name);
  });

  test("re-imports with the same hotspots", async () => {
    const path = join(directory, "cpu.pb.gz");
    const summary = await writePprof(path, frames, cpuStacks);
    expect(summary.unit).toBe("ns");
    const sink = new MemoryEvidenceSink();
    await extractPprof(path, sink, options);
    expect(new Set(sink.stacks.map((row) => row.unit))).toEqual(new Set(["ns"]));
    expect(new Set(sink.stacks.map((row) => row.thread))).toEqual(new Set(["MainThread", "worker-1"]));
    expectSameHotspots(hotspots(sink.frames, sink.stacks), expectedCpu);
  });

  test("memory profiles are labelled in-use (inuse_objects, inuse_space) with each stack's live allocation count", async () => {
    const path = join(directory, "memory.pb.gz");
    const memory = syntheticStacks("bytes").map((stack, index) => ({ ...stack, weight: stack.weight * 4096, sample_count: index + 1 }));
    await writePprof(path, frames, memory);
    const sink = new MemoryEvidenceSink();
    const result = await extractPprof(path, sink, options);
    expect(new Set(sink.stacks.map((row) => row.unit))).toEqual(new Set(["bytes"]));
    expect(result.limitations).toContain('weighted by sample type "inuse_space" (bytes); the profile also has inuse_objects.');
    const byWeight = (rows: StackRow[]) => rows.map((row) => [row.weight, row.sample_count]).sort((left, right) => left[0]! - right[0]!);
    expect(byWeight(sink.stacks)).toEqual(byWeight(memory));
    expectSameHotspots(hotspots(sink.frames, sink.stacks), hotspots(frames, memory));
  });
});

test("a million samples stream out and back with the same top hotspots", async () => {
  const large = largeSampleSet(1_000_000, 100_000);
  const expected = hotspots(large.frames, large.stacks, 5);
  const speedscopePath = join(directory, "large.speedscope.json");
  const pprofPath = join(directory, "large.pb.gz");
  await writeSpeedscope(speedscopePath, large.frames, large.stacks);
  await writePprof(pprofPath, large.frames, large.stacks);
  for (const [path, extract] of [
    [speedscopePath, extractSpeedscope],
    [pprofPath, extractPprof],
  ] as const) {
    const sink = new MemoryEvidenceSink();
    await extract(path, sink, options);
    expectSameHotspots(hotspots(sink.frames, sink.stacks, 5), expected);
  }
});
