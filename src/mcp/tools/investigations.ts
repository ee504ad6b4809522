import {
  CreateInvestigationRequest,
  GetFindingRequest,
  GetHypothesisRequest,
  GetInvestigationRequest,
  ListFindingsRequest,
  ListInvestigationsRequest,
  RecordFindingRequest,
  RecordHypothesisRequest,
} from "../../domain/requests/investigations.ts";
import {
  FindingPageSchema,
  FindingSchema,
  HypothesisSchema,
  InvestigationPageSchema,
  InvestigationSchema,
  RecordedFindingSchema,
} from "../../domain/results/investigations.ts";
import { additive, readOnly } from "../annotations.ts";
import { defineTool } from "../define-tool.ts";

export const investigationTools = [
  defineTool({
    name: "create_investigation",
    description: "Open an investigation: the question findings answer. Next: record_hypothesis.",
    input: CreateInvestigationRequest,
    output: InvestigationSchema,
    annotations: additive,
    async handler(input, { services }) {
      const result = services.investigations.createInvestigation(input);
      return {
        result,
        links: [{ uri: result.resource_uri, name: "Investigation", description: result.question }],
      };
    },
  }),
  defineTool({
    name: "list_investigations",
    description: "Investigations, newest first. Next: get_investigation or list_findings.",
    input: ListInvestigationsRequest,
    output: InvestigationPageSchema,
    annotations: readOnly,
    async handler(input, { services }) {
      const result = services.investigations.listInvestigations(input);
      return { result };
    },
  }),
  defineTool({
    name: "get_investigation",
    description: "One investigation: question, symptom, parent, status. Next: list_findings.",
    input: GetInvestigationRequest,
    output: InvestigationSchema,
    annotations: readOnly,
    async handler(input, { services }) {
      const result = services.investigations.getInvestigation(input.investigation_id);
      return { result };
    },
  }),
  defineTool({
    name: "record_hypothesis",
    description: "Record or revise (append-only) a hypothesis. Next: plan_experiment with hypothesis_id.",
    input: RecordHypothesisRequest,
    output: HypothesisSchema,
    annotations: additive,
    async handler(input, { services }) {
      const result = services.investigations.recordHypothesis(input);
      return {
        result,
        links: [{ uri: result.resource_uri, name: "Hypothesis", description: result.claim }],
      };
    },
  }),
  defineTool({
    name: "get_hypothesis",
    description: "A hypothesis's current revision: claim, prediction, condition, assessment.",
    input: GetHypothesisRequest,
    output: HypothesisSchema,
    annotations: readOnly,
    async handler(input, { services }) {
      const result = services.investigations.getHypothesis(input.hypothesis_id);
      return { result };
    },
  }),
  defineTool({
    name: "record_finding",
    description: "Record or revise a finding citing evidence; supported performance needs a decisive comparison.",
    input: RecordFindingRequest,
    output: RecordedFindingSchema,
    annotations: additive,
    async handler(input, { services }) {
      const result = services.investigations.recordFinding(input);
      return {
        result,
        links: [{ uri: result.finding.resource_uri, name: "Finding", description: result.finding.title }],
      };
    },
  }),
  defineTool({
    name: "get_finding",
    description: "A finding's current revision: claim, level, confidence, assessment, evidence.",
    input: GetFindingRequest,
    output: FindingSchema,
    annotations: readOnly,
    async handler(input, { services }) {
      const result = services.investigations.getFinding(input.finding_id);
      return { result };
    },
  }),
  defineTool({
    name: "list_findings",
    description: "Findings, newest first, of an investigation or assessment. Next: get_finding.",
    input: ListFindingsRequest,
    output: FindingPageSchema,
    annotations: readOnly,
    async handler(input, { services }) {
      const result = services.investigations.listFindings(input);
      return { result };
    },
  }),
];
