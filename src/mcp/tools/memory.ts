import * as v from "valibot";
import { readOnly } from "../annotations.ts";
import { defineTool } from "../define-tool.ts";
import { runOrArtifact, limitDefaulting } from "./evidence-inputs.ts";

/** analyze_memory: memray peaks, retained bytes and process RSS (services.memoryAnalysis). */
export const memoryTools = [
  defineTool({
    name: "analyze_memory",
    description:
      "Memory of a run or artifact: memray peak bytes, bytes still allocated at exit (retained), total allocated and allocation count, process peak RSS, and the functions holding the most bytes at the high-water mark (frame_id usable with get_stack_examples, unit 'bytes'). Without memory evidence it fails with the exact next tool (extract_memray for an unextracted capture, plan_capture with adapter memray otherwise).",
    input: v.strictObject({ run_or_artifact: runOrArtifact, limit: limitDefaulting(20) }),
    annotations: readOnly,
    async handler(input, { services, progress }) {
      await progress(0, 2, "Memory evidence pinned");
      const result = await services.memoryAnalysis.analyze({ run_or_artifact: input.run_or_artifact, limit: input.limit });
      await progress(1, 2, "Memory queries complete");
      await progress(2, 2, "Memory result ready");
      return {
        result,
        text: `Returned ${result.returned} memory measurements${result.peak_bytes !== null ? `; peak ${result.peak_bytes} bytes` : ""}.`,
      };
    },
  }),
];
