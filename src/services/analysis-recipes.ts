/**
 * The curated recipes record_analysis may persist. Each runs exactly the service method of its
 * read-only analyze_* tool over pinned inputs, and states the inputs (and bundles) it read.
 */
import type { WorkspaceHandle } from "../store/workspace-handle.ts";
import { type AnalysisService, defaultHotspotRequest } from "./analysis-service.ts";
import type { ScalingService } from "./scaling-service.ts";
import { pinEvidenceScope } from "./evidence-scope.ts";
import type { ExecutionAnalysisService } from "./execution-analysis-service.ts";
import type { FailureAnalysisService } from "./failure-analysis-service.ts";
import type { MemoryAnalysisService } from "./memory-analysis-service.ts";
import type { ProgressReporter } from "./progress.ts";
import type { TraceAnalysisService } from "./trace-analysis-service.ts";

import type { AnalysisRecipeName } from "../domain/vocabulary.ts";

export { analysisRecipeNames, type AnalysisRecipeName } from "../domain/vocabulary.ts";

export type MaterializeAnalysisRequest = {
  recipe: string;
  /** The run or artifact analysed (every recipe except scaling and failures). */
  input_id?: string | null;
  /** A second run or artifact to compare with (execution, accelerator_launches). */
  comparison_input_id?: string | null;
  experiment_id?: string | null;
  /** flameox addition for scaling: a frozen run set instead of an experiment. */
  run_set_id?: string | null;
  /** flameox addition for scaling: the numeric size factor. */
  size_parameter?: string | null;
  limit?: number | null;
  /** A flameox.phase or user annotation name (accelerator_launches). */
  phase?: string | null;
};

/** The read-only services the recipes run. */
export type RecipeServices = {
  workspace: WorkspaceHandle;
  analysis: AnalysisService;
  memory: MemoryAnalysisService;
  execution: ExecutionAnalysisService;
  traces: TraceAnalysisService;
  failures: FailureAnalysisService;
  scaling: ScalingService;
};

export type RequestField = Exclude<keyof MaterializeAnalysisRequest, "recipe">;
type Outcome = { result: Record<string, unknown>; corpus_commit_id: string; inputs: Record<string, unknown> };

export type Recipe = {
  version: string;
  /** Which request fields the recipe takes; anything else is refused so the record states its exact inputs. */
  fields: RequestField[];
  /** Fields of which at least one must be given. */
  requires: RequestField[];
  run(services: RecipeServices, request: MaterializeAnalysisRequest, progress?: ProgressReporter): Promise<Outcome>;
};

/**
 * Runs a read-only analysis over pinned inputs and states which evidence bundles it read. The scope is
 * pinned again when the corpus moved between pinning and the query, so the bundles listed are exactly
 * those current at the result's corpus commit.
 */
async function overPinnedInputs<Result extends { corpus_commit_id: string }>(
  services: RecipeServices,
  ids: { input_id: string; comparison_input_id: string | null },
  query: () => Promise<Result>,
): Promise<{ result: Result; bundle_ids: { input: string[]; comparison: string[] | null } }> {
  for (let attempt = 0; ; attempt += 1) {
    const input = pinEvidenceScope(services.workspace, ids.input_id);
    const comparison = ids.comparison_input_id ? pinEvidenceScope(services.workspace, ids.comparison_input_id) : null;
    const result = await query();
    if (result.corpus_commit_id === input.corpusCommitId || attempt === 2) {
      return {
        result,
        bundle_ids: {
          input: input.bundles.map((bundle) => bundle.bundle_id),
          comparison: comparison ? comparison.bundles.map((bundle) => bundle.bundle_id) : null,
        },
      };
    }
  }
}

function asRecord(result: unknown): Record<string, unknown> {
  return result as Record<string, unknown>;
}

/**
 * The recipes over one run or artifact differ only in their tool's query, its default limit and any
 * fixed arguments they record; the pinning and the recorded inputs (in this key order, since the
 * analysis id digests them) are the same.
 */
function singleInputRecipe<Result extends { corpus_commit_id: string }>(
  version: string,
  defaultLimit: number,
  query: (services: RecipeServices, inputId: string, limit: number) => Promise<Result>,
  fixedInputs: Record<string, unknown> = {},
): Recipe {
  return {
    version,
    fields: ["input_id", "limit"],
    requires: ["input_id"],
    async run(services, request) {
      const inputId = request.input_id!;
      const limit = request.limit ?? defaultLimit;
      const { result, bundle_ids } = await overPinnedInputs(services, { input_id: inputId, comparison_input_id: null }, () =>
        query(services, inputId, limit),
      );
      return {
        result: asRecord(result),
        corpus_commit_id: result.corpus_commit_id,
        inputs: { input_id: inputId, limit, ...fixedInputs, bundle_ids: bundle_ids.input },
      };
    },
  };
}

