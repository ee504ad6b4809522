import { describe, expect, test } from "bun:test";
import { ddmin } from "../../../src/analysis/reduction/ddmin.ts";
import { partitionArtifact } from "../../../src/analysis/reduction/partitioners.ts";
import { FlameoxError } from "../../../src/domain/errors.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const all = (count: number) => Array.from({ length: count }, (_, index) => index);

describe("ddmin", () => {
  test("10,000 units reduce to exactly the two a property needs, one-minimal, in a few dozen tests", async () => {
    const tested: number[][] = [];
    const result = await ddmin(10_000, new Map(), async (candidate) => {
      tested.push(candidate.kept);
      return candidate.kept.includes(1234) && candidate.kept.includes(8765) ? "interesting" : "rejected";
    });
    expect(result.kept).toEqual([1234, 8765]);
    expect(result.minimality).toBe("one_minimal");
    expect(result.stoppedBy).toBeNull();
    // Logarithmic in the input for a property of two units: far from the 10,000 single-unit removals.
    expect(tested.length).toBeLessThan(200);
    for (const kept of tested) expect(kept).toEqual([...kept].sort((left, right) => left - right));
  });

  test("a candidate that keeps a dependent unit keeps what it depends on", async () => {
    // Unit 7 (an end event) needs unit 2 (its begin); the property only asks for 7.
    const requires = new Map([[7, [2]]]);
    const result = await ddmin(10, requires, async (candidate) => {
      if (candidate.kept.includes(7)) expect(candidate.kept).toContain(2);
      return candidate.kept.includes(7) ? "interesting" : "rejected";
    });
    expect(result.kept).toEqual([2, 7]);
    expect(result.dependencyNoOps).toBeGreaterThan(0);
  });

  test("stop keeps the best configuration without claiming minimality; unresolved says so", async () => {
    let calls = 0;
    const stopped = await ddmin(100, new Map(), async (candidate) => {
      calls += 1;
      if (calls > 3) return "stop";
      return candidate.kept.includes(5) ? "interesting" : "rejected";
    });
    expect(stopped.stoppedBy).toBe("stop");
    expect(stopped.minimality).toBe("not_claimed");
    expect(stopped.kept).toContain(5);
    expect(stopped.kept.length).toBeLessThan(100);
    const unresolved = await ddmin(100, new Map(), async () => "unresolved");
    expect(unresolved).toMatchObject({ stoppedBy: "unresolved", minimality: "not_claimed", kept: all(100) });
  });
});

describe("partitioners", () => {
  test("text_lines keeps every byte: the full rebuild is the original, a subset keeps its lines' endings", () => {
    const original = encoder.encode("alpha\r\nbeta\n\n\u00e9t\u00e9\ngamma without newline");
    const partition = partitionArtifact("text_lines", original);
    expect(partition.unitCount).toBe(5);
    expect(partition.rebuild(all(5))).toEqual(original);
    expect(decoder.decode(partition.rebuild([0, 3]))).toBe("alpha\r\n\u00e9t\u00e9\n");
    expect(decoder.decode(partition.rebuild([4]))).toBe("gamma without newline");
  });

  test("json_top_level cuts an array into elements and an object into members", () => {
    const array = partitionArtifact("json_top_level", encoder.encode('[ {"a": 1}, 2, "three" ]'));
    expect(array.unitCount).toBe(3);
    expect(JSON.parse(decoder.decode(array.rebuild([0, 2])))).toEqual([{ a: 1 }, "three"]);
    const object = partitionArtifact("json_top_level", encoder.encode('{"x": [1], "y": null, "z": true}'));
    expect(JSON.parse(decoder.decode(object.rebuild([1, 2])))).toEqual({ y: null, z: true });
  });

  test("jsonl_records skips blank lines and refuses a line that is not JSON", () => {
    const partition = partitionArtifact("jsonl_records", encoder.encode('{"a":1}\n\n{"b":2}\r\n[3]\n'));
    expect(partition.unitCount).toBe(3);
    expect(decoder.decode(partition.rebuild([0, 2]))).toBe('{"a":1}\n[3]\n');
    expect(() => partitionArtifact("jsonl_records", encoder.encode('{"a":1}\nnot json\n'))).toThrow(FlameoxError);
  });

  test("chrome_trace_events: end events depend on their begin events; other top-level keys survive", () => {
    const trace = {
      displayTimeUnit: "ns",
      traceEvents: [
        { ph: "M", name: "thread_name", pid: 1, tid: 1, args: { name: "main" } },
        { ph: "B", name: "outer", pid: 1, tid: 1, ts: 0 },
        { ph: "B", name: "inner", pid: 1, tid: 1, ts: 1 },
        { ph: "E", pid: 1, tid: 1, ts: 2 },
        { ph: "E", pid: 1, tid: 1, ts: 3 },
        { ph: "b", name: "request", cat: "net", id: "0x1", pid: 1, ts: 4 },
        { ph: "e", name: "request", cat: "net", id: "0x1", pid: 1, ts: 5 },
        { ph: "X", name: "complete", pid: 1, tid: 2, ts: 6, dur: 1 },
      ],
      otherData: { version: "x" },
    };
    const partition = partitionArtifact("chrome_trace_events", encoder.encode(JSON.stringify(trace)));
    expect(partition.unitCount).toBe(8);
    expect(Object.fromEntries(partition.requires)).toEqual({ 3: [2], 4: [1], 6: [5] });
    const rebuilt = JSON.parse(decoder.decode(partition.rebuild([1, 4, 7])));
    expect(rebuilt).toEqual({
      displayTimeUnit: "ns",
      traceEvents: [trace.traceEvents[1], trace.traceEvents[4], trace.traceEvents[7]],
      otherData: { version: "x" },
    });
    // py-spy writes the bare array form.
    const bare = partitionArtifact("chrome_trace_events", encoder.encode(JSON.stringify(trace.traceEvents)));
    expect(JSON.parse(decoder.decode(bare.rebuild([7])))).toEqual([trace.traceEvents[7]]);
  });

  test("an artifact the partitioner cannot read is ARTIFACT_PARSE_FAILED naming the way out", () => {
    for (const [partitioner, text] of [
      ["json_top_level", "{not json"],
      ["json_top_level", "42"],
      ["chrome_trace_events", '{"events": []}'],
      ["text_lines", ""],
    ] as const) {
      let error: unknown;
      try {
        partitionArtifact(partitioner, encoder.encode(text));
      } catch (caught) {
        error = caught;
      }
      expect(error).toBeInstanceOf(FlameoxError);
      expect((error as FlameoxError).code).toBe("ARTIFACT_PARSE_FAILED");
      expect((error as FlameoxError).remediation.length).toBeGreaterThan(0);
    }
  });
});
