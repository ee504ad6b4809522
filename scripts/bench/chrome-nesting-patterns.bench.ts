/**
 * Issue 15, linear cost of Chrome trace nesting: BENCH_NESTING_EVENTS events (default 160,000) of one
 * thread in three shapes, extracted in-process, each with wall time and its ratio to the first:
 *   - `sequential`: B/E pairs one after another (the reference);
 *   - `stray_end`: 10,000 open B slices, then E events whose names match none of them (each E used to
 *     scan the whole open stack);
 *   - `overlapping_x`: X slices at ts=i with dur=5 (each overlaps the next four).
 * Median of BENCH_NESTING_REPEATS (default 3) runs each.
 */
import { join } from "node:path";
import { extractChromeTrace } from "../../src/adapters/formats/chrome-trace.ts";
import { MemoryEvidenceSink } from "../../src/domain/evidence.ts";
import { load1, median, round, withTempFolder } from "./lib/measure.ts";

const events = Number(process.env.BENCH_NESTING_EVENTS ?? 160_000);
const repeats = Number(process.env.BENCH_NESTING_REPEATS ?? 3);
const openBegins = 10_000;

function shapes(): Record<string, string[]> {
  const sequential: string[] = [];
  for (let index = 0; index < events / 2; index++) {
    sequential.push(JSON.stringify({ ph: "B", name: `s${index % 100}`, pid: 1, tid: 1, ts: 2 * index }));
    sequential.push(JSON.stringify({ ph: "E", name: `s${index % 100}`, pid: 1, tid: 1, ts: 2 * index + 1 }));
  }
  const stray: string[] = [];
  for (let index = 0; index < openBegins; index++) stray.push(JSON.stringify({ ph: "B", name: `b${index}`, pid: 1, tid: 1, ts: index }));
  for (let index = openBegins; index < events; index++)
    stray.push(JSON.stringify({ ph: "E", name: `stray${index}`, pid: 1, tid: 1, ts: index }));
  const overlapping: string[] = [];
  for (let index = 0; index < events; index++) overlapping.push(JSON.stringify({ ph: "X", name: "x", pid: 1, tid: 1, ts: index, dur: 5 }));
  return { sequential, stray_end: stray, overlapping_x: overlapping };
}

export async function run(): Promise<Record<string, unknown>> {
  return withTempFolder("nesting-patterns-", async (folder) => {
    const figures: Record<string, unknown> = { events, repeats, load1: load1() };
    let reference = Number.NaN;
    for (const [name, lines] of Object.entries(shapes())) {
      const path = join(folder, `${name}.json`);
      await Bun.write(path, `[${lines.join(",\n")}]`);
      const seconds: number[] = [];
      for (let attempt = 0; attempt < repeats; attempt++) {
        const started = performance.now();
        await extractChromeTrace(path, new MemoryEvidenceSink(), { projectRoot: null, parseMode: "stream" });
        seconds.push((performance.now() - started) / 1000);
      }
      const wall = median(seconds);
      if (name === "sequential") reference = wall;
      figures[name] = { wall_s: round(wall, 3), ratio_to_sequential: round(wall / reference, 2) };
    }
    return figures;
  });
}

if (import.meta.main) console.log(JSON.stringify(await run(), null, 2));
