import { ExtractionRequest } from "../../domain/requests/evidence.ts";
import { additive } from "../annotations.ts";
import { defineTool } from "../define-tool.ts";
import type { ExtractionTool } from "../../services/extraction-service.ts";

function extractionTool(tool: ExtractionTool, description: string) {
  return defineTool({
    name: `extract_${tool}`,
    description,
    input: ExtractionRequest,
    annotations: additive,
    async handler(request, { services }) {
      const result = await services.extraction.extract(tool, request);
      return {
        result,
        links: [{ uri: result.run_resource_uri, name: "Run", description: "The run whose artifact was extracted." }],
      };
    },
  });
}

export const extractionTools = [
  extractionTool("pyperf", "Normalize a run's pyperf JSON into measurements. Next: query_measurements."),
  extractionTool("benchmark_samples", "Normalize an imported flameox.benchmark-samples.v1 file. Next: query_measurements."),
  extractionTool("python_startup", "Normalize a python-startup capture into import times. Next: query_measurements."),
  extractionTool("pytest", "Normalize a pytest capture into test durations and outcomes. Next: query_measurements."),
  extractionTool("coverage", "Normalize a coverage.py database into executed lines. Next: analyze_execution."),
  extractionTool("memray", "Normalize a memray capture into memory measurements and stacks. Next: analyze_memory."),
  extractionTool("perfetto", "Normalize a Chrome/Perfetto trace into trace events. Next: analyze_pytorch."),
  extractionTool("nsight_systems", "Normalize an Nsight Systems SQLite export into trace events. Next: analyze_accelerator_launches."),
  extractionTool("observations", "Normalize a semantic observations JSONL file. Next: get_evidence."),
];
