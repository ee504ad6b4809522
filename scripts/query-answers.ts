/**
 * The answers of the query tools on a fixed corpus, with everything that differs per workspace taken out
 * (run ids, corpus commits, cursors, comparison ids): hotspots by function and by line, per thread and by
 * total, a frame's callers, callees and example stacks, PyTorch operators, and a comparison of two seeded
 * run sets. test/integration/query-answers.test.ts compares this build's answers with the ones the build
 * before the performance work gave (recorded in test/fixtures/query-answers/), so a faster query that
 * answers differently fails there.
 *
 * Usage (records answers of the source tree at <sourceRoot>, which may be another checkout of flameox):
 *   bun scripts/query-answers.ts <sourceRoot> <output.json>
 */
import { copyFileSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const fixtures = resolve(import.meta.dir, "..", "test", "fixtures", "formats");

/** The corpus: a py-spy speedscope profile, a Node CPU profile and a real kineto trace. */
const corpus = ["py-spy-threads.speedscope.json", "node-busy.cpuprofile", "kineto/benchmark_result_2869224_1695835535_trace.json.gz"];

const volatileKeys = new Set([
  "run_id",
  "run_or_artifact",
  "corpus_commit_id",
  "next_cursor",
  "flamegraph_uri",
  "comparison_id",
  "membership_digest",
  "id",
]);
const uuid = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;

/** Drops per-workspace fields and masks run ids wherever they appear inside strings. */
export function stable(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(stable);
  if (typeof value === "string") return value.replace(uuid, "<uuid>");
  if (value === null || typeof value !== "object") return value;
  return Object.fromEntries(
    Object.entries(value as Record<string, unknown>)
      .filter(([key]) => !volatileKeys.has(key))
      .map(([key, entry]) => [key, stable(entry)]),
  );
}

type AnyServices = {
  workspaces: { initialize(): Promise<unknown> };
  imports: { importArtifact(request: Record<string, unknown>): Promise<{ run_id: string }> };
  analysis: {
    hotspots(request: Record<string, unknown>): Promise<{ hotspots: { frame_id: string }[] }>;
    callEdges(request: Record<string, unknown>, direction: "callers" | "callees"): Promise<unknown>;
    stackExamples(request: Record<string, unknown>): Promise<unknown>;
  };
  traceAnalysis: { pytorch(request: Record<string, unknown>): Promise<unknown> };
  runSets: { freeze(request: { run_ids: string[] }): { run_set_id: string } };
  comparisons: { compare(request: Record<string, unknown>): Promise<unknown> };
  close(): void;
};

/** Runs the scenario against the services of the flameox source tree at `sourceRoot`. */
export async function queryAnswers(sourceRoot: string): Promise<Record<string, unknown>> {
  const { Services } = (await import(join(sourceRoot, "src", "services", "services.ts"))) as {
    Services: new (options: { projectRoot: string }) => AnyServices;
  };
  const { insertSyntheticRuns } = (await import(join(sourceRoot, "scripts", "bench", "lib", "synthetic-runs.ts"))) as {
    insertSyntheticRuns: (services: AnyServices, runs: { wallTimeNs: number }[]) => Promise<string[]>;
  };
  const { createRandom } = (await import(join(sourceRoot, "src", "analysis", "statistics", "random.ts"))) as {
    createRandom: (seed: number) => { nextGaussian(): number };
  };
  const project = realpathSync(mkdtempSync(join(tmpdir(), "flameox-query-answers-")));
  const services = new Services({ projectRoot: project });
  const answers: Record<string, unknown> = {};
  try {
    await services.workspaces.initialize();
    for (const name of corpus) {
      const copy = join(project, name.replaceAll("/", "-"));
      copyFileSync(join(fixtures, name), copy);
      const { run_id: runId } = await services.imports.importArtifact({
        path: copy,
        kind: null,
        sensitivity: "internal",
        media_type: null,
        source_root: "project",
        producer: "flameox-tests",
        producer_version: null,
      });
      const base = { run_or_artifact: runId, limit: 50, cursor: null, unit: null, thread: null };
      if (name.includes("kineto")) {
        answers[`${name} pytorch self`] = stable(
          await services.traceAnalysis.pytorch({ run_or_artifact: runId, limit: 50, order_by: "self", cursor: null }),
        );
        answers[`${name} pytorch total`] = stable(
          await services.traceAnalysis.pytorch({ run_or_artifact: runId, limit: 50, order_by: "total", cursor: null }),
        );
      }
      for (const [label, shape] of [
        ["function self", { group_by: "function", order_by: "self", per_thread: false }],
        ["line total", { group_by: "line", order_by: "total", per_thread: false }],
        ["function per thread", { group_by: "function", order_by: "self", per_thread: true }],
      ] as const) {
        const hotspots = await services.analysis.hotspots({ ...base, ...shape });
        answers[`${name} hotspots ${label}`] = stable(hotspots);
        const top = hotspots.hotspots[0]?.frame_id;
        if (!top || label === "function per thread") continue;
        const frame = { run_or_artifact: runId, frame_id: top, limit: 20, cursor: null, unit: null, thread: null };
        answers[`${name} callers ${label}`] = stable(await services.analysis.callEdges(frame, "callers"));
        answers[`${name} callees ${label}`] = stable(await services.analysis.callEdges(frame, "callees"));
        answers[`${name} stacks ${label}`] = stable(await services.analysis.stackExamples(frame));
      }
    }
    const random = createRandom(16);
    const noise = () => Math.exp(0.05 * random.nextGaussian());
    const baseline = await insertSyntheticRuns(
      services,
      Array.from({ length: 12 }, () => ({ wallTimeNs: 50e6 * noise() })),
    );
    const candidate = await insertSyntheticRuns(
      services,
      Array.from({ length: 12 }, () => ({ wallTimeNs: 56e6 * noise() })),
    );
    answers["compare 12 vs 12"] = stable(
      await services.comparisons.compare({
        baseline: services.runSets.freeze({ run_ids: baseline }).run_set_id,
        candidate: services.runSets.freeze({ run_ids: candidate }).run_set_id,
        random_seed: 7,
      }),
    );
    return answers;
  } finally {
    services.close();
    rmSync(project, { recursive: true, force: true });
  }
}

if (import.meta.main) {
  const [sourceRoot, output] = process.argv.slice(2);
  if (!sourceRoot || !output) {
    console.error("usage: bun scripts/query-answers.ts <sourceRoot> <output.json>");
    process.exit(2);
  }
  writeFileSync(output, `${JSON.stringify(await queryAnswers(resolve(sourceRoot)), null, 1)}\n`);
}
