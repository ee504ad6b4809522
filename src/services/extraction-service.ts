import { rmSync } from "node:fs";
import { artifactNotFound, capabilityUnavailable, runNotFound } from "../domain/errors.ts";
import { currentBundles } from "../store/evidence-registry.ts";
import { readRun } from "../store/run-store.ts";
import { crashPoint } from "../store/crash-points.ts";
import { processStagingPath } from "../store/process-staging.ts";
import { prepareBundle, publishBundles, type PreparedBundle } from "./evidence-publisher.ts";
import { runResourceUri } from "../domain/resource-uris.ts";
import type { WorkspaceHandle } from "../store/workspace-handle.ts";
import { runArtifactFiles } from "../store/artifact-registry.ts";
import { extractionSpecs, type Extracted, type ExtractionTool, type Registration } from "./extraction-tools.ts";

export { extractionTools, type ExtractionTool } from "./extraction-tools.ts";
export type ExtractionResult = {
  schema_version: 1;
  tool: `extract_${ExtractionTool}`;
  run_id: string;
  /** The first (usually only) artifact extracted. */
  artifact_id: string;
  artifact_ids: string[];
  extractor: string;
  bundle_ids: string[];
  /** Bundles this extraction replaced; re-extraction never duplicates rows. */
  superseded_bundle_ids: string[];
  tables: Record<string, number>;
  limitations: string[];
  corpus_commit_id: string;
  run_resource_uri: string;
  next_tool: string;
} & Record<string, unknown>;

const nextToolAfter: Record<ExtractionTool, string> = {
  pyperf: "query_measurements",
  benchmark_samples: "query_measurements",
  python_startup: "query_measurements",
  pytest: "query_measurements",
  coverage: "analyze_execution",
  memray: "analyze_memory",
  perfetto: "analyze_pytorch",
  nsight_systems: "analyze_accelerator_launches",
  observations: "query_measurements",
};

/** The capture adapter whose run holds what each extractor reads; null where only an import provides it. */
const captureAdapterOf: Record<ExtractionTool, string | null> = {
  pyperf: "pyperf",
  benchmark_samples: null,
  python_startup: "python-startup",
  pytest: "pytest",
  coverage: "coverage",
  memray: "memray",
  perfetto: "torch.profiler",
  nsight_systems: null,
  observations: null,
};

export class ExtractionService {
  constructor(private readonly workspace: WorkspaceHandle) {}

  private registrations(runId: string): Registration[] {
    return runArtifactFiles(this.workspace.state().database, runId);
  }

  /**
   * The artifact asked for (it must be this run's), else every artifact of the run the tool reads,
   * each object once; none is an error naming the kind to import.
   */
  private choose(tool: ExtractionTool, request: { run_id: string; artifact_id?: string | null }): Registration[] {
    const spec = extractionSpecs[tool];
    const workspace = this.workspace.open();
    const registrations = this.registrations(request.run_id);
    let chosen: Registration[];
    if (request.artifact_id) {
      const match = registrations.find((registration) => registration.artifact_id === request.artifact_id);
      if (!match) {
        throw artifactNotFound(request.artifact_id, {
          details: { run_id: request.run_id },
          message: `Artifact ${request.artifact_id} is not registered in run ${request.run_id}.`,
          remediation: ["Call list_artifacts (or get_run) and pass an artifact_id of this run, or omit artifact_id."],
          list: { tool: "list_artifacts", arguments: { run_id: request.run_id } },
        });
      }
      chosen = [match];
    } else {
      const accepted = registrations.filter((registration) => spec.accepts(registration, workspace.path(registration.stored_path)));
      // One object registered twice in the run is extracted once.
      chosen = accepted.filter(
        (registration, index) => accepted.findIndex((other) => other.artifact_id === registration.artifact_id) === index,
      );
    }
    if (chosen.length === 0) {
      const kinds = [...new Set(registrations.map((registration) => registration.kind))].sort();
      // A capture with the very adapter that writes this kind is planned again; another run points at the
      // runs of that adapter; what only an import provides names the file the caller must give.
      const run = readRun(workspace.state.database, request.run_id);
      const adapter = captureAdapterOf[tool];
      const next =
        adapter && run?.workload_name && run.adapter === adapter
          ? { tool: "plan_capture", arguments: { workload_name: run.workload_name, adapter, parameters: run.parameters ?? {} } }
          : adapter
            ? { tool: "list_runs", arguments: { filter: { adapter } } }
            : { tool: "import_artifact", arguments: { kind: spec.kinds[0] }, callerSupplies: ["path"] };
      throw capabilityUnavailable(
        `Run ${request.run_id} has no artifact extract_${tool} reads: it needs ${spec.describe}; the run holds ${kinds.join(", ") || "no artifacts"}.`,
        {
          details: { run_id: request.run_id, required_kinds: spec.kinds, artifact_kinds: kinds, next_tool: "import_artifact" },
          remediation: [`Import ${spec.describe} with import_artifact, or capture the workload with the matching adapter.`],
          next,
        },
      );
    }
    return chosen;
  }

