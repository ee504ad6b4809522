/**
 * list_runs first page (limit 100, no filter, then a workload filter) on a workspace holding
 * BENCH_LIST_RUNS (100,000) runs inserted directly through the store API; median of
 * BENCH_LIST_REPEATS (20) in-process calls, plus the second page through the cursor.
 */
import { median, round, withTempFolder } from "./lib/measure.ts";
import { insertSyntheticRuns, syntheticProject } from "./lib/synthetic-runs.ts";

const total = Number(process.env.BENCH_LIST_RUNS ?? 100_000);
const repeats = Number(process.env.BENCH_LIST_REPEATS ?? 20);

export async function run(): Promise<Record<string, unknown>> {
  return withTempFolder("flameox-bench-list-", async (folder) => {
    const services = await syntheticProject(folder);
    let started = performance.now();
    const base = Date.now() - total * 1000;
    for (let offset = 0; offset < total; offset += 10_000) {
      const count = Math.min(10_000, total - offset);
      await insertSyntheticRuns(
        services,
        Array.from({ length: count }, () => ({})),
        { createdAt: (index) => new Date(base + (offset + index) * 1000).toISOString() },
      );
    }
    const insertMs = performance.now() - started;
    const first: number[] = [];
    const filtered: number[] = [];
    let cursor: string | null = null;
    let totalSeen = 0;
    for (let index = 0; index < repeats; index += 1) {
      started = performance.now();
      const page = services.runs.listRuns({ limit: 100, cursor: null, filter: null });
      first.push(performance.now() - started);
      cursor = page.next_cursor;
      totalSeen = page.total;
      started = performance.now();
      services.runs.listRuns({ limit: 100, cursor: null, filter: { workload_name: "bench", execution_status: ["succeeded"] } });
      filtered.push(performance.now() - started);
    }
    started = performance.now();
    services.runs.listRuns({ limit: 100, cursor, filter: null });
    const secondPageMs = performance.now() - started;
    services.close();
    return {
      runs: totalSeen,
      first_page_median_ms: round(median(first), 2),
      filtered_first_page_median_ms: round(median(filtered), 2),
      second_page_ms: round(secondPageMs, 2),
      insert_ms: round(insertMs),
    };
  });
}

if (import.meta.main) console.log(JSON.stringify(await run(), null, 2));
