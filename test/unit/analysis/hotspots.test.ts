import { afterAll, beforeAll, expect, test } from "bun:test";
import { DuckDBInstance, type DuckDBConnection } from "@duckdb/node-api";
import { queryCallEdges, queryHotspots, queryStackExamples, resolveFrame, stackUnits } from "../../../src/analysis/hotspots.ts";
import type { EvidenceQuery } from "../../../src/analysis/evidence-query.ts";

let instance: DuckDBInstance;
let connection: DuckDBConnection;
let evidence: EvidenceQuery;

/** A hand-checkable profile: main → a → b (leaf), main → a → a (recursion) → b, main → c, in two threads. */
beforeAll(async () => {
  instance = await DuckDBInstance.create(":memory:");
  connection = await instance.connect();
  await connection.run(`CREATE TABLE frames AS SELECT * FROM (VALUES
    ('k_main', 'main', 'app.py', 1, NULL, 'python'),
    ('k_a', 'a', 'app.py', 10, NULL, 'python'),
    ('k_a2', 'a', 'app.py', 12, NULL, 'python'),
    ('k_b', 'b', 'app.py', 20, NULL, 'python'),
    ('k_c', 'c', 'app.py', 30, NULL, 'python')) t(frame_key, function, file, line, module, language)`);
  await connection.run(`CREATE TABLE stacks AS SELECT * FROM (VALUES
    ('T1', ['k_main', 'k_a', 'k_b'], 50.0, 'samples'),
    ('T1', ['k_main', 'k_a', 'k_a2', 'k_b'], 20.0, 'samples'),
    ('T2', ['k_main', 'k_c'], 30.0, 'samples'),
    ('T2', ['k_main', 'k_c'], 1000.0, 'bytes')) t(thread, frame_keys, weight, unit)`);
  evidence = {
    async rows(sql) {
      return (await connection.runAndReadAll(sql)).getRowObjectsJS() as never;
    },
  };
});

afterAll(() => {
  connection.closeSync();
  instance.closeSync();
});

test("self and total per function: recursion counts once per stack, units are never mixed", async () => {
  const units = await stackUnits(evidence);
  expect(units.map((unit) => unit.unit)).toEqual(["bytes", "samples"]);
  const page = await queryHotspots(
    evidence,
    { groupBy: "function", unit: "samples", thread: null, perThread: false, orderBy: "self" },
    { offset: 0, limit: 10 },
  );
  const byName = Object.fromEntries(page.hotspots.map((hotspot) => [hotspot.function, hotspot]));
  expect(page.total_weight).toBe(100);
  expect(byName.b!.self_weight).toBe(70);
  expect(byName.b!.total_weight).toBe(70);
  expect(byName.a!.self_weight).toBe(0);
  expect(byName.a!.total_weight).toBe(70);
  expect(byName.c!.self_share).toBeCloseTo(0.3, 10);
  expect(byName.main!.total_share).toBeCloseTo(1, 10);
  // Ties on self weight fall back to total weight: main (100) before a (70).
  expect(page.hotspots.map((hotspot) => hotspot.function)).toEqual(["b", "c", "main", "a"]);
  expect(page.hidden_self_share).toBe(0);
});

test("by line keeps the recursive frames apart; truncation reports the hidden self share", async () => {
  const page = await queryHotspots(
    evidence,
    { groupBy: "line", unit: "samples", thread: null, perThread: false, orderBy: "total" },
    { offset: 0, limit: 2 },
  );
  expect(page.total).toBe(5);
  // b and a (line 10) tie on total weight (70); b's self weight puts it first.
  expect(page.hotspots.map((hotspot) => hotspot.function)).toEqual(["main", "b"]);
  // Only b's 70 of 100 self weight is shown; c's 30 is hidden.
  expect(page.hidden_self_share).toBeCloseTo(0.3, 10);
});

test("per thread and one thread", async () => {
  const perThread = await queryHotspots(
    evidence,
    { groupBy: "function", unit: "samples", thread: null, perThread: true, orderBy: "self" },
    { offset: 0, limit: 10 },
  );
  const mainRows = perThread.hotspots.filter((hotspot) => hotspot.function === "main");
  expect(mainRows.map((row) => [row.thread, row.total_weight]).sort()).toEqual([
    ["T1", 70],
    ["T2", 30],
  ]);
  const onlyT2 = await queryHotspots(
    evidence,
    { groupBy: "function", unit: "samples", thread: "T2", perThread: false, orderBy: "self" },
    { offset: 0, limit: 10 },
  );
  expect(onlyT2.hotspots[0]!.function).toBe("c");
  expect(onlyT2.total_weight).toBe(30);
});

