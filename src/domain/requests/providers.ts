/**
 * Requests of the provider tools: managed capability setup (start, poll, cancel, the compatibility
 * prepare_capabilities), third-party adapter approval and the workload dependency inspection.
 */
import * as v from "valibot";
import { described, name } from "./fields.ts";

/**
 * What start_capability_setup accepts: the contract's names, plus pyperf (a standalone managed
 * provider here) and shrinkray (plan_reduction's managed engine, which the reduction workflow sets up
 * through list_capabilities(adapter='shrinkray')). perfetto and toxiproxy are accepted and answered per item: the package registry
 * does not carry their binaries.
 */
export const setupAdapterNames = [
  "coverage",
  "memray",
  "perfetto",
  "py-spy",
  "pyperf",
  "pytest",
  "shrinkray",
  "torch.profiler",
  "toxiproxy",
] as const;
export type SetupAdapterName = (typeof setupAdapterNames)[number];

const adapters = described(
  v.pipe(v.array(v.picklist(setupAdapterNames)), v.minLength(1), v.maxLength(setupAdapterNames.length)),
  "From setup_adapters.",
);

export const StartCapabilitySetupRequest = v.strictObject({
  adapters,
  idempotency_key: described(v.pipe(v.string(), v.minLength(1), v.maxLength(200)), "Reuse to reconnect."),
});

export const PrepareCapabilitiesRequest = v.strictObject({ adapters });

export const CapabilitySetupRequest = v.strictObject({
  operation_id: described(v.pipe(v.string(), v.minLength(4), v.maxLength(100)), "From start_capability_setup."),
});

const distributionPattern = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

export const PrepareAdapterRequest = v.strictObject({
  adapter: described(v.pipe(v.string(), v.minLength(1), v.maxLength(200), v.regex(/^[A-Za-z0-9][A-Za-z0-9._:-]*$/)), "Entry point name."),
  distribution: described(v.pipe(v.string(), v.minLength(1), v.maxLength(200), v.regex(distributionPattern)), "Its distribution."),
});

export const PrepareWorkloadDependenciesRequest = v.strictObject({
  workload_name: name("Declared workload."),
});
