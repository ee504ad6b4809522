import { defineCommand } from "citty";
import { ListFindingsRequest, RecordFindingRequest } from "../domain/requests/investigations.ts";
import { pageLimits } from "../domain/requests/limits.ts";
import { checkedRequest, pageArguments, pageOf, parseCliRequest } from "./arguments.ts";
import { cliOptions, cliServices } from "./context.ts";
import { emit, renderKeyValues, renderTable } from "./output.ts";

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
        const result = cliServices().investigations.recordFinding(
          parseCliRequest(RecordFindingRequest, String(args.request), "findings record"),
        );
        emit(cliOptions(), result, () =>
          renderKeyValues(result.finding, [
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
        ...pageArguments(pageLimits.findings),
        investigation: { type: "string", description: "Only this investigation's findings." },
        assessment: { type: "string", description: "Only findings with this assessment." },
      },
      run({ args }) {
        const request = checkedRequest(
          ListFindingsRequest,
          { ...pageOf(args, pageLimits.findings), investigation_id: args.investigation, assessment: args.assessment },
          "findings list",
        );
        const result = cliServices().investigations.listFindings(request);
        emit(cliOptions(), result, () =>
          renderTable(result.findings, ["finding_id", "revision", "kind", "assessment", "confidence", "title"]),
        );
      },
    }),
    show: defineCommand({
      meta: { name: "show", description: "Show a finding's current revision." },
      args: { finding_id: { type: "positional", required: true, description: "Finding id." } },
      run({ args }) {
        const result = cliServices().investigations.getFinding(String(args.finding_id));
        emit(cliOptions(), result, () => renderKeyValues(result));
      },
    }),
  },
});
