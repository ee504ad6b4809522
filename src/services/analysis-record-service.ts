import { digestOf } from "../domain/canonical-json.ts";
import { FlameoxError } from "../domain/errors.ts";
import { corpusHead } from "../store/corpus.ts";
import { currentBundles } from "../store/evidence-registry.ts";
import type { ProgressReporter } from "./capture-service.ts";
import type { EvidenceReceipt } from "./comparison-service.ts";
import type { Services } from "./services.ts";

export type MaterializeAnalysisRequest = {
  recipe: string;
  input_id?: string | null;
  experiment_id?: string | null;
  run_set_id?: string | null;
  size_parameter?: string | null;
  limit?: number | null;
};

type Recipe = {
  version: string;
  /** Which request fields the recipe takes; anything else is refused so the record states its exact inputs. */
  fields: (keyof MaterializeAnalysisRequest)[];
  run(services: Services, request: MaterializeAnalysisRequest, progress?: ProgressReporter): Promise<{ result: Record<string, unknown>; corpus_commit_id: string; inputs: Record<string, unknown> }>;
};

/** The curated recipes record_analysis may persist; more register here as analyses are added. */
export const analysisRecipes = new Map<string, Recipe>([
  [
    "hotspots",
    {
      version: "analyze_hotspots.v1",
      fields: ["input_id", "limit"],
      async run(services, request) {
        if (!request.input_id) throw missingField("input_id", "hotspots");
        const result = await services.analysis.hotspots({ run_or_artifact: request.input_id, limit: request.limit ?? 20, group_by: "function", order_by: "self", unit: null, thread: null, per_thread: false, cursor: null });
        const database = services.workspace().state.database;
        const bundles = request.input_id.startsWith("sha256:") ? currentBundles(database, { artifactId: request.input_id }) : currentBundles(database, { runId: request.input_id });
        return { result: result as unknown as Record<string, unknown>, corpus_commit_id: result.corpus_commit_id, inputs: { input_id: request.input_id, limit: request.limit ?? 20, bundle_ids: bundles.map((bundle) => bundle.bundle_id) } };
      },
    },
  ],
  [
    "scaling",
    {
      version: "analyze_scaling.v1",
      fields: ["experiment_id", "run_set_id", "size_parameter", "limit"],
      async run(services, request, progress) {
        const result = await services.comparisons.scaling({ experiment_id: request.experiment_id ?? null, run_set_id: request.run_set_id ?? null, size_parameter: request.size_parameter ?? null, hotspot_limit: request.limit ?? 10 }, progress);
        return {
          result: result as unknown as Record<string, unknown>,
          corpus_commit_id: result.corpus_commit_id,
          inputs: { experiment_id: request.experiment_id ?? null, run_set_id: request.run_set_id ?? null, size_parameter: result.size_parameter, metric: result.metric, limit: request.limit ?? 10 },
        };
      },
    },
  ],
]);

function missingField(field: string, recipe: string): FlameoxError {
  return new FlameoxError({
    code: "INVALID_ARGUMENTS",
    message: `The ${recipe} recipe needs ${field}.`,
    details: { fields: [{ field, message: `required for recipe ${recipe}`, type: "missing" }] },
    remediation: [`Pass ${field}.`],
  });
}

/** record_analysis: runs a curated read-only recipe and persists it with inputs, snapshot and result digest. */
export class AnalysisRecordService {
  constructor(private readonly services: Services) {}

  async record(request: MaterializeAnalysisRequest, progress?: ProgressReporter): Promise<EvidenceReceipt> {
    const recipe = analysisRecipes.get(request.recipe);
    if (!recipe) {
      throw new FlameoxError({
        code: "INVALID_ARGUMENTS",
        message: `Unknown analysis recipe '${request.recipe}'; recordable recipes: ${[...analysisRecipes.keys()].join(", ")}.`,
        details: { fields: [{ field: "recipe", message: "unknown recipe", type: "value_error" }], recipes: [...analysisRecipes.keys()] },
        remediation: [`Use one of: ${[...analysisRecipes.keys()].join(", ")}. comparisons are recorded with record_comparison.`],
      });
    }
    const extra = (Object.keys(request) as (keyof MaterializeAnalysisRequest)[]).filter((key) => key !== "recipe" && request[key] != null && !recipe.fields.includes(key));
    if (extra.length > 0) {
      throw new FlameoxError({
        code: "INVALID_ARGUMENTS",
        message: `The ${request.recipe} recipe does not take ${extra.join(", ")}.`,
        details: { fields: extra.map((field) => ({ field, message: `not used by recipe ${request.recipe}`, type: "value_error" })) },
        remediation: [`Pass only: ${recipe.fields.join(", ")}.`],
      });
    }
    const report = async (step: number, message: string) => {
      try {
        await progress?.(step, 3, message);
      } catch {
        // Progress is best-effort.
      }
    };
    await report(0, "Analysis snapshot pinned");
    const before = corpusHead(this.services.workspace().state.database).commit_id;
    const { result, corpus_commit_id, inputs } = await recipe.run(this.services, request);
    await report(1, "Analysis query complete");
    await report(2, "Publishing analysis provenance");
    const analysisId = digestOf({ recipe: recipe.version, inputs, corpus_commit_id: corpus_commit_id || before });
    const receipt = this.services.comparisons.persist("analysis", analysisId, recipe.version, inputs, corpus_commit_id || before, result);
    await report(3, "Analysis publication complete");
    return receipt;
  }
}
