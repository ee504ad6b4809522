import type { ReductionResult } from "../../domain/reductions.ts";
import { ExecuteReductionRequest, GetReductionRequest, PlanReductionRequest } from "../../domain/requests/reductions.ts";
import { execute, readOnly } from "../annotations.ts";
import { defineTool } from "../define-tool.ts";

/** plan_reduction, execute_reduction and get_reduction (services.reductions). */
export const reductionTools = [
  defineTool({
    name: "plan_reduction",
    description:
      "Plan shrinking an artifact while a predicate workload (reads FLAMEOX_REDUCTION_CANDIDATE) exits 0. Next: execute_reduction.",
    input: PlanReductionRequest,
    annotations: readOnly,
    async handler(input, { services }) {
      const result = await services.reductions.plan(input.request);
      return { result };
    },
  }),
  defineTool({
    name: "execute_reduction",
    description: "Run a reduction plan (plan_id is consumed), store the reduced artifact. Next: get_reduction.",
    input: ExecuteReductionRequest,
    annotations: execute,
    async handler(input, { services, signal, progress }) {
      const result = await services.reductions.execute(input.plan_id, {
        signal,
        progress,
      });
      return reductionOutcome(result);
    },
  }),
  defineTool({
    name: "get_reduction",
    description: "A reduction's outcome, sizes, reduced artifact, attempts. Next: get_artifact.",
    input: GetReductionRequest,
    annotations: readOnly,
    async handler(input, { services }) {
      return reductionOutcome(services.reductions.get(input));
    },
  }),
];

function reductionOutcome(result: ReductionResult) {
  const links = [{ uri: result.resource_uri, name: `Reduction ${result.reduction_id}`, description: "This reduction." }];
  if (result.final_artifact_resource_uri)
    links.push({ uri: result.final_artifact_resource_uri, name: "Reduced artifact", description: "The reduced artifact's metadata." });
  return { result, links };
}