/** The curated recipes record_analysis may persist: each runs exactly the service method of its read-only tool. */
export const analysisRecipes = new Map<AnalysisRecipeName, Recipe>([
  [
    "hotspots",
    // v2: accelerator time has its own denominator (time_domain, domain_totals); limitations repeated.
    singleInputRecipe("analyze_hotspots.v2", 20, (services, inputId, limit) =>
      services.analysis.hotspots(defaultHotspotRequest(inputId, limit)),
    ),
  ],
  [
    "memory",
    singleInputRecipe("analyze_memory.v2", 20, (services, inputId, limit) => services.memory.analyze({ run_or_artifact: inputId, limit })),
  ],
  [
    "execution",
    {
      version: "analyze_execution.v2",
      fields: ["input_id", "comparison_input_id", "limit"],
      requires: ["input_id"],
      async run(services, request) {
        const ids = { input_id: request.input_id!, comparison_input_id: request.comparison_input_id ?? null };
        const limit = request.limit ?? 50;
        const { result, bundle_ids } = await overPinnedInputs(services, ids, () =>
          services.execution.analyze({
            run_or_artifact: ids.input_id,
            limit,
            comparison_run_or_artifact: ids.comparison_input_id,
          }),
        );
        return {
          result: asRecord(result),
          corpus_commit_id: result.corpus_commit_id,
          inputs: { ...ids, limit, bundle_ids: bundle_ids.input, comparison_bundle_ids: bundle_ids.comparison },
        };
      },
    },
  ],
  [
    "pytorch",
    singleInputRecipe(
      // v2: calls and total_ns count outermost calls; time_split reports accelerator time apart, never as a share of CPU plus accelerator.
      "analyze_pytorch.v2",
      20,
      (services, inputId, limit) => services.traces.pytorch({ run_or_artifact: inputId, limit, order_by: "self", cursor: null }),
      { order_by: "self" },
    ),
  ],
  [
    "accelerator_launches",
    {
      version: "analyze_accelerator_launches.v1",
      fields: ["input_id", "comparison_input_id", "phase", "limit"],
      requires: ["input_id"],
      async run(services, request) {
        const ids = { input_id: request.input_id!, comparison_input_id: request.comparison_input_id ?? null };
        const limit = request.limit ?? 20;
        const phase = request.phase ?? null;
        const { result, bundle_ids } = await overPinnedInputs(services, ids, () =>
          services.traces.acceleratorLaunches({
            run_or_artifact: ids.input_id,
            limit,
            comparison_run_or_artifact: ids.comparison_input_id,
            phase,
          }),
        );
        return {
          result: asRecord(result),
          corpus_commit_id: result.corpus_commit_id,
          inputs: { ...ids, phase, limit, bundle_ids: bundle_ids.input, comparison_bundle_ids: bundle_ids.comparison },
        };
      },
    },
  ],
  [
    "failures",
    {
      version: "analyze_failures.v1",
      fields: ["limit"],
      requires: [],
      async run(services, request) {
        const limit = request.limit ?? 20;
        const result = await services.failures.analyze({ limit, filter: null });
        return {
          result: asRecord(result),
          corpus_commit_id: result.corpus_commit_id,
          inputs: { limit, filter: null, runs_examined: result.runs_examined },
        };
      },
    },
  ],
  [
    "scaling",
    {
      version: "analyze_scaling.v1",
      fields: ["experiment_id", "run_set_id", "size_parameter", "limit"],
      requires: ["experiment_id", "run_set_id"],
      async run(services, request, progress) {
        const result = await services.scaling.analyze(
          {
            experiment_id: request.experiment_id ?? null,
            run_set_id: request.run_set_id ?? null,
            size_parameter: request.size_parameter ?? null,
            hotspot_limit: request.limit ?? 10,
          },
          progress,
        );
        return {
          result: asRecord(result),
          corpus_commit_id: result.corpus_commit_id,
          inputs: {
            experiment_id: request.experiment_id ?? null,
            run_set_id: request.run_set_id ?? null,
            size_parameter: result.size_parameter,
            metric: result.metric,
            limit: request.limit ?? 10,
          },
        };
      },
    },
  ],
]);
