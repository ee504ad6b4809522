import { ComparePipelinesRequest, RegisterPipelineRequest } from "../../domain/requests/pipelines.ts";
import { additive, readOnly } from "../annotations.ts";
import { defineTool } from "../define-tool.ts";

/** register_artifact_pipeline and compare_artifact_pipelines (services.pipelines). */
export const pipelineTools = [
  defineTool({
    name: "register_artifact_pipeline",
    description: "Record a producer's pipeline of ordered stages and outputs. Next: compare_artifact_pipelines.",
    input: RegisterPipelineRequest,
    annotations: additive,
    async handler(input, { services }) {
      const result = services.pipelines.register(input.request);
      return {
        result,
        links: [{ uri: result.resource_uri, name: `Pipeline ${result.pipeline_id}`, description: "The registered pipeline." }],
      };
    },
  }),
  defineTool({
    name: "compare_artifact_pipelines",
    description: "Compare two pipelines stage by stage, to the first divergence.",
    input: ComparePipelinesRequest,
    annotations: readOnly,
    async handler(input, { services }) {
      const result = services.pipelines.compare(input);
      return { result };
    },
  }),
];
