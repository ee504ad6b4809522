import { describe, expect, test } from "bun:test";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { extractChromeTrace } from "../../../../src/adapters/formats/chrome-trace.ts";
import { MemoryEvidenceSink, type TraceEventRow } from "../../../../src/domain/evidence.ts";
import { repositoryRoot, runCommand, venvPython } from "../../../fixtures/python/tools.ts";
import { fixtures, leaf } from "./helpers.ts";

type OperatorStats = { calls: number; self_ns: number; total_ns: number; outermost_calls: number; outermost_total_ns: number };
type Oracle = { operators: Record<string, OperatorStats>; self_by_frame: Record<string, number>; slices: number };

const kineto = join(fixtures, "kineto");
const traces = readdirSync(kineto).filter((name) => name.endsWith(".json.gz") || name.endsWith(".json"));

async function oracle(path: string): Promise<Oracle> {
  const result = await runCommand([venvPython, join(repositoryRoot, "scripts", "oracles", "chrome_trace_operators.py"), path], {
    timeoutMs: 120_000,
  });
  if (result.exitCode !== 0) throw new Error(`oracle failed: ${result.stderr}`);
  return JSON.parse(result.stdout) as Oracle;
}

/** What analyze_pytorch reads from trace_events: per cpu_op name, calls, self (duration minus direct children) and total. */
function operatorsOf(rows: TraceEventRow[]): Record<string, OperatorStats> {
  const byId = new Map(rows.map((row) => [row.event_id, row]));
  const childNs = new Map<number, number>();
  for (const row of rows) if (row.parent_id !== null) childNs.set(row.parent_id, (childNs.get(row.parent_id) ?? 0) + (row.dur_ns ?? 0));
  const operators: Record<string, OperatorStats> = {};
  for (const row of rows) {
    if (row.category !== "cpu_op") continue;
    operators[row.name] ??= { calls: 0, self_ns: 0, total_ns: 0, outermost_calls: 0, outermost_total_ns: 0 };
    const entry = operators[row.name] as OperatorStats;
    const duration = row.dur_ns ?? 0;
    entry.calls++;
    entry.total_ns += duration;
    entry.self_ns += Math.max(0, duration - (childNs.get(row.event_id) ?? 0));
    let ancestor = row.parent_id === null ? undefined : byId.get(row.parent_id);
    while (ancestor && ancestor.name !== row.name) ancestor = ancestor.parent_id === null ? undefined : byId.get(ancestor.parent_id);
    if (!ancestor) {
      entry.outermost_calls++;
      entry.outermost_total_ns += duration;
    }
  }
  return operators;
}

describe("real kineto (torch.profiler) traces against an independent oracle", () => {
  for (const name of traces) {
    test(`${name}: every operator's calls, self and total time, and every slice's self time, agree exactly`, async () => {
      const path = join(kineto, name);
      const expected = await oracle(path);
      const sink = new MemoryEvidenceSink();
      const result = await extractChromeTrace(path, sink, { projectRoot: null });
      expect(result.producer).toBe("torch.profiler");
      expect(operatorsOf(sink.traceEvents)).toEqual(expected.operators);
      const selfByFrame: Record<string, number> = {};
      for (const stack of sink.stacks) {
        const frame = leaf(sink, stack);
        const key = `${frame.module ?? ""}\u0000${frame.function}`;
        selfByFrame[key] = (selfByFrame[key] ?? 0) + stack.weight;
      }
      expect(selfByFrame).toEqual(expected.self_by_frame);
      // kineto's profiler span covers the whole recording; it is kept as an event but is not work.
      expect(sink.traceEvents.some((row) => row.category === "Trace")).toBe(true);
      expect(Object.keys(selfByFrame).some((key) => key.startsWith("Trace\u0000"))).toBe(false);
    }, 120_000);
  }

  test("the same answers when the trace is ordered in runs on disk instead of in memory", async () => {
    const path = join(kineto, "rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz");
    const expected = await oracle(path);
    const sink = new MemoryEvidenceSink();
    await extractChromeTrace(path, sink, { projectRoot: null, orderMemoryBytes: 1 << 20 });
    expect(operatorsOf(sink.traceEvents)).toEqual(expected.operators);
  }, 120_000);
});
