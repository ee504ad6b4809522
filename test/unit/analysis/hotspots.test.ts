import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { DuckDBInstance, type DuckDBConnection } from "@duckdb/node-api";
import { queryCallEdges, queryHotspots, queryStackExamples, resolveFrame, stackUnits } from "../../../src/analysis/hotspots.ts";
import { type EvidenceQuery, uncachedEvidence } from "../../../src/analysis/evidence-query.ts";
import { EvidenceView } from "../../../src/store/evidence-query.ts";

// The oracle comparison runs 16 rankings and their oracles on a shared 2-core machine.
setDefaultTimeout(60_000);

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
  // The store's view numbers rows by Parquet file and row; a table numbers them by row id.
  await connection.run("CREATE VIEW stack_rows AS SELECT rowid AS stack_row, * FROM stacks");
  evidence = uncachedEvidence(async (sql, values) => (await connection.runAndReadAll(sql, values)).getRowObjectsJS() as never);
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

/**
 * The ranking as first written: a join and DISTINCT over every (stack, frame) pair. Plain and slow,
 * it is the oracle the single-pass ranking must equal row for row.
 */
function oracleSql(query: {
  groupBy: "function" | "line";
  unit: string;
  thread: string | null;
  perThread: boolean;
  orderBy: "self" | "total";
}) {
  const identity =
    query.groupBy === "line"
      ? "frame_key"
      : "'fn_' || substr(sha256(coalesce(language, '') || chr(0) || coalesce(function, '') || chr(0) || coalesce(file, '')), 1, 24)";
  const threadColumn = query.perThread ? "s.thread" : "NULL";
  const [first, second] = query.orderBy === "self" ? ["self_weight", "total_weight"] : ["total_weight", "self_weight"];
  return `WITH fmap AS (SELECT frame_key, ${identity} AS frame_id, any_value(function) AS function, any_value(file) AS file,
        ${query.groupBy === "line" ? "any_value(line)" : "min(line)"} AS line, any_value(module) AS module, any_value(language) AS language
      FROM frames GROUP BY frame_key, ${identity}),
    s AS (SELECT row_number() OVER () AS stack_id, frame_keys, weight, thread FROM stacks
          WHERE unit = '${query.unit}' ${query.thread === null ? "" : `AND coalesce(thread, '') = '${query.thread}'`} AND len(frame_keys) > 0),
    grand AS (SELECT coalesce(sum(weight), 0) AS total FROM s),
    self AS (SELECT m.frame_id, ${threadColumn} AS thread, sum(s.weight) AS self_weight FROM s JOIN fmap m ON m.frame_key = s.frame_keys[len(s.frame_keys)] GROUP BY ALL),
    members AS (SELECT DISTINCT s.stack_id, s.weight, ${threadColumn} AS thread, m.frame_id FROM s, unnest(s.frame_keys) AS u(key) JOIN fmap m ON m.frame_key = u.key),
    total AS (SELECT frame_id, thread, sum(weight) AS total_weight FROM members GROUP BY ALL),
    identity AS (SELECT frame_id, any_value(function) AS function, any_value(file) AS file, min(line) AS line FROM fmap GROUP BY frame_id)
    SELECT t.frame_id, t.thread, coalesce(se.self_weight, 0) AS self_weight, t.total_weight, i.function, (SELECT total FROM grand) AS grand
    FROM total t LEFT JOIN self se ON se.frame_id = t.frame_id AND se.thread IS NOT DISTINCT FROM t.thread JOIN identity i ON i.frame_id = t.frame_id
    ORDER BY ${first} DESC, ${second} DESC, t.frame_id, t.thread`;
}