  /** Finds the run's artifacts of the tool's kind, extracts each into a bundle, and publishes them in one transaction. */
  async extract(tool: ExtractionTool, request: { run_id: string; artifact_id?: string | null }): Promise<ExtractionResult> {
    const spec = extractionSpecs[tool];
    const workspace = this.workspace.open();
    const database = workspace.state.database;
    const run = readRun(database, request.run_id);
    if (!run) throw runNotFound(request.run_id);
    const chosen = this.choose(tool, request);
    const scratch = processStagingPath(workspace, `extract-${crypto.randomUUID()}`);
    const bundles: PreparedBundle[] = [];
    const superseded: string[] = [];
    const limitations: string[] = [];
    const facts: Record<string, unknown>[] = [];
    let extractorName = spec.extractor;
    try {
      for (const registration of chosen) {
        const existing = currentBundles(database, { runId: request.run_id, artifactId: registration.artifact_id });
        // Reuse the name of the bundle already there (a capture or an import extracted it) so this one supersedes it.
        const previous = existing.find((bundle) => bundle.extractor !== "runtime");
        extractorName = previous?.extractor ?? spec.extractor;
        if (previous) superseded.push(previous.bundle_id);
        const path = workspace.path(registration.stored_path);
        let extracted: Extracted | undefined;
        const bundle = await prepareBundle(
          workspace,
          { runId: request.run_id, artifactId: registration.artifact_id, extractor: extractorName, extractorVersion: "1" },
          async (sink) => {
            extracted = await spec.extract(sink, { workspace: this.workspace, run, path, registration, scratch });
            return extracted.limitations;
          },
        );
        bundles.push(bundle);
        facts.push(finalFacts(extracted!, bundle.tables));
        limitations.push(...extracted!.limitations);
      }
    } catch (error) {
      for (const bundle of bundles) bundle.discard();
      throw error;
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
    const corpus = publishBundles(workspace, bundles, `extract_${tool} ${request.run_id}`);
    crashPoint("published");
    const tables: Record<string, number> = {};
    for (const bundle of bundles) for (const [table, count] of Object.entries(bundle.tables)) tables[table] = (tables[table] ?? 0) + count;
    return {
      schema_version: 1,
      tool: `extract_${tool}`,
      run_id: request.run_id,
      artifact_id: chosen[0]!.artifact_id,
      artifact_ids: chosen.map((registration) => registration.artifact_id),
      extractor: extractorName,
      ...mergeFacts(facts),
      bundle_ids: bundles.map((bundle) => bundle.bundleId),
      superseded_bundle_ids: superseded,
      tables,
      limitations,
      corpus_commit_id: corpus.commit_id,
      run_resource_uri: runResourceUri(request.run_id),
      next_tool: nextToolAfter[tool],
    };
  }
}

/** The extractor's facts, with those that are a finished table's row count read from the bundle. */
function finalFacts(extracted: Extracted, tables: Record<string, number>): Record<string, unknown> {
  const facts = { ...extracted.facts };
  for (const [fact, table] of Object.entries(extracted.factsFromTables ?? {})) facts[fact] = tables[table] ?? 0;
  return facts;
}

/** Numbers add up across artifacts; anything else keeps the first artifact's value. */
function mergeFacts(facts: Record<string, unknown>[]): Record<string, unknown> {
  const merged: Record<string, unknown> = {};
  for (const entry of facts) {
    for (const [key, value] of Object.entries(entry)) {
      if (!(key in merged)) merged[key] = value;
      else if (typeof value === "number" && typeof merged[key] === "number" && !key.startsWith("peak"))
        merged[key] = (merged[key] as number) + value;
    }
  }
  return merged;
}
