import type { ResourceTemplate } from "./resources.ts";

/** Every addressable record, one entry each; readers call services only. */
export const resourceTemplateDefinitions: ResourceTemplate[] = [
  {
    uriTemplate: "flameox://runs/{run_id}",
    name: "run",
    description: "A run's manifest: statuses, command, process outcome, measurements, artifacts (metadata only).",
    mimeType: "application/json",
    read: ({ run_id }, services) => services.runs.getRun(run_id!),
  },
  {
    uriTemplate: "flameox://artifacts/{artifact_id}",
    name: "artifact",
    description: "An artifact's metadata and registrations; never its bytes.",
    mimeType: "application/json",
    read: ({ artifact_id }, services) => services.runs.getArtifact(artifact_id!),
  },
];
