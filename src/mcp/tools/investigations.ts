import * as v from "valibot";
import { assessments, evidenceReferenceTypes, evidenceRelations, lifecycles } from "../../domain/investigation.ts";
import { additive, readOnly } from "../annotations.ts";
import { defineTool } from "../define-tool.ts";

const identifier = v.pipe(v.string(), v.minLength(1), v.maxLength(200));
const text = v.pipe(v.string(), v.minLength(1), v.maxLength(500));
const limit = v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(1000)), 100);
const cursor = v.optional(v.nullable(v.pipe(v.string(), v.minLength(1), v.maxLength(4000))), null);
const revision = v.optional(v.nullable(v.pipe(v.number(), v.integer(), v.minValue(1))), null);

export const investigationTools = [
  defineTool({
    name: "create_investigation",
    description:
      "Open an investigation: the question being answered (and optionally the symptom and a parent investigation). Hypotheses, experiments and findings link to it, so work can be resumed later without the conversation.",
    input: v.strictObject({
      question: text,
      symptom: v.optional(v.nullable(v.pipe(v.string(), v.minLength(1), v.maxLength(2000))), null),
      parent_investigation_id: v.optional(v.nullable(identifier), null),
    }),
    annotations: additive,
    async handler(input, { services }) {
      const result = services.investigations.createInvestigation({
        question: input.question,
        symptom: input.symptom ?? null,
        parent_investigation_id: input.parent_investigation_id ?? null,
      });
      return {
        result,
        text: `Created investigation ${result.investigation_id}.`,
        links: [{ uri: result.resource_uri, name: "Investigation", description: result.question }],
      };
    },
  }),
  defineTool({
    name: "list_investigations",
    description: "Investigations newest first, bounded with limit (1..1000), total, truncated and next_cursor.",
    input: v.strictObject({ limit, cursor }),
    annotations: readOnly,
    async handler(input, { services }) {
      const result = services.investigations.listInvestigations({ limit: input.limit, cursor: input.cursor ?? null });
      return { result, text: `Returned ${result.returned} of ${result.total} investigations.` };
    },
  }),
  defineTool({
    name: "get_investigation",
    description: "One investigation: its question, symptom, parent investigation, status and creation time.",
    input: v.strictObject({ investigation_id: identifier }),
    annotations: readOnly,
    async handler(input, { services }) {
      const result = services.investigations.getInvestigation(input.investigation_id);
      return { result, text: `Investigation ${result.investigation_id} is ${result.status}.` };
    },
  }),
  defineTool({
    name: "record_hypothesis",
    description:
      "Record or revise a hypothesis in an investigation: claim, prediction (what would be observed if true) and discriminating condition (what would tell it apart from alternatives), with assessment and lifecycle. A new hypothesis omits hypothesis_id and expected_revision; a revision passes hypothesis_id and expected_revision = the current revision (a stale one is REVISION_CONFLICT). Revisions are append-only.",
    input: v.strictObject({
      investigation_id: identifier,
      claim: text,
      prediction: text,
      discriminating_condition: text,
      hypothesis_id: v.optional(v.nullable(identifier), null),
      expected_revision: revision,
      assessment: v.optional(v.picklist(assessments), "unassessed"),
      lifecycle: v.optional(v.picklist(lifecycles), "active"),
    }),
    annotations: additive,
    async handler(input, { services }) {
      const result = services.investigations.recordHypothesis({
        ...input,
        hypothesis_id: input.hypothesis_id ?? null,
        expected_revision: input.expected_revision ?? null,
      });
      return {
        result,
        text: `Hypothesis ${result.hypothesis_id} is revision ${result.revision}.`,
        links: [{ uri: result.resource_uri, name: "Hypothesis", description: result.claim }],
      };
    },
  }),
  defineTool({
    name: "get_hypothesis",
    description: "A hypothesis's current revision: claim, prediction, discriminating condition, assessment, lifecycle.",
    input: v.strictObject({ hypothesis_id: identifier }),
    annotations: readOnly,
    async handler(input, { services }) {
      const result = services.investigations.getHypothesis(input.hypothesis_id);
      return { result, text: `Hypothesis ${result.hypothesis_id} is revision ${result.revision} (${result.assessment}).` };
    },
  }),
  defineTool({
    name: "record_finding",
    description:
      "Record or revise a finding: kind (e.g. 'performance'), title, claim, evidence_level (observed = direct evidence only; derived = rests on an analysis or comparison; inferred), confidence, assessment and typed evidence references ({ref_type: run|artifact|run_set|trial|experiment|analysis|comparison, ref_id, relation: supports|contradicts|context|validates}) that must exist. 'supported' needs supporting evidence; a supported performance finding needs a recorded comparison, and every cited supporting comparison must be valid and decisive (else COMPARISON_INVALID). Revisions pass finding_id and expected_revision (stale → REVISION_CONFLICT).",
    input: v.strictObject({
      kind: v.pipe(v.string(), v.minLength(1), v.maxLength(100)),
      title: text,
      claim: text,
      evidence_level: v.picklist(["observed", "derived", "inferred"]),
      confidence: v.picklist(["high", "medium", "low", "unknown"]),
      assessment: v.picklist(assessments),
      lifecycle: v.optional(v.picklist(lifecycles), "active"),
      investigation_id: v.optional(v.nullable(identifier), null),
      hypothesis_id: v.optional(v.nullable(identifier), null),
      limitations: v.optional(v.pipe(v.array(v.pipe(v.string(), v.minLength(1), v.maxLength(500))), v.maxLength(20)), []),
      next_experiments: v.optional(
        v.pipe(
          v.array(v.record(v.pipe(v.string(), v.maxLength(100)), v.union([v.string(), v.number(), v.boolean(), v.null()]))),
          v.maxLength(20),
        ),
        [],
      ),
      evidence: v.optional(
        v.pipe(
          v.array(
            v.strictObject({ ref_type: v.picklist(evidenceReferenceTypes), ref_id: identifier, relation: v.picklist(evidenceRelations) }),
          ),
          v.maxLength(50),
        ),
        [],
      ),
      finding_id: v.optional(v.nullable(identifier), null),
      expected_revision: revision,
    }),
    annotations: additive,
    async handler(input, { services }) {
      const result = services.investigations.recordFinding({
        ...input,
        finding_id: input.finding_id ?? null,
        expected_revision: input.expected_revision ?? null,
        investigation_id: input.investigation_id ?? null,
        hypothesis_id: input.hypothesis_id ?? null,
      });
      return {
        result,
        text: `Finding ${result.finding.finding_id} is ${result.finding.assessment} (revision ${result.finding.revision}).`,
        links: [{ uri: result.finding.resource_uri, name: "Finding", description: result.finding.title }],
      };
    },
  }),
  defineTool({
    name: "get_finding",
    description: "A finding's current revision: claim, evidence level, confidence, assessment and its typed evidence references.",
    input: v.strictObject({ finding_id: identifier }),
    annotations: readOnly,
    async handler(input, { services }) {
      const result = services.investigations.getFinding(input.finding_id);
      return { result, text: `Finding ${result.finding_id} is revision ${result.revision} (${result.assessment}).` };
    },
  }),
  defineTool({
    name: "list_findings",
    description:
      "Findings (current revisions) newest first, optionally of one investigation or assessment; bounded with limit (1..1000), total, truncated and next_cursor.",
    input: v.strictObject({
      limit,
      cursor,
      investigation_id: v.optional(v.nullable(identifier), null),
      assessment: v.optional(v.nullable(v.picklist(assessments)), null),
    }),
    annotations: readOnly,
    async handler(input, { services }) {
      const result = services.investigations.listFindings({
        limit: input.limit,
        cursor: input.cursor ?? null,
        investigation_id: input.investigation_id ?? null,
        assessment: input.assessment ?? null,
      });
      return { result, text: `Returned ${result.returned} of ${result.total} findings.` };
    },
  }),
];