test("the single-pass ranking equals the join-and-DISTINCT oracle on a seeded profile with recursion, shared functions and missing frames", async () => {
  const own = await DuckDBInstance.create(":memory:");
  const seeded = await own.connect();
  try {
    // 60 frame keys over 25 functions (most functions reached from several lines), 3,000 stacks (each twice) of depth
    // 1..30 drawn with repeats (recursion), weights 1..4, three threads (one NULL), two units, and one
    // key in 40 missing from the frames table.
    await seeded.run("SELECT setseed(0.16)");
    await seeded.run(`CREATE TABLE frames AS SELECT 'k' || i AS frame_key, 'fn' || (i % 25) AS function, 'm' || (i % 25 % 3) || '.py' AS file,
      i AS line, NULL AS module, 'python' AS language FROM range(60) t(i) WHERE i % 40 <> 7`);
    await seeded.run(`CREATE TABLE stacks AS SELECT CASE i % 3 WHEN 0 THEN 'T1' WHEN 1 THEN 'T2' ELSE NULL END AS thread,
      list_transform(range(1 + CAST(floor(random() * 30) AS BIGINT)), d -> 'k' || CAST(floor(random() * 60) AS BIGINT)) AS frame_keys,
      CAST(1 + floor(random() * 4) AS DOUBLE) AS weight, CASE WHEN i % 7 = 0 THEN 'ns' ELSE 'samples' END AS unit FROM range(3000) t(i)`);
    // Every stack twice, so equal rows must still count apart.
    await seeded.run("INSERT INTO stacks SELECT * FROM stacks");
    await seeded.run("CREATE VIEW stack_rows AS SELECT rowid AS stack_row, * FROM stacks");
    const direct = uncachedEvidence(async (sql, values) => (await seeded.runAndReadAll(sql, values)).getRowObjectsJS() as never);
    let compared = 0;
    // Then 40 functions over the same keys: half reached from two lines, half from one, so keys that
    // share a function and keys that do not meet in the same stacks (a fresh connection keeps no ranking).
    for (const [functions, groupings] of [
      [25, ["function", "line"]],
      [40, ["function"]],
    ] as const) {
      if (functions !== 25)
        await seeded.run(`UPDATE frames SET function = 'fn' || (line % ${functions}), file = 'm' || (line % ${functions} % 3) || '.py'`);
      const paging = await own.connect();
      const view = new EvidenceView(paging, {
        frames: ["frames"],
        stacks: ["stacks"],
        trace_events: [],
        measurements: [],
        observations: [],
      });
      for (const groupBy of groupings) {
        for (const perThread of [false, true]) {
          for (const thread of [null, "T2"]) {
            for (const orderBy of ["self", "total"] as const) {
              const query = { groupBy, unit: "samples" as const, thread, perThread, orderBy };
              const oracle = (await seeded.runAndReadAll(oracleSql(query))).getRowObjectsJS() as Record<string, unknown>[];
              const all = await queryHotspots(direct, query, { offset: 0, limit: 10_000 });
              expect(all.total).toBe(oracle.length);
              expect(
                all.hotspots.map((row): unknown[] => [row.frame_id, row.thread, row.self_weight, row.total_weight, row.function]),
              ).toEqual(
                oracle.map((row) => [
                  row.frame_id,
                  perThread ? (row.thread ?? null) : null,
                  Number(row.self_weight),
                  Number(row.total_weight),
                  row.function,
                ]),
              );
              expect(all.total_weight).toBe(Number(oracle[0]?.grand ?? all.total_weight));
              // Paged through a kept view, twice (the second time from the kept ranking), the pages join up to the whole.
              for (let round = 0; round < 2; round += 1) {
                const pages = [];
                for (let offset = 0; offset < all.total; offset += 40)
                  pages.push(...(await queryHotspots(view, query, { offset, limit: 40 })).hotspots);
                expect(pages).toEqual(all.hotspots);
              }
              compared += oracle.length;
            }
          }
        }
      }
      paging.closeSync();
    }
    expect(compared).toBeGreaterThan(500);
  } finally {
    seeded.closeSync();
    own.closeSync();
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
    await own.run("CREATE VIEW stack_rows AS SELECT rowid AS stack_row, * FROM stacks");
    const query: EvidenceQuery = uncachedEvidence(async (sql, values) => (await own.runAndReadAll(sql, values)).getRowObjectsJS() as never);
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
