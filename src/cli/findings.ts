import { defineCommand } from "citty";
import * as v from "valibot";
import { assessments, evidenceReferenceTypes, evidenceRelations, lifecycles, type Assessment } from "../domain/investigation.ts";
import { cliOptions, cliServices } from "./context.ts";
import { parseCliRequest } from "./investigations.ts";
import { emit, renderKeyValues, renderTable } from "./output.ts";
import { parseLimit } from "./structured-input.ts";

const text = v.pipe(v.string(), v.minLength(1), v.maxLength(500));
const identifier = v.pipe(v.string(), v.minLength(1), v.maxLength(200));

const FindingRequest = v.strictObject({
  kind: v.pipe(v.string(), v.minLength(1), v.maxLength(100)),
  title: text,
  claim: text,
  evidence_level: v.picklist(["observed", "derived", "inferred"]),
  confidence: v.picklist(["high", "medium", "low", "unknown"]),
  assessment: v.picklist(assessments),
  lifecycle: v.optional(v.picklist(lifecycles)),
  investigation_id: v.optional(v.nullable(identifier)),
  hypothesis_id: v.optional(v.nullable(identifier)),
  limitations: v.optional(v.array(text)),
  next_experiments: v.optional(v.array(v.record(v.string(), v.unknown()))),
  evidence: v.optional(
    v.array(v.strictObject({ ref_type: v.picklist(evidenceReferenceTypes), ref_id: identifier, relation: v.picklist(evidenceRelations) })),
  ),
  finding_id: v.optional(v.nullable(identifier)),
  expected_revision: v.optional(v.nullable(v.pipe(v.number(), v.integer(), v.minValue(1)))),
});

export const findingsCommand = defineCommand({
  meta: { name: "findings", description: "Findings: claims with typed evidence references, revised with expected_revision." },
  subCommands: {
    record: defineCommand({
      meta: {
        name: "record",
        description:
          "Record or revise a finding: JSON {kind, title, claim, evidence_level, confidence, assessment, evidence[{ref_type, ref_id, relation}], finding_id?, expected_revision?, …} or @file.json.",
      },
      args: { request: { type: "positional", required: true, description: "Structured request." } },
      run({ args }) {
        const result = cliServices().investigations.recordFinding(parseCliRequest(FindingRequest, String(args.request), "findings record"));
        emit(cliOptions(), result, () =>
          renderKeyValues(result.finding as unknown as Record<string, unknown>, [
            "finding_id",
            "revision",
            "kind",
            "title",
            "assessment",
            "evidence_level",
            "confidence",
            "evidence",
          ]),
        );
      },
    }),
    list: defineCommand({
      meta: { name: "list", description: "List findings (current revisions), newest first." },
      args: {
        limit: { type: "string", description: "Page size (1..1000, default 100)." },
        cursor: { type: "string", description: "Cursor from a previous page." },
        investigation: { type: "string", description: "Only this investigation's findings." },
        assessment: { type: "string", description: "Only findings with this assessment." },
      },
      run({ args }) {
        const result = cliServices().investigations.listFindings({
          limit: parseLimit(args.limit, 100),
          cursor: (args.cursor as string | undefined) ?? null,
          investigation_id: (args.investigation as string | undefined) ?? null,
          assessment: (args.assessment as Assessment | undefined) ?? null,
        });
        emit(cliOptions(), result, () =>
          renderTable(result.findings as unknown as Record<string, unknown>[], [
            "finding_id",
            "revision",
            "kind",
            "assessment",
            "confidence",
            "title",
          ]),
        );
      },
    }),
    show: defineCommand({
      meta: { name: "show", description: "Show a finding's current revision." },
      args: { finding_id: { type: "positional", required: true, description: "Finding id." } },
      run({ args }) {
        const result = cliServices().investigations.getFinding(String(args.finding_id));
        emit(cliOptions(), result, () => renderKeyValues(result as unknown as Record<string, unknown>));
      },
    }),
  },
});
