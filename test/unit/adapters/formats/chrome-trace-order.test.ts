import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { extractChromeTrace } from "../../../../src/adapters/formats/chrome-trace.ts";
import { MemoryEvidenceSink } from "../../../../src/domain/evidence.ts";
import { snapshot, tempDir } from "./helpers.ts";

/** A sink that can start over, as the evidence bundle writer can: the extractor may then stream a large trace through its window. */
class RestartableSink extends MemoryEvidenceSink {
  restarts = 0;
  restart(): void {
    this.restarts++;
    this.frames.clear();
    this.stacks.length = 0;
    this.traceEvents.length = 0;
  }
}

/** Each thread's slices in completion order (children first, as Chrome writes them), threads interleaved. */
function completionOrder(groups: number): string[] {
  const events: string[] = [];
  for (let index = 0; index < groups; index++) {
    const tid = index % 3;
    const ts = Math.floor(index / 3) * 100;
    events.push(`{"ph":"X","name":"child","cat":"c","pid":1,"tid":${tid},"ts":${ts + 10},"dur":20}`);
    events.push(`{"ph":"X","name":"parent","cat":"c","pid":1,"tid":${tid},"ts":${ts},"dur":50}`);
  }
  return events;
}

async function extract(path: string, sink: MemoryEvidenceSink, orderMemoryBytes?: number) {
  return extractChromeTrace(path, sink, { projectRoot: null, orderMemoryBytes });
}

describe("events reach the nester in order per thread, however the trace is ordered", () => {
  test("a large trace in completion order streams through the window: the same rows as sorting it in memory", async () => {
    const { dir, cleanup } = tempDir();
    try {
      const path = join(dir, "completion.json");
      writeFileSync(path, `[${completionOrder(20_000).join(",")}]`);
      const sorted = new MemoryEvidenceSink();
      await extract(path, sorted);
      const streamed = new RestartableSink();
      await extract(path, streamed, 64 << 10);
      expect(streamed.restarts).toBe(0);
      // Row ids follow the order rows were written in; the nesting and stacks are the same.
      const shape = (sink: MemoryEvidenceSink) => {
        const byId = new Map(sink.traceEvents.map((row) => [row.event_id, row]));
        return sink.traceEvents
          .map((row) => `${row.tid} ${row.ts_ns} ${row.name} ${row.depth} ${row.parent_id === null ? "-" : byId.get(row.parent_id)?.name}`)
          .sort();
      };
      expect(shape(streamed)).toEqual(shape(sorted));
      expect(streamed.stacks.map((stack) => [stack.thread, stack.weight]).sort()).toEqual(
        sorted.stacks.map((stack) => [stack.thread, stack.weight]).sort(),
      );
      expect(streamed.traceEvents.filter((row) => row.name === "child").every((row) => row.depth === 1)).toBe(true);
    } finally {
      cleanup();
    }
  }, 60_000);

  test("kineto's grouping by category (a thread's parents long after their children) starts over in runs: exact nesting", async () => {
    const { dir, cleanup } = tempDir();
    try {
      // 30,000 children first, then their 30,000 parents: far beyond any window.
      const children = Array.from(
        { length: 30_000 },
        (_, index) => `{"ph":"X","name":"aten::mm","cat":"cpu_op","pid":1,"tid":1,"ts":${index * 100 + 10},"dur":20}`,
      );
      const parents = Array.from(
        { length: 30_000 },
        (_, index) => `{"ph":"X","name":"ProfilerStep#${index}","cat":"user_annotation","pid":1,"tid":1,"ts":${index * 100},"dur":50}`,
      );
      const path = join(dir, "grouped.json");
      writeFileSync(path, `{"traceEvents":[${[...children, ...parents].join(",")}]}`);
      const sorted = new MemoryEvidenceSink();
      await extract(path, sorted, 1 << 30);
      for (const sink of [new RestartableSink(), new MemoryEvidenceSink()]) {
        await extract(path, sink, 256 << 10);
        // The sink that can start over first streamed the (ordered) children, then met the parents.
        if (sink instanceof RestartableSink) expect(sink.restarts).toBe(1);
        expect(snapshot(sink)).toEqual(snapshot(sorted));
        expect(sink.traceEvents.filter((row) => row.name === "aten::mm").every((row) => row.depth === 1)).toBe(true);
      }
    } finally {
      cleanup();
    }
  }, 60_000);
});
