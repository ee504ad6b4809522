/**
 * The results of the provider tools: a capability setup operation's durable status, an adapter
 * approval and a workload's dependency inspection. The services infer their types from these.
 */
import * as v from "valibot";

export const operationStates = ["starting", "running", "terminal", "failed", "cancelled", "unmanaged_after_restart"] as const;
export type OperationState = (typeof operationStates)[number];

/** A staging failure keeps its phase; a cancellation ends in `cancelling`. */
export const setupPhases = [
  "validating_request",
  "installing_packages",
  "staging_providers",
  "verifying",
  "completed",
  "cancelling",
] as const;
export type SetupPhase = (typeof setupPhases)[number];

export const itemStatuses = ["pending", "running", "complete", "retryable", "unavailable", "failed"] as const;
export type ItemStatus = (typeof itemStatuses)[number];

export const recoveryActions = [
  "poll",
  "retry_same_request",
  "retry_new_operation",
  "retry_failed_items",
  "inspect_capabilities",
  "extract_required_evidence",
  "reread_snapshot",
] as const;

const ProgressEntrySchema = v.object({
  phase: v.picklist(setupPhases),
  completed: v.nullable(v.number()),
  total: v.nullable(v.number()),
  message: v.string(),
  observed_at: v.string(),
});

const ItemOutcomeSchema = v.object({
  item: v.string(),
  status: v.picklist(itemStatuses),
  message: v.nullable(v.string()),
  /** The provider environment that serves it: `providers/<name>/<version>` under flameox's data folder. */
  provider: v.nullable(v.string()),
  version: v.nullable(v.string()),
});

const TerminalReceiptSchema = v.object({
  requested: v.array(v.string()),
  installed: v.array(v.string()),
  already_available: v.array(v.string()),
  unavailable: v.array(v.string()),
  setup_verification: v.object({
    status: v.picklist(["verified", "partial", "none"]),
    checked_adapters: v.array(v.string()),
    available_adapters: v.array(v.string()),
    unavailable_adapters: v.array(v.string()),
    method: v.literal("provider_probe"),
  }),
  workload_executed: v.literal(false),
  next_tool: v.literal("list_capabilities"),
});

export const OperationStatusSchema = v.object({
  schema_version: v.literal(1),
  operation_id: v.string(),
  operation: v.literal("capability.setup"),
  workspace_id: v.string(),
  request_digest: v.string(),
  request: v.object({ adapters: v.array(v.string()) }),
  idempotency_digest: v.string(),
  revision: v.number(),
  state: v.picklist(operationStates),
  phase: v.picklist(setupPhases),
  progress: v.array(ProgressEntrySchema),
  item_outcomes: v.array(ItemOutcomeSchema),
  cancellation_requested: v.boolean(),
  cleanup_status: v.picklist(["not_required", "pending", "complete", "incomplete"]),
  failure_code: v.nullable(v.string()),
  failure_message: v.nullable(v.string()),
  failure_details: v.nullable(
    v.object({
      phase: v.string(),
      failure_category: v.picklist(["network", "filesystem", "verification", "cancelled", "timeout", "unsupported_platform", "process"]),
      adapter: v.nullable(v.string()),
      next_tool: v.nullable(v.string()),
      failure_detail: v.string(),
    }),
  ),
  terminal_receipt: v.nullable(TerminalReceiptSchema),
  recovery: v.object({
    action: v.picklist(recoveryActions),
    tool: v.nullable(v.string()),
    arguments: v.nullable(v.record(v.string(), v.unknown())),
  }),
  poll_after_ms: v.nullable(v.number()),
  created_at: v.string(),
  updated_at: v.string(),
});

export type OperationStatus = v.InferOutput<typeof OperationStatusSchema>;
export type ItemOutcome = v.InferOutput<typeof ItemOutcomeSchema>;
export type ProgressEntry = v.InferOutput<typeof ProgressEntrySchema>;
export type TerminalReceipt = v.InferOutput<typeof TerminalReceiptSchema>;

export const AdapterPreparationResultSchema = v.object({
  schema_version: v.literal(1),
  adapter: v.string(),
  distribution: v.string(),
  version: v.string(),
  package_identity: v.string(),
  action: v.picklist(["approved", "unchanged", "replaced"]),
  provenance: v.literal("agent"),
  approvals_path: v.literal(".diagnostics/adapter-approvals.json"),
  interpreter: v.string(),
  limitations: v.array(v.string()),
  workload_executed: v.literal(false),
  next_tool: v.literal("list_capabilities"),
});
export type AdapterPreparationResult = v.InferOutput<typeof AdapterPreparationResultSchema>;

const RequirementOutcomeSchema = v.object({
  requirement: v.string(),
  distribution: v.string(),
  status: v.picklist(["installed", "missing", "version_mismatch"]),
  installed_version: v.nullable(v.string()),
  optional: v.boolean(),
});

export const WorkloadDependencySetupResultSchema = v.object({
  schema_version: v.literal(1),
  workload_name: v.string(),
  workload_definition_id: v.string(),
  interpreter: v.string(),
  python_version: v.string(),
  requirements: v.array(RequirementOutcomeSchema),
  installed: v.array(v.string()),
  missing: v.array(v.string()),
  ready: v.boolean(),
  environment_changed: v.literal(false),
  remediation: v.array(v.string()),
  next_tool: v.nullable(v.string()),
  next_arguments: v.nullable(v.record(v.string(), v.unknown())),
});
export type WorkloadDependencySetupResult = v.InferOutput<typeof WorkloadDependencySetupResultSchema>;
