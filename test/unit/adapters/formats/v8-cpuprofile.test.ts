import { describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { extractV8CpuProfile } from "../../../../src/adapters/formats/v8-cpuprofile.ts";
import { MemoryEvidenceSink } from "../../../../src/domain/evidence.ts";
import { fixtures, hottest, leaf, names, parseFailure, projectRoot, snapshot, tempDir } from "./helpers.ts";
import { seededRandom as seeded } from "../../../support/random.ts";

const path = join(fixtures, "node-busy.cpuprofile");

describe("extractV8CpuProfile on a real node --cpu-prof profile", () => {
  test("the hot function has the largest self time; callers; time sums to the profile's span", async () => {
    const sink = new MemoryEvidenceSink();
    const result = await extractV8CpuProfile(path, sink, { projectRoot });
    expect(result.producer).toBe("v8");
    expect(hottest(sink)).toBe("hotLoop");
    const hot = sink.stacks.filter((stack) => leaf(sink, stack).function === "hotLoop");
    expect(names(sink, hot[0]!).slice(-2)).toEqual(["outer", "hotLoop"]);
    expect(leaf(sink, hot[0]!)).toMatchObject({ file: "test/fixtures/formats/busy.js", line: 2, language: "javascript" });
    for (const frame of sink.frames.values()) expect(frame.function).not.toBe("(root)");
    const profile = JSON.parse(readFileSync(path, "utf8")) as {
      samples: number[];
      timeDeltas: number[];
      startTime: number;
      endTime: number;
    };
    const total = sink.stacks.reduce((sum, stack) => sum + stack.weight, 0);
    const span = (profile.endTime - profile.startTime - profile.timeDeltas[0]!) * 1000;
    expect(Math.abs(total - span)).toBeLessThanOrEqual(sink.stacks.length);
    expect(sink.stacks.every((stack) => stack.unit === "ns")).toBe(true);
    const counted = sink.stacks.reduce((sum, stack) => sum + stack.sample_count, 0);
    expect(counted).toBeLessThanOrEqual(profile.samples.length);
    expect(counted).toBeGreaterThan(profile.samples.length * 0.9);
  });

  test("the streaming path equals the JSON.parse path", async () => {
    const whole = new MemoryEvidenceSink();
    const streamed = new MemoryEvidenceSink();
    await extractV8CpuProfile(path, whole, { projectRoot, parseMode: "whole" });
    await extractV8CpuProfile(path, streamed, { projectRoot, parseMode: "stream" });
    expect(snapshot(streamed)).toEqual(snapshot(whole));
  });
});

describe("extractV8CpuProfile on a hand-written profile", () => {
  test("(program), (idle) and (garbage collector) stay frames; each sample lasts until the next", async () => {
    const { dir, cleanup } = tempDir();
    try {
      const file = join(dir, "hand.cpuprofile");
      const frame = (functionName: string, url = "", lineNumber = -1) => ({
        functionName,
        scriptId: "0",
        url,
        lineNumber,
        columnNumber: 0,
      });
      writeFileSync(
        file,
        JSON.stringify({
          nodes: [
            { id: 1, callFrame: frame("(root)"), hitCount: 0, children: [2, 3, 4, 5] },
            { id: 2, callFrame: frame("(program)"), hitCount: 0 },
            { id: 3, callFrame: frame("(idle)"), hitCount: 0 },
            { id: 4, callFrame: frame("(garbage collector)"), hitCount: 0 },
            { id: 5, callFrame: frame("main", "file:///proj/src/main.js", 0), hitCount: 0, children: [6] },
            { id: 6, callFrame: frame("", "file:///proj/src/main.js", 9), hitCount: 0 },
          ],
          startTime: 1000,
          endTime: 1100,
          samples: [6, 6, 2, 3, 4, 5],
          timeDeltas: [0, 10, 20, 10, 20, 10],
        }),
      );
      const sink = new MemoryEvidenceSink();
      await extractV8CpuProfile(file, sink, { projectRoot: "/proj" });
      const rows = sink.stacks.map((stack) => [names(sink, stack).join(";"), stack.weight, stack.sample_count]);
      expect(rows).toEqual([
        ["main;(anonymous)", 30_000, 2],
        ["(program)", 10_000, 1],
        ["(idle)", 20_000, 1],
        ["(garbage collector)", 10_000, 1],
        ["main", 30_000, 1],
      ]);
      expect([...sink.frames.values()].find((row) => row.function === "(anonymous)")).toMatchObject({ file: "src/main.js", line: 10 });
      const cut = join(dir, "cut.cpuprofile");
      writeFileSync(cut, readFileSync(file, "utf8").slice(0, 120));
      const error = await parseFailure(() =>
        extractV8CpuProfile(cut, new MemoryEvidenceSink(), { projectRoot: null, parseMode: "stream" }),
      );
      expect(error.code).toBe("ARTIFACT_PARSE_FAILED");
      expect(error.message).toContain("byte 120");
    } finally {
      cleanup();
    }
  });
});

/** A random profile: a tree of 40 nodes, samples that sometimes name unknown ids, deltas that are sometimes negative or missing. */
function randomProfile(seed: number): Record<string, unknown> {
  const next = seeded(seed);
  const nodes = [{ id: 1, callFrame: { functionName: "(root)", url: "", lineNumber: -1 }, children: [] as number[] }];
  for (let id = 2; id <= 40; id++) {
    const parent = nodes[Math.floor(next() * nodes.length)]!;
    parent.children.push(id);
    nodes.push({ id, callFrame: { functionName: `f${id % 13}`, url: `file:///proj/m${id % 5}.js`, lineNumber: id % 7 }, children: [] });
  }
  const count = 200 + Math.floor(next() * 300);
  const samples = Array.from({ length: count }, () => (next() < 0.02 ? 999 : 1 + Math.floor(next() * 40)));
  const deltaCount = count + Math.floor(next() * 5) - 2;
  const timeDeltas = Array.from({ length: deltaCount }, () => (next() < 0.03 ? -5 : Math.round(next() * 2000) / 8));
  const profile: Record<string, unknown> = { nodes, startTime: 1_000_000 + Math.floor(next() * 1e6), samples, timeDeltas };
  if (next() < 0.8) profile.endTime = (profile.startTime as number) + 400_000;
  return profile;
}

describe("key order and parse mode", () => {
  test("random profiles (unknown node ids, negative and missing deltas, no endTime) give the same rows in any key order, streamed or parsed whole", async () => {
    const { dir, cleanup } = tempDir();
    try {
      for (let seed = 1; seed <= 12; seed++) {
        const profile = randomProfile(seed);
        const orders = [
          ["nodes", "startTime", "endTime", "samples", "timeDeltas"],
          ["timeDeltas", "samples", "nodes", "endTime", "startTime"],
          ["nodes", "samples", "timeDeltas", "startTime", "endTime"],
          ["samples", "nodes", "startTime", "timeDeltas", "endTime"],
        ];
        const snapshots: unknown[] = [];
        for (const [index, order] of orders.entries()) {
          const file = join(dir, `random-${seed}-${index}.cpuprofile`);
          writeFileSync(file, JSON.stringify(Object.fromEntries(order.filter((key) => key in profile).map((key) => [key, profile[key]]))));
          for (const parseMode of ["stream", "whole"] as const) {
            const sink = new MemoryEvidenceSink();
            const result = await extractV8CpuProfile(file, sink, { projectRoot: "/proj", parseMode });
            snapshots.push({ rows: snapshot(sink), limitations: result.limitations });
          }
        }
        for (const other of snapshots.slice(1)) expect(other).toEqual(snapshots[0]);
      }
    } finally {
      cleanup();
    }
  });
});
