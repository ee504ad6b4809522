/**
 * Child process of the compare_run_sets benchmark: opens a prepared project through the `Services` of the
 * source tree given (this checkout, or the previous build's extracted tree) and times `comparisons.compare`
 * on two frozen run sets, seeds 0..repeats (the first call separately: it loads DuckDB and reads the bundles).
 * Usage: bun compare-in-process.ts <sourceRoot> <projectRoot> <baselineSet> <candidateSet> <repeats>
 * Prints {"first_ms", "ms": [...], "cpu_ms": [...], "results": [...]} (results for the identity check).
 */
import { join } from "node:path";

const [sourceRoot, projectRoot, baseline, candidate, repeats] = process.argv.slice(2) as [string, string, string, string, string];
const { Services } = (await import(
  join(sourceRoot, "src", "services", "services.ts")
)) as typeof import("../../../src/services/services.ts");
const services = new Services({ projectRoot });
try {
  const ms: number[] = [];
  const cpuMs: number[] = [];
  const results: unknown[] = [];
  for (let seed = 0; seed <= Number(repeats); seed += 1) {
    const started = performance.now();
    const cpu = process.cpuUsage();
    const result = await services.comparisons.compare({ baseline, candidate, random_seed: seed });
    const used = process.cpuUsage(cpu);
    ms.push(performance.now() - started);
    cpuMs.push((used.user + used.system) / 1000);
    results.push(result);
  }
  console.log(JSON.stringify({ first_ms: ms[0], ms: ms.slice(1), cpu_ms: cpuMs.slice(1), results }));
} finally {
  services.close();
}
