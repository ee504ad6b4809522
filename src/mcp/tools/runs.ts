import { GetArtifactRequest, GetRunRequest, ListArtifactsRequest, ListRunsRequest } from "../../domain/requests/runs.ts";
import { readOnly } from "../annotations.ts";
import { defineTool } from "../define-tool.ts";

export const runTools = [
  defineTool({
    name: "list_runs",
    description: "Runs, newest first, with workload, adapter and statuses. Next: get_run.",
    input: ListRunsRequest,
    annotations: readOnly,
    async handler(input, { services }) {
      const result = services.runs.listRuns(input);
      return { result };
    },
  }),
  defineTool({
    name: "get_run",
    description: "One run: statuses, command, exit, output tails, artifacts. Next: analyze_hotspots.",
    input: GetRunRequest,
    annotations: readOnly,
    async handler(input, { services }) {
      const result = services.runs.getRun(input.run_id);
      return {
        result,
        links: [{ uri: result.resource_uri, name: `Run ${result.run_id}`, description: "This run's manifest." }],
      };
    },
  }),
  defineTool({
    name: "list_artifacts",
    description: "Artifacts' metadata (sha256, size, kind) of a run or kind. Next: get_artifact.",
    input: ListArtifactsRequest,
    annotations: readOnly,
    async handler(input, { services }) {
      const result = services.runs.listArtifacts(input);
      return { result };
    },
  }),
  defineTool({
    name: "get_artifact",
    description: "One artifact's metadata, registrations and evidence (never bytes). Next: analyze_hotspots.",
    input: GetArtifactRequest,
    annotations: readOnly,
    async handler(input, { services }) {
      const result = services.runs.getArtifact(input.artifact_id, input.run_id);
      return {
        result,
        links: [{ uri: result.resource_uri, name: `Artifact ${result.artifact_id}`, description: "Artifact metadata (no bytes)." }],
      };
    },
  }),
];
