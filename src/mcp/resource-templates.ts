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
    description:
      "A bounded static SVG flame graph of a run's stack samples (at most 1500 frames, none narrower than a pixel; each frame's <title> gives self, total and share). Units are never mixed: time beats samples beats bytes.",
    mimeType: "image/svg+xml",
    read: ({ run_id }, services) => services.reports.flameGraphSvg(run_id!),
  },
  {
    uriTemplate: "flameox://experiments/{experiment_id}",
    name: "experiment",
    description: "An experiment's immutable protocol with its status, trial counts, run sets and recorded comparison.",
    mimeType: "application/json",
    read: ({ experiment_id }, services) => services.experiments.getExperiment(experiment_id!),
  },
  {
    uriTemplate: "flameox://experiments/{experiment_id}/trials",
    name: "experiment-trials",
    description:
      "The first page (up to 1000) of an experiment's trials in realized order, with a continuation cursor for list_experiment_trials.",
    mimeType: "application/json",
    read: ({ experiment_id }, services) => services.experiments.listTrials({ experiment_id: experiment_id!, limit: 1000, cursor: null }),
  },
  {
    uriTemplate: "flameox://experiments/{experiment_id}/trials/{trial_id}",
    name: "experiment-trial",
    description: "One trial of an experiment with its run, outcome and oracle receipt.",
    mimeType: "application/json",
    read: ({ experiment_id, trial_id }, services) => services.experiments.getTrial(trial_id!, experiment_id!),
  },
  {
    uriTemplate: "flameox://run-sets/{run_set_id}",
    name: "run-set",
    description: "A frozen run set: members with inclusion, exclusion reasons, trials and blocks, and its membership digest.",
    mimeType: "application/json",
    read: ({ run_set_id }, services) => services.runSets.get(run_set_id!),
  },
  {
    uriTemplate: "flameox://evidence/{ref_type}/{ref_id}",
    name: "evidence",
    description:
      "A recorded analysis or comparison (ref_type 'analysis' or 'comparison'): inputs, pinned corpus commit, result digest and result.",
    mimeType: "application/json",
    read: ({ ref_type, ref_id }, services) => services.comparisons.getEvidence(ref_type!, ref_id!),
  },
  {
    uriTemplate: "flameox://investigations/{investigation_id}",
    name: "investigation",
    description: "An investigation: question, symptom, parent and status.",
    mimeType: "application/json",
    read: ({ investigation_id }, services) => services.investigations.getInvestigation(investigation_id!),
  },
  {
    uriTemplate: "flameox://hypotheses/{hypothesis_id}",
    name: "hypothesis",
    description: "A hypothesis's current revision.",
    mimeType: "application/json",
    read: ({ hypothesis_id }, services) => services.investigations.getHypothesis(hypothesis_id!),
  },
  {
    uriTemplate: "flameox://findings/{finding_id}",
    name: "finding",
    description: "A finding's current revision with its evidence references.",
    mimeType: "application/json",
    read: ({ finding_id }, services) => services.investigations.getFinding(finding_id!),
  },
  {
    uriTemplate: "flameox://pipelines/{pipeline_id}",
    name: "pipeline",
    description: "A registered artifact pipeline: identity and stages with status, output artifact, size and producer summary.",
    mimeType: "application/json",
    read: ({ pipeline_id }, services) => services.pipelines.get(pipeline_id!),
  },
  {
    uriTemplate: "flameox://reductions/{reduction_id}",
    name: "reduction",
    description: "A reduction: disposition, original and reduced artifacts, sizes, attempt counts and the first 10 attempts.",
    mimeType: "application/json",
    read: ({ reduction_id }, services) => services.reductions.get({ reduction_id: reduction_id!, limit: 10, cursor: null }),
  },
];
