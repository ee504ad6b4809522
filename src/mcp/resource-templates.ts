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
  {
    uriTemplate: "flameox://runs/{run_id}/flamegraph.svg",
    name: "flamegraph",
    description: "A bounded static SVG flame graph of a run's stack samples (at most 1500 frames, none narrower than a pixel; each frame's <title> gives self, total and share). Units are never mixed: time beats samples beats bytes.",
    mimeType: "image/svg+xml",
    read: ({ run_id }, services) => services.reports.flameGraphSvg(run_id!),
  },
];