test("callers, callees and stack examples of a function", async () => {
  const resolved = await resolveFrame(
    evidence,
    (
      await queryHotspots(
        evidence,
        { groupBy: "function", unit: "samples", thread: null, perThread: false, orderBy: "self" },
        { offset: 0, limit: 1 },
      )
    ).hotspots[0]!.frame_id,
  );
  expect(resolved!.identity.function).toBe("b");
  const callers = await queryCallEdges(
    evidence,
    { frameId: resolved!.identity.frame_id, groupBy: "function", direction: -1, unit: "samples", thread: null },
    { offset: 0, limit: 10 },
  );
  expect(callers.edges.map((edge) => [edge.function, edge.weight])).toEqual([["a", 70]]);
  expect(callers.frame_weight).toBe(70);
  const main = await queryHotspots(
    evidence,
    { groupBy: "function", unit: "samples", thread: null, perThread: false, orderBy: "total" },
    { offset: 0, limit: 1 },
  );
  const callees = await queryCallEdges(
    evidence,
    { frameId: main.hotspots[0]!.frame_id, groupBy: "function", direction: 1, unit: "samples", thread: null },
    { offset: 0, limit: 10 },
  );
  expect(callees.edges.map((edge) => [edge.function, edge.weight])).toEqual([
    ["a", 70],
    ["c", 30],
  ]);
  const rootCallers = await queryCallEdges(
    evidence,
    { frameId: main.hotspots[0]!.frame_id, groupBy: "function", direction: -1, unit: "samples", thread: null },
    { offset: 0, limit: 10 },
  );
  expect(rootCallers.edges.map((edge) => edge.function)).toEqual(["<root>"]);
  const examples = await queryStackExamples(
    evidence,
    { frameId: resolved!.identity.frame_id, groupBy: "function", unit: "samples", thread: null },
    { offset: 0, limit: 10 },
  );
  expect(examples.total).toBe(2);
  expect(examples.examples[0]!.frames.map((frame) => frame.function)).toEqual(["main", "a", "b"]);
  expect(examples.examples[0]!.share).toBeCloseTo(0.5, 10);
});

test("both total strategies (hash join for ordinary profiles, lookup map for huge ones) give identical rankings", async () => {
  for (const groupBy of ["function", "line"] as const) {
    for (const perThread of [false, true]) {
      const base = { groupBy, unit: "samples" as const, thread: null, perThread, orderBy: "total" as const };
      const joined = await queryHotspots(evidence, { ...base, strategy: "join" }, { offset: 0, limit: 50 });
      const mapped = await queryHotspots(evidence, { ...base, strategy: "lookup_map" }, { offset: 0, limit: 50 });
      expect(mapped).toEqual(joined);
    }
  }
});

test("the same symbol in two modules stays two functions (folded `memcpy [libc.so.6]` and `memcpy [libfoo.so]`)", async () => {
  const separate = await DuckDBInstance.create(":memory:");
  const own = await separate.connect();
  try {
    await own.run(`CREATE TABLE frames AS SELECT * FROM (VALUES
      ('k_main', 'main', NULL, NULL, 'app', 'native'),
      ('k_libc', 'memcpy', NULL, NULL, 'libc.so.6', 'native'),
      ('k_foo', 'memcpy', NULL, NULL, 'libfoo.so', 'native'),
      ('k_py1', 'run', 'app.py', 3, 'first', 'python'),
      ('k_py2', 'run', 'app.py', 9, 'second', 'python')) t(frame_key, function, file, line, module, language)`);
    await own.run(`CREATE TABLE stacks AS SELECT * FROM (VALUES
      (NULL, ['k_main', 'k_libc'], 5.0, 'samples'),
      (NULL, ['k_main', 'k_foo'], 3.0, 'samples'),
      (NULL, ['k_main', 'k_py1'], 1.0, 'samples'),
      (NULL, ['k_main', 'k_py2'], 1.0, 'samples')) t(thread, frame_keys, weight, unit)`);
    const query: EvidenceQuery = {
      async rows(sql) {
        return (await own.runAndReadAll(sql)).getRowObjectsJS() as never;
      },
    };
    const page = await queryHotspots(
      query,
      { groupBy: "function", unit: "samples", thread: null, perThread: false, orderBy: "self" },
      { offset: 0, limit: 10 },
    );
    const rows = page.hotspots.map((hotspot) => [hotspot.function, hotspot.module, hotspot.self_weight]);
    // A frame with a file is still one function per (name, file) whatever its module says.
    expect(rows).toEqual([
      ["memcpy", "libc.so.6", 5],
      ["memcpy", "libfoo.so", 3],
      ["run", expect.any(String), 2],
      ["main", "app", 0],
    ]);
  } finally {
    own.closeSync();
    separate.closeSync();
  }
});
