import { digestOf } from "../domain/canonical-json.ts";
import { type FlameoxError, invalidInput } from "../domain/errors.ts";
import { corpusHead } from "../store/corpus.ts";
import { bestEffortProgress, type ProgressReporter } from "./progress.ts";
import type { EvidenceReceipt } from "../store/evidence-record-store.ts";
import type { EvidenceRecordStore } from "../store/evidence-record-store.ts";
import {
  type AnalysisRecipeName,
  analysisRecipeNames,
  analysisRecipes,
  type MaterializeAnalysisRequest,
  type Recipe,
  type RecipeServices,
  type RequestField,
} from "./analysis-recipes.ts";

export { analysisRecipeNames, type MaterializeAnalysisRequest };

/** Why a field does not belong to a recipe, in the contract's terms. */
function unusedFieldReason(field: RequestField, recipe: AnalysisRecipeName): string {
  if (field === "comparison_input_id") return "only the execution and accelerator_launches recipes compare with a second input";
  if (field === "phase") return "only the accelerator_launches recipe takes a phase";
  if (field === "input_id")
    return recipe === "scaling"
      ? "the scaling recipe reads an experiment (experiment_id), not one run or artifact"
      : "the failures recipe reads every run, not one input";
  if (field === "experiment_id" || field === "run_set_id" || field === "size_parameter")
    return "only the scaling recipe reads an experiment or run set";
  return `not used by recipe ${recipe}`;
}

function invalidRequest(recipe: string, problems: { field: string; message: string; type: string }[], remediation: string): FlameoxError {
  return invalidInput(
    `Invalid ${recipe} analysis request: ${problems.map((problem) => `${problem.field} (${problem.message})`).join("; ")}.`,
    problems,
    { remediation: [remediation] },
  );
}

/** MaterializeAnalysisRequest's rules: scaling ⇒ experiment; failures ⇒ no input; others ⇒ input_id; comparison and phase only where used. */
export function validateAnalysisRequest(request: MaterializeAnalysisRequest): { name: AnalysisRecipeName; recipe: Recipe } {
  const recipe = analysisRecipes.get(request.recipe as AnalysisRecipeName);
  if (!recipe) {
    throw invalidInput(
      `Unknown analysis recipe '${request.recipe}'; recordable recipes: ${analysisRecipeNames.join(", ")}.`,
      [{ field: "recipe", message: `must be one of ${analysisRecipeNames.join(", ")}`, type: "value_error" }],
      {
        details: { recipes: [...analysisRecipeNames] },
        remediation: [`Use one of: ${analysisRecipeNames.join(", ")}. Comparisons are recorded with record_comparison.`],
      },
    );
  }
  const name = request.recipe as AnalysisRecipeName;
  const given = (Object.keys(request) as (keyof MaterializeAnalysisRequest)[]).filter(
    (key): key is RequestField => key !== "recipe" && request[key] != null,
  );
  const extra = given.filter((field) => !recipe.fields.includes(field));
  if (extra.length > 0) {
    throw invalidRequest(
      name,
      extra.map((field) => ({ field, message: unusedFieldReason(field, name), type: "extra_forbidden" })),
      `The ${name} recipe takes only: ${recipe.fields.join(", ")}.`,
    );
  }
  if (recipe.requires.length > 0 && !recipe.requires.some((field) => given.includes(field))) {
    const field = recipe.requires[0]!;
    throw invalidRequest(
      name,
      [
        {
          field,
          message:
            recipe.requires.length > 1
              ? `required for recipe ${name} (or ${recipe.requires.slice(1).join(", ")})`
              : `required for recipe ${name}`,
          type: "missing",
        },
      ],
      `Pass ${recipe.requires.join(" or ")}.`,
    );
  }
  if (request.limit != null && (!Number.isInteger(request.limit) || request.limit < 1 || request.limit > 1000)) {
    throw invalidRequest(
      name,
      [{ field: "limit", message: "an integer from 1 to 1000", type: "value_error" }],
      "Pass a limit between 1 and 1000.",
    );
  }
  return { name, recipe };
}

/** record_analysis: runs a curated read-only recipe and persists it with inputs, snapshot and result digest. */
export class AnalysisRecordService {
  constructor(
    private readonly recipes: RecipeServices,
    private readonly evidenceRecords: EvidenceRecordStore,
  ) {}

  async record(request: MaterializeAnalysisRequest, progress?: ProgressReporter): Promise<EvidenceReceipt> {
    const { recipe } = validateAnalysisRequest(request);
    const report = bestEffortProgress(progress, 3);
    await report(0, "Analysis snapshot pinned");
    const before = corpusHead(this.recipes.workspace.state().database).commit_id;
    const { result, corpus_commit_id, inputs } = await recipe.run(this.recipes, request);
    await report(1, "Analysis query complete");
    await report(2, "Publishing analysis provenance");
    const analysisId = digestOf({ recipe: recipe.version, inputs, corpus_commit_id: corpus_commit_id || before });
    const receipt = this.evidenceRecords.record({
      refType: "analysis",
      refId: analysisId,
      recipe: recipe.version,
      inputs,
      corpusCommitId: corpus_commit_id || before,
      result,
    });
    await report(3, "Analysis publication complete");
    return receipt;
  }
}
