/** Requests of the capture tools: plan, execute, detached captures, imports. */
import * as v from "valibot";
import { described, identifier, mapKey, name, optionalOrNull, scalar, scalarMap } from "./fields.ts";

// Option values are scalars, short scalar lists (torch.profiler activities) or flat scalar objects (its
// schedule); each adapter's own strict schema decides what it accepts.
const optionValue = v.union([scalar, v.pipe(v.array(scalar), v.maxLength(16)), v.record(mapKey, scalar)]);

export const PlanCaptureRequest = v.strictObject({
  workload_name: name("Declared workload."),
  adapter: name("Adapter, e.g. py-spy."),
  parameters: v.optional(described(scalarMap, "Parameter values."), {}),
  // A null option value means "not given" (contract clients send it); it is dropped before the adapter sees it.
  adapter_options: v.optional(described(v.record(mapKey, v.union([optionValue, v.null()])), "See list_capabilities."), {}),
  torch_profiler_options: optionalOrNull(described(v.record(mapKey, optionValue), "torch.profiler options.")),
  preflight_mode: v.optional(described(v.picklist(["auto", "passive", "active"]), "passive skips probes."), "auto"),
  capture_mode: v.optional(described(v.picklist(["auto", "managed", "trusted_local"]), "managed needs containment."), "auto"),
});

export const planId = described(v.pipe(v.string(), v.minLength(1), v.maxLength(200)), "Single-use plan_id.");

export const ExecutePlanRequest = v.strictObject({ plan_id: planId });

export const StartDetachedCaptureRequest = v.strictObject({
  plan_id: planId,
  idempotency_key: described(
    v.pipe(v.string(), v.minLength(8), v.maxLength(200), v.regex(/^[A-Za-z0-9._:/-]+$/)),
    "8+ characters; reuse to reconnect.",
  ),
});

export const DetachedCaptureRequest = v.strictObject({ run_id: identifier("Run id.") });

export const ImportArtifactRequest = v.strictObject({
  path: described(v.pipe(v.string(), v.minLength(1), v.maxLength(4096)), "Path in source_root."),
  // Any name: the import service checks it, so an unknown kind gets the remedy that names the right one.
  kind: optionalOrNull(name("Detected if omitted; execution_trace for traces.")),
  sensitivity: v.optional(described(v.picklist(["normal", "internal", "sensitive"]), "Sensitivity."), "internal"),
  media_type: optionalOrNull(described(v.pipe(v.string(), v.maxLength(200)), "MIME type.")),
  source_root: v.optional(described(v.picklist(["project", "temp"]), "project root or system temp."), "project"),
  producer: v.optional(name("Producing tool."), "auto"),
  producer_version: optionalOrNull(described(v.pipe(v.string(), v.maxLength(100)), "Producer version.")),
});

export const ImportXctraceRequest = v.strictObject({
  path: described(v.pipe(v.string(), v.minLength(1), v.maxLength(4096)), ".trace folder."),
  source_root: v.optional(described(v.picklist(["project", "temp"]), "project root or system temp."), "project"),
});
