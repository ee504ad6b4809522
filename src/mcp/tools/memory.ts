import { MemoryRequest } from "../../domain/requests/evidence.ts";
import { readOnly } from "../annotations.ts";
import { defineTool } from "../define-tool.ts";

/** analyze_memory: memray peaks, retained bytes and process RSS (services.memoryAnalysis). */
export const memoryTools = [
  defineTool({
    name: "analyze_memory",
    description: "Memory peak, retained bytes, peak RSS, functions holding most. Next: get_stack_examples.",
    input: MemoryRequest,
    annotations: readOnly,
    async handler(input, { services, progress }) {
      await progress(0, 2, "Memory evidence pinned");
      const result = await services.memoryAnalysis.analyze(input);
      await progress(1, 2, "Memory queries complete");
      await progress(2, 2, "Memory result ready");
      return { result };
    },
  }),
];
