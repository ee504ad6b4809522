import { ExtractionRequest } from "../../domain/requests/evidence.ts";
import { additive } from "../annotations.ts";
import { defineTool } from "../define-tool.ts";
import type { ExtractionResult, ExtractionTool } from "../../services/extraction-service.ts";

function extractionTool(tool: ExtractionTool, description: string, text: (result: ExtractionResult) => string) {
  return defineTool({
    name: `extract_${tool}`,
    description,
    input: ExtractionRequest,
    annotations: additive,
    async handler(request, { services }) {
      const result = await services.extraction.extract(tool, request);
      return {
        result,
        text: text(result),
        links: [{ uri: result.run_resource_uri, name: "Run", description: "The run whose artifact was extracted." }],
      };
    },
  });
}

const number = (value: unknown) => (typeof value === "number" ? value : 0);

export const extractionTools = [
  extractionTool(
    "pyperf",
    "Normalize a run's pyperf JSON into measurements. Next: query_measurements.",
    (result) => `Extracted ${number(result.value_count)} measured values.`,
  ),
  extractionTool(
    "benchmark_samples",
    "Normalize an imported flameox.benchmark-samples.v1 file. Next: query_measurements.",
    (result) => `Extracted ${number(result.value_count)} measured values and ${number(result.warmup_count)} warmups.`,
  ),
  extractionTool(
    "python_startup",
    "Normalize a python-startup capture into import times. Next: query_measurements.",
    (result) => `Extracted ${number(result.measurement_count)} startup measurements.`,
  ),
  extractionTool(
    "pytest",
    "Normalize a pytest capture into test durations and outcomes. Next: query_measurements.",
    (result) => `Extracted ${number((result.tables as Record<string, number>).measurements)} pytest measurements.`,
  ),
  extractionTool(
    "coverage",
    "Normalize a coverage.py database into executed lines. Next: analyze_execution.",
    (result) => `Extracted ${number(result.line_count)} lines and ${number(result.arc_count)} arcs.`,
  ),
  extractionTool(
    "memray",
    "Normalize a memray capture into memory measurements and stacks. Next: analyze_memory.",
    (result) => `Peak memory was ${number(result.peak_bytes)} bytes; ${number(result.retained_bytes)} bytes remained at end.`,
  ),
  extractionTool(
    "perfetto",
    "Normalize a Chrome/Perfetto trace into trace events. Next: analyze_pytorch.",
    (result) => `Extracted ${number(result.slice_count)} slices into ${number(result.frame_count)} frame aggregates.`,
  ),
  extractionTool(
    "nsight_systems",
    "Normalize an Nsight Systems SQLite export into trace events. Next: analyze_accelerator_launches.",
    (result) => `Extracted ${number(result.event_count)} Nsight Systems events.`,
  ),
  extractionTool(
    "observations",
    "Normalize a semantic observations JSONL file. Next: get_evidence.",
    (result) => `Extracted ${number(result.observation_count)} semantic observations.`,
  ),
];
