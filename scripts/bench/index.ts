/**
 * `npm run bench`: runs every benchmark module in scripts/bench/ and reports all figures as one JSON
 * object (stdout and .test-output/bench/figures.json).
 *
 * Convention for benchmark modules (add a file, nothing here changes):
 *   - file name `scripts/bench/<name>.bench.ts` (kebab-case name; the name keys its figures);
 *   - `export async function run(): Promise<Record<string, unknown>>` returning plain JSON figures
 *     (absolute numbers, and ratios against the named reference where there is one);
 *   - runnable alone: end with `if (import.meta.main) console.log(JSON.stringify(await run(), null, 2));`;
 *   - removes its temp folders; large generated inputs may be cached under .test-output/bench/ (git-ignored);
 *   - sizes and repeat counts come from BENCH_* environment variables with documented defaults;
 *   - never timed assertions: a benchmark reports, it does not pass or fail on speed.
 * Helpers shared by modules live in scripts/bench/lib/ (not modules: no `.bench.ts` suffix).
 *
 * Usage: `bun scripts/bench/index.ts [name ...]` runs only the named modules (e.g. `capture-overhead`).
 * Modules run one after another (timings on a 2-core machine must not compete with each other). A module
 * that throws is reported as `{error}` and the others still run; the exit status is then 1.
 * figures.json is merged by module name, so running one module keeps the others' last figures.
 */
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { cpus, loadavg, totalmem } from "node:os";
import { join } from "node:path";
import { benchOutput, repositoryRoot } from "./lib/measure.ts";

const suffix = ".bench.ts";
const wanted = new Set(process.argv.slice(2));
const names = readdirSync(import.meta.dir)
  .filter((file) => file.endsWith(suffix))
  .map((file) => file.slice(0, -suffix.length))
  .filter((name) => wanted.size === 0 || wanted.has(name))
  .sort();
const unknown = [...wanted].filter((name) => !names.includes(name));
if (unknown.length > 0) {
  console.error(`bench: no module ${unknown.map((name) => `${name}${suffix}`).join(", ")} in scripts/bench/`);
  process.exit(2);
}

function gitHead(): string | null {
  const result = Bun.spawnSync(["git", "rev-parse", "HEAD"], { cwd: repositoryRoot, stdout: "pipe", stderr: "ignore" });
  return result.exitCode === 0 ? result.stdout.toString().trim() : null;
}

const figuresPath = join(benchOutput, "figures.json");
let previous: { modules?: Record<string, unknown> } = {};
if (existsSync(figuresPath)) {
  try {
    previous = JSON.parse(readFileSync(figuresPath, "utf8"));
  } catch {
    previous = {};
  }
}
const modules: Record<string, unknown> = { ...(previous.modules ?? {}) };
let failed = false;
for (const name of names) {
  const loadBefore = loadavg()[0] ?? 0;
  const started = performance.now();
  console.error(`bench: ${name} …`);
  try {
    const module = (await import(join(import.meta.dir, `${name}${suffix}`))) as { run?: () => Promise<Record<string, unknown>> };
    if (typeof module.run !== "function") throw new Error(`${name}${suffix} does not export run()`);
    const figures = await module.run();
    modules[name] = {
      ...figures,
      measured_at: new Date().toISOString(),
      elapsed_s: Number(((performance.now() - started) / 1000).toFixed(1)),
      load1_before: Number(loadBefore.toFixed(2)),
      load1_after: Number((loadavg()[0] ?? 0).toFixed(2)),
    };
  } catch (error) {
    failed = true;
    modules[name] = { error: error instanceof Error ? error.message : String(error), measured_at: new Date().toISOString() };
    console.error(`bench: ${name} failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  }
}

const report = {
  machine: {
    cpus: cpus().length,
    cpu_model: cpus()[0]?.model ?? null,
    memory_bytes: totalmem(),
    platform: `${process.platform}-${process.arch}`,
    bun: Bun.version,
  },
  git_head: gitHead(),
  written_at: new Date().toISOString(),
  modules_run: names,
  modules,
};
mkdirSync(benchOutput, { recursive: true });
writeFileSync(figuresPath, `${JSON.stringify(report, null, 2)}\n`);
console.log(JSON.stringify(report, null, 2));
if (failed) process.exit(1);
