import { defineCommand, type CommandDef } from "citty";
import { extractionTools, type ExtractionResult, type ExtractionTool } from "../services/extraction-service.ts";
import { cliOptions, cliServices } from "./context.ts";
import { emit, renderKeyValues } from "./output.ts";

function human(result: ExtractionResult): string {
  const skip = new Set(["schema_version", "run_resource_uri", "bundle_ids", "superseded_bundle_ids", "artifact_ids"]);
  const record = Object.fromEntries(Object.entries(result).filter(([key]) => !skip.has(key)));
  return renderKeyValues(record);
}

function extractCommand(tool: ExtractionTool): CommandDef {
  const name = tool.replaceAll("_", "-");
  return defineCommand({
    meta: { name, description: `Normalize a run's artifact with extract_${tool}; re-running supersedes the earlier bundle.` },
    args: {
      run_id: { type: "positional", required: true, description: "The run whose artifact to extract." },
      "artifact-id": { type: "string", description: "One artifact of the run (sha256:…); default: every matching artifact." },
    },
    async run({ args }) {
      const result = await cliServices().extraction.extract(tool, {
        run_id: String(args.run_id),
        artifact_id: (args["artifact-id"] as string | undefined) ?? null,
      });
      emit(cliOptions(), result, () => human(result));
    },
  }) as CommandDef;
}

export const extractCommandGroup = defineCommand({
  meta: {
    name: "extract",
    description:
      "Normalize stored artifacts into evidence (pyperf, benchmark-samples, python-startup, pytest, coverage, memray, perfetto, nsight-systems, observations).",
  },
  subCommands: Object.fromEntries(extractionTools.map((tool) => [tool.replaceAll("_", "-"), extractCommand(tool)])),
});
