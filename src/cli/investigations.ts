import { defineCommand } from "citty";
import * as v from "valibot";
import { invalidArguments } from "../domain/errors.ts";
import { assessments, lifecycles } from "../domain/investigation.ts";
import { cliOptions, cliServices } from "./context.ts";
import { emit, renderKeyValues, renderTable } from "./output.ts";
import { parseLimit, parseStructuredInput } from "./structured-input.ts";

const text = v.pipe(v.string(), v.minLength(1), v.maxLength(500));
const identifier = v.pipe(v.string(), v.minLength(1), v.maxLength(200));

/** Structured CLI input is checked with the same bounds as the MCP tools; bad fields are INVALID_ARGUMENTS. */
export function parseCliRequest<Schema extends v.GenericSchema>(schema: Schema, value: string, subject: string): v.InferOutput<Schema> {
  const parsed = v.safeParse(schema, parseStructuredInput(value, subject));
  if (parsed.success) return parsed.output;
  throw invalidArguments(
    subject,
    parsed.issues.map((issue) => ({
      field: (issue.path ?? []).map((item) => String(item.key)).join(".") || "(root)",
      message: issue.message,
      type: issue.type,
    })),
  );
}

const InvestigationRequest = v.strictObject({
  question: text,
  symptom: v.optional(v.nullable(v.pipe(v.string(), v.maxLength(2000)))),
  parent_investigation_id: v.optional(v.nullable(identifier)),
});
const HypothesisRequest = v.strictObject({
  investigation_id: identifier,
  claim: text,
  prediction: text,
  discriminating_condition: text,
  hypothesis_id: v.optional(v.nullable(identifier)),
  expected_revision: v.optional(v.nullable(v.pipe(v.number(), v.integer(), v.minValue(1)))),
  assessment: v.optional(v.picklist(assessments)),
  lifecycle: v.optional(v.picklist(lifecycles)),
});

export const investigationsCommand = defineCommand({
  meta: { name: "investigations", description: "Investigations: the questions hypotheses, experiments and findings belong to." },
  subCommands: {
    create: defineCommand({
      meta: { name: "create", description: "Open an investigation: JSON {question, symptom?, parent_investigation_id?} or @file.json." },
      args: { request: { type: "positional", required: true, description: "Structured request." } },
      run({ args }) {
        const result = cliServices().investigations.createInvestigation(
          parseCliRequest(InvestigationRequest, String(args.request), "investigations create"),
        );
        emit(cliOptions(), result, () =>
          renderKeyValues(result as unknown as Record<string, unknown>, ["investigation_id", "question", "status"]),
        );
      },
    }),
    list: defineCommand({
      meta: { name: "list", description: "List investigations, newest first." },
      args: {
        limit: { type: "string", description: "Page size (1..1000, default 100)." },
        cursor: { type: "string", description: "Cursor from a previous page." },
      },
      run({ args }) {
        const result = cliServices().investigations.listInvestigations({
          limit: parseLimit(args.limit, 100),
          cursor: (args.cursor as string | undefined) ?? null,
        });
        emit(cliOptions(), result, () =>
          renderTable(result.investigations as unknown as Record<string, unknown>[], [
            "investigation_id",
            "created_at",
            "status",
            "question",
          ]),
        );
      },
    }),
    show: defineCommand({
      meta: { name: "show", description: "Show one investigation." },
      args: { investigation_id: { type: "positional", required: true, description: "Investigation id." } },
      run({ args }) {
        const result = cliServices().investigations.getInvestigation(String(args.investigation_id));
        emit(cliOptions(), result, () => renderKeyValues(result as unknown as Record<string, unknown>));
      },
    }),
  },
});

export const hypothesesCommand = defineCommand({
  meta: { name: "hypotheses", description: "Hypotheses: claim, prediction, discriminating condition; revised with expected_revision." },
  subCommands: {
    record: defineCommand({
      meta: {
        name: "record",
        description:
          "Record or revise a hypothesis: JSON {investigation_id, claim, prediction, discriminating_condition, hypothesis_id?, expected_revision?, assessment?, lifecycle?} or @file.json.",
      },
      args: { request: { type: "positional", required: true, description: "Structured request." } },
      run({ args }) {
        const result = cliServices().investigations.recordHypothesis(
          parseCliRequest(HypothesisRequest, String(args.request), "hypotheses record"),
        );
        emit(cliOptions(), result, () =>
          renderKeyValues(result as unknown as Record<string, unknown>, [
            "hypothesis_id",
            "revision",
            "investigation_id",
            "claim",
            "assessment",
            "lifecycle",
          ]),
        );
      },
    }),
    show: defineCommand({
      meta: { name: "show", description: "Show a hypothesis's current revision." },
      args: { hypothesis_id: { type: "positional", required: true, description: "Hypothesis id." } },
      run({ args }) {
        const result = cliServices().investigations.getHypothesis(String(args.hypothesis_id));
        emit(cliOptions(), result, () => renderKeyValues(result as unknown as Record<string, unknown>));
      },
    }),
  },
});
