import { describe, expect, test } from "bun:test";
import { EventOrderer, runReadBytes, setOrderKey } from "../../../../src/adapters/formats/chrome-event-order.ts";
import { TraceEventRecord } from "../../../../src/adapters/formats/chrome-event-record.ts";
import { maximumRunReadBytes } from "../../../../src/adapters/formats/chrome-event-spill.ts";
import { seededShuffle } from "../../../support/random.ts";
import { tempDir } from "./helpers.ts";

/** An X event standing for 1 KiB while it waits to be ordered. */
function slice(seq: number, tsNs: number): TraceEventRecord {
  const record = new TraceEventRecord();
  record.ph = "X";
  record.nameString = `aten::op_${seq % 7}`;
  record.name = record.nameString;
  record.category = "cpu_op";
  record.tsNs = tsNs;
  record.durNs = 10;
  record.pid = "1";
  record.tid = "1";
  record.argsJson = `{"External id":${seq}}`;
  record.argsText = record.argsJson;
  record.argsIsObject = true;
  record.seq = seq;
  record.size = 1024;
  setOrderKey(record);
  return record;
}

describe("the merge of a trace sorted in runs spilled to disk", () => {
  test("its readers share one read budget, however many runs the trace spilled into", () => {
    for (const runs of [1, 8, 64, 215, 1024, 5000]) {
      const each = runReadBytes(runs);
      expect(each).toBeLessThanOrEqual(maximumRunReadBytes);
      expect(each).toBeGreaterThanOrEqual(16 << 10);
      expect(runs * each).toBeLessThanOrEqual(Math.max(16 << 20, runs * (16 << 10)));
    }
    // A 1 GiB trace in no order spills ~215 runs: 256 KiB each read 54 MiB at once, and held ~5× that.
    expect(215 * runReadBytes(215)).toBeLessThanOrEqual(16 << 20);
  });

  test("delivers every record in order, and after each 8 MiB waits for the extractor's pause", async () => {
    const { dir, cleanup } = tempDir();
    try {
      const count = 30_000;
      const timestamps = Array.from({ length: count }, (_, index) => index * 1000);
      const shuffled = seededShuffle([...timestamps], 16);
      const delivered: TraceEventRecord[] = [];
      const deliveredAtPause: number[] = [];
      let deliveredWhilePaused = 0;
      let pausing = false;
      const orderer = new EventOrderer(
        {
          memoryBytes: 256 << 10,
          window: 1,
          restartable: false,
          scratch: dir,
          pause: async () => {
            pausing = true;
            deliveredAtPause.push(delivered.length);
            await new Promise((resolve) => setImmediate(resolve));
            pausing = false;
          },
        },
        (record) => {
          if (pausing) deliveredWhilePaused++;
          delivered.push(record);
        },
      );
      shuffled.forEach((tsNs, seq) => orderer.accept(slice(seq, tsNs)));
      expect(orderer.stats.mode).toBe("runs");
      expect(orderer.stats.runs).toBeGreaterThan(100);
      await orderer.finish();
      expect(delivered.map((record) => record.tsNs)).toEqual(timestamps);
      // Each record comes back whole from its run: its args still name the event it was read as.
      expect(delivered.every((record) => shuffled[Number(/\d+/.exec(record.argsJson as string)?.[0])] === record.tsNs)).toBe(true);
      expect(deliveredAtPause).toEqual([8192, 16384, 24576]);
      expect(deliveredWhilePaused).toBe(0);
    } finally {
      cleanup();
    }
  });
});
