import { afterAll, beforeAll, expect, test } from "bun:test";
import { type DuckDBConnection, DuckDBInstance } from "@duckdb/node-api";
import { type EvidenceQuery, uncachedEvidence } from "../../../src/analysis/evidence-query.ts";
import { traceWindow, traceWindowEventsThrough } from "../../../src/analysis/recipes/trace-window.ts";
import { seededRandom } from "../../support/random.ts";

type Event = { event_id: number; ts_ns: number; dur_ns: number | null };

let instance: DuckDBInstance;
let connection: DuckDBConnection;
let evidence: EvidenceQuery;
const events: Event[] = [];

beforeAll(async () => {
  // Seeded short events over 10 ms, instants among them, and one long event that starts first and
  // ends last: the window's lower bound on ts_ns must keep it, however far before the window it starts.
  const next = seededRandom(7);
  for (let index = 1; index <= 2000; index++) {
    const instant = next() < 0.1;
    events.push({
      event_id: index,
      ts_ns: 1_000_000 + Math.floor(next() * 10_000_000),
      dur_ns: instant ? null : Math.floor(next() * 50_000),
    });
  }
  events.push({ event_id: 2001, ts_ns: 500_000, dur_ns: 10_600_000 });
  instance = await DuckDBInstance.create(":memory:");
  connection = await instance.connect();
  await connection.run(
    "CREATE TABLE trace_events (run_id VARCHAR, artifact_id VARCHAR, event_id BIGINT, parent_id BIGINT, depth BIGINT, name VARCHAR, category VARCHAR, ts_ns BIGINT, dur_ns BIGINT, pid VARCHAR, tid VARCHAR, args VARCHAR, correlation VARCHAR, device VARCHAR, stream VARCHAR, phase VARCHAR)",
  );
  const values = events
    .map(
      (event) =>
        `('run', 'artifact', ${event.event_id}, NULL, 0, 'op${event.event_id}', 'cpu_op', ${event.ts_ns}, ${event.dur_ns ?? "NULL"}, '1', '1', NULL, NULL, NULL, NULL, 'X')`,
    )
    .join(", ");
  await connection.run(`INSERT INTO trace_events VALUES ${values}`);
  evidence = uncachedEvidence(async (sql, bound) => (await connection.runAndReadAll(sql, bound)).getRowObjectsJS() as never);
});

afterAll(() => {
  connection.closeSync();
  instance.closeSync();
});

/** The events overlapping [start, end) in (ts_ns, event_id) order, by brute force. */
function expected(start: number, end: number): number[] {
  return events
    .filter((event) => event.ts_ns < end && event.ts_ns + (event.dur_ns ?? 0) >= start)
    .sort((a, b) => a.ts_ns - b.ts_ns || a.event_id - b.event_id)
    .map((event) => event.event_id);
}

test("a window holds exactly the events that overlap it, the long one that started far before it included", async () => {
  for (const [start, end] of [
    [0, 400_000],
    [1_000_000, 1_010_000],
    [5_000_000, 5_200_000],
    [10_990_000, 11_050_000],
    [11_050_000, 11_200_000],
    [20_000_000, 20_010_000],
  ] as const) {
    const page = await traceWindow(evidence, { startNs: start, endNs: end, after: null, limit: 10_000 });
    const ids = expected(start, end);
    expect(page.events.map((event) => event.event_id)).toEqual(ids);
    expect(page.total).toBe(ids.length);
    if (start >= 1_000_000 && start < 11_000_000) expect(ids).toContain(2001);
  }
});

test("paging with a keyset and counting what earlier pages returned agree with the whole window", async () => {
  const [start, end] = [4_000_000, 4_500_000];
  const ids = expected(start, end);
  const first = await traceWindow(evidence, { startNs: start, endNs: end, after: null, limit: 7 });
  const last = first.events.at(-1)!;
  const after = { ts_ns: last.ts_ns, event_id: last.event_id, run_id: last.run_id };
  const second = await traceWindow(evidence, { startNs: start, endNs: end, after, limit: 10_000 });
  expect([...first.events, ...second.events].map((event) => event.event_id)).toEqual(ids);
  expect(await traceWindowEventsThrough(evidence, { startNs: start, endNs: end }, after)).toBe(7);
});
