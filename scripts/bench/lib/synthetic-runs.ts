/**
 * Synthetic runs for the comparison/scaling/list benchmarks: rows inserted through the store API (no
 * workload runs), optionally each with a `runtime` measurements bundle written by the real bundle writer.
 */
import { Services } from "../../../src/services/services.ts";
import { prepareBundle, type PreparedBundle } from "../../../src/services/evidence-publisher.ts";
import { advanceCorpus } from "../../../src/store/corpus.ts";
import { blankManifest, insertRun } from "../../../src/store/run-store.ts";

export type SyntheticRun = { parameters?: Record<string, string | number | boolean>; wallTimeNs?: number };

export async function syntheticProject(folder: string): Promise<Services> {
  const services = new Services({ projectRoot: folder });
  await services.workspaces.initialize();
  return services;
}

/** Inserts runs in one transaction; runs with wallTimeNs also get a runtime.wall_time_ns bundle. */
export async function insertSyntheticRuns(
  services: Services,
  runs: SyntheticRun[],
  options: { createdAt?: (index: number) => string } = {},
): Promise<string[]> {
  const workspace = services.workspace();
  const ids = runs.map(() => crypto.randomUUID());
  const bundles: PreparedBundle[] = [];
  for (const [index, run] of runs.entries()) {
    if (run.wallTimeNs === undefined) continue;
    bundles.push(
      await prepareBundle(
        workspace,
        { runId: ids[index]!, artifactId: `sha256:${"0".repeat(64)}`, extractor: "runtime", extractorVersion: "1" },
        async (sink) => {
          sink.measurement({
            name: "runtime.wall_time_ns",
            value: run.wallTimeNs!,
            unit: "ns",
            aggregation: "total",
            is_warmup: false,
            worker: null,
            run_index: 0,
            value_index: 0,
            phase: "capture",
            dimensions: null,
          });
        },
      ),
    );
  }
  workspace.state.write(() => {
    const database = workspace.state.database;
    for (const [index, run] of runs.entries()) {
      const manifest = blankManifest(
        ids[index]!,
        "execution",
        options.createdAt?.(index) ?? new Date(Date.now() - (runs.length - index) * 1000).toISOString(),
      );
      Object.assign(manifest, {
        execution_status: "succeeded",
        capture_status: "registered",
        workload_name: "bench",
        workload_definition_id: `sha256:${"1".repeat(64)}`,
        adapter: "command",
        environment_id: `sha256:${"2".repeat(64)}`,
        source_state_id: `sha256:${"3".repeat(64)}`,
        parameters: run.parameters ?? {},
      });
      insertRun(database, manifest, "synthetic");
    }
    const head = advanceCorpus(database, workspace.id, "synthetic runs");
    for (const bundle of bundles) bundle.register(head);
  });
  return ids;
}
