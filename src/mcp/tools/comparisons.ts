import {
  CompareRunSetsRequest,
  compareServiceRequest,
  FreezeRunSetRequest,
  RecordAnalysisRequest,
  ScalingRequest,
} from "../../domain/requests/comparisons.ts";
import { additive, readOnly } from "../annotations.ts";
import { defineTool } from "../define-tool.ts";

export const comparisonTools = [
  defineTool({
    name: "freeze_run_set",
    description: "Freeze runs as an immutable run set. Next: compare_run_sets or analyze_scaling.",
    input: FreezeRunSetRequest,
    annotations: additive,
    async handler(input, { services }) {
      const result = services.runSets.freeze(input);
      return {
        result,
        links: [{ uri: result.resource_uri, name: "Run set", description: "The frozen cohort." }],
      };
    },
  }),
  defineTool({
    name: "compare_run_sets",
    description: "Compare two run sets on a metric: ratio, CI, p-value, decision. Next: record_comparison.",
    input: CompareRunSetsRequest,
    annotations: readOnly,
    async handler(input, { services, progress }) {
      const result = await services.comparisons.compare(compareServiceRequest(input), (step, total, message) =>
        progress(step, total, message),
      );
      return { result };
    },
  }),
  defineTool({
    name: "record_comparison",
    description: "compare_run_sets, persisted so a finding can cite it. Next: record_finding.",
    input: CompareRunSetsRequest,
    annotations: additive,
    async handler(input, { services, progress }) {
      const result = await services.comparisons.record(compareServiceRequest(input), (step, total, message) =>
        progress(step, total, message),
      );
      return {
        result,
        links: [
          {
            uri: result.resource_uri,
            name: `Comparison ${result.ref_id}`,
            description: "The recorded comparison with its inputs and result.",
          },
        ],
      };
    },
  }),
  defineTool({
    name: "analyze_scaling",
    description: "How a metric grows with a numeric size across runs: fits, fastest-growing hotspot.",
    input: ScalingRequest,
    annotations: readOnly,
    async handler(input, { services, progress }) {
      const result = await services.scaling.analyze(input, (step, total, message) => progress(step, total, message));
      return { result };
    },
  }),
  defineTool({
    name: "record_analysis",
    description: "Run an analysis recipe, persisted so a finding can cite it. Next: record_finding.",
    input: RecordAnalysisRequest,
    annotations: additive,
    async handler(input, { services, progress }) {
      const result = await services.analysisRecords.record(input, (step, total, message) => progress(step, total, message));
      return {
        result,
        links: [
          { uri: result.resource_uri, name: `Analysis ${result.ref_id}`, description: "The recorded analysis with its inputs and result." },
        ],
      };
    },
  }),
];
