import { defineCommand } from "citty";
import { CreateInvestigationRequest, RecordHypothesisRequest } from "../domain/requests/investigations.ts";
import { pageLimits } from "../domain/requests/limits.ts";
import { pageArguments, pageOf, parseCliRequest } from "./arguments.ts";
import { cliOptions, cliServices } from "./context.ts";
import { emit, renderKeyValues, renderTable } from "./output.ts";

export const investigationsCommand = defineCommand({
  meta: { name: "investigations", description: "Investigations: the questions hypotheses, experiments and findings belong to." },
  subCommands: {
    create: defineCommand({
      meta: { name: "create", description: "Open an investigation: JSON {question, symptom?, parent_investigation_id?} or @file.json." },
      args: { request: { type: "positional", required: true, description: "Structured request." } },
      run({ args }) {
        const result = cliServices().investigations.createInvestigation(
          parseCliRequest(CreateInvestigationRequest, String(args.request), "investigations create"),
        );
        emit(cliOptions(), result, () => renderKeyValues(result, ["investigation_id", "question", "status"]));
      },
    }),
    list: defineCommand({
      meta: { name: "list", description: "List investigations, newest first." },
      args: pageArguments(pageLimits.investigations),
      run({ args }) {
        const result = cliServices().investigations.listInvestigations(pageOf(args, pageLimits.investigations));
        emit(cliOptions(), result, () => renderTable(result.investigations, ["investigation_id", "created_at", "status", "question"]));
      },
    }),
    show: defineCommand({
      meta: { name: "show", description: "Show one investigation." },
      args: { investigation_id: { type: "positional", required: true, description: "Investigation id." } },
      run({ args }) {
        const result = cliServices().investigations.getInvestigation(String(args.investigation_id));
        emit(cliOptions(), result, () => renderKeyValues(result));
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
          parseCliRequest(RecordHypothesisRequest, String(args.request), "hypotheses record"),
        );
        emit(cliOptions(), result, () =>
          renderKeyValues(result, ["hypothesis_id", "revision", "investigation_id", "claim", "assessment", "lifecycle"]),
        );
      },
    }),
    show: defineCommand({
      meta: { name: "show", description: "Show a hypothesis's current revision." },
      args: { hypothesis_id: { type: "positional", required: true, description: "Hypothesis id." } },
      run({ args }) {
        const result = cliServices().investigations.getHypothesis(String(args.hypothesis_id));
        emit(cliOptions(), result, () => renderKeyValues(result));
      },
    }),
  },
});
