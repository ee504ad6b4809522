/**
 * Child process of the hotspot benchmark: opens the project through `Services` (no CLI, no process
 * start in the timing) and times `analysis.hotspots` — the first call, then `repeats` more.
 * Usage: bun hotspots-in-process.ts <projectRoot> <runId> <repeats after the first>; prints {"first_ms", "ms": [...], "total_weight", "total"}.
 */
import { Services } from "../../../src/services/services.ts";

const [projectRoot, runId, repeats] = process.argv.slice(2) as [string, string, string];
const services = new Services({ projectRoot });
const request = {
  run_or_artifact: runId,
  limit: 20,
  group_by: "function" as const,
  order_by: "self" as const,
  unit: null,
  thread: null,
  per_thread: false,
  cursor: null,
};
try {
  let started = performance.now();
  const first = await services.analysis.hotspots(request);
  const firstMs = performance.now() - started;
  const times: number[] = [];
  for (let index = 0; index < Number(repeats); index += 1) {
    started = performance.now();
    await services.analysis.hotspots(request);
    times.push(performance.now() - started);
  }
  console.log(
    JSON.stringify({
      first_ms: firstMs,
      ms: times,
      total_weight: first.total_weight,
      total: first.total,
      top: first.hotspots[0]?.function ?? null,
    }),
  );
} finally {
  services.close();
}
