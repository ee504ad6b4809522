/** Requests of the evidence analyses: hotspots and drill-downs, memory, execution, traces, failures, measurements, lookups. */
import * as v from "valibot";
import { evidenceLookupTypes } from "../vocabulary.ts";
import { cursor, described, identifier, identifierText, limit, optionalOrNull, runOrArtifact, text } from "./fields.ts";
import { stackUnitNames } from "../evidence.ts";
import { pageLimits } from "./limits.ts";
import { RunFilter } from "./runs.ts";

const unit = optionalOrNull(described(v.picklist(stackUnitNames), "Default: first present."));
/** A drill-down's unit defaults to the first the frame's own stacks have; a frame held both at peak and at exit picks with retained_bytes. */
const drillDownUnit = optionalOrNull(described(v.picklist(stackUnitNames), "Default: frame's."));
const thread = optionalOrNull(described(v.pipe(v.string(), v.maxLength(500)), "Thread."));
const orderBy = v.optional(described(v.picklist(["self", "total"]), "Ranking."), "self");

export const HotspotsRequest = v.strictObject({
  run_or_artifact: runOrArtifact(),
  limit: limit(pageLimits.hotspots),
  group_by: v.optional(described(v.picklist(["function", "line"]), "Grouping."), "function"),
  order_by: orderBy,
  unit,
  thread,
  per_thread: v.optional(described(v.boolean(), "Rank per thread."), false),
  cursor,
});

/** get_frame_callers, get_frame_callees and get_stack_examples. */
export const FrameDrillDownRequest = v.strictObject({
  run_or_artifact: runOrArtifact(),
  frame_id: identifier("From analyze_hotspots."),
  limit: limit(pageLimits.frameDrillDown),
  cursor,
  unit: drillDownUnit,
  thread,
});

export const MemoryRequest = v.strictObject({
  run_or_artifact: runOrArtifact(),
  limit: limit(pageLimits.memory, "Most functions to list."),
  cursor,
});

export const optionalComparison = optionalOrNull(runOrArtifact("Other run/artifact."));

export const ExecutionRequest = v.strictObject({
  run_or_artifact: runOrArtifact(),
  limit: limit(pageLimits.execution, "Most files to list."),
  comparison_run_or_artifact: optionalComparison,
  cursor,
});

export const PytorchRequest = v.strictObject({
  run_or_artifact: runOrArtifact(),
  limit: limit(pageLimits.pytorch),
  order_by: orderBy,
  cursor,
});

export const phase = optionalOrNull(text(200, "Phase annotation."));

export const AcceleratorLaunchesRequest = v.strictObject({
  run_or_artifact: runOrArtifact(),
  limit: limit(pageLimits.acceleratorLaunches, "Most regions to list."),
  comparison_run_or_artifact: optionalComparison,
  phase,
});

export const TraceWindowRequest = v.strictObject({
  artifact_id: identifier("Trace artifact id."),
  start_ns: described(v.pipe(v.number(), v.integer(), v.minValue(0)), "Start, trace clock ns."),
  end_ns: described(v.pipe(v.number(), v.integer(), v.minValue(1)), "End ns, exclusive."),
  limit: limit(pageLimits.traceWindow),
  cursor,
});

export const FailuresRequest = v.strictObject({ limit: limit(pageLimits.failures, "Most clusters to list."), filter: RunFilter });

export const MeasurementsRequest = v.strictObject({
  run_id: optionalOrNull(identifier("Run id.")),
  artifact_id: optionalOrNull(identifier("Artifact id.")),
  name_prefix: optionalOrNull(text(200, "Name prefix.")),
  include_warmups: v.optional(described(v.boolean(), "Include warm-ups."), false),
  limit: limit(pageLimits.measurements),
  cursor,
});

export const GetEvidenceRequest = v.strictObject({
  ref_type: described(v.picklist(evidenceLookupTypes), "Evidence type."),
  ref_id: identifier("Its id."),
});

const ids = (maximum: number, description: string) =>
  optionalOrNull(described(v.pipe(v.array(identifierText), v.maxLength(maximum)), description));

export const SummarizeEvidenceRequest = v.strictObject({
  request: described(
    v.strictObject({
      baseline_run_id: optionalOrNull(identifier("The baseline run.")),
      candidate_run_id: optionalOrNull(identifier("The candidate run.")),
      run_ids: ids(20, "More runs."),
      comparison_ids: ids(10, "Recorded comparisons."),
      analysis_ids: ids(20, "Recorded analyses."),
      finding_ids: ids(20, "Finding ids."),
      output_excerpts: v.optional(described(v.picklist(["none", "internal"]), "Process output excerpts."), "none"),
      sensitive_context: v.optional(described(v.picklist(["redact", "include"]), "Redact sensitive context."), "redact"),
    }),
    "Inputs.",
  ),
});

export const ViewerPlanRequest = v.strictObject({ run_or_artifact: runOrArtifact() });

/** Every extract_* tool. */
export const ExtractionRequest = v.strictObject({
  run_id: identifier("Run id."),
  artifact_id: optionalOrNull(identifier("Artifact id.")),
});
