/**
 * The pure parts of a capability setup operation's status: its identity, the next revision after a
 * change, the bounded progress history, and the recovery an agent follows from each state.
 */
import { digestOf, sha256Hex, canonicalJson } from "../domain/canonical-json.ts";
import type { ItemOutcome, OperationState, OperationStatus, SetupPhase } from "../domain/results/providers.ts";

export const operationKind = "capability.setup";
export const maxProgressEntries = 32;

/** operation_id = "op-" + the digest of (workspace, operation, key): the same key always names the same operation. */
export function operationIdentity(workspaceId: string, idempotencyKey: string): { operationId: string; idempotencyDigest: string } {
  const hex = sha256Hex(canonicalJson({ workspace_id: workspaceId, operation: operationKind, key: idempotencyKey }));
  return { operationId: `op-${hex}`, idempotencyDigest: `sha256:${hex}` };
}

/** The request as it is compared: adapters unique and sorted, so their order never changes the digest. */
export function normalizedAdapters(adapters: readonly string[]): string[] {
  return [...new Set(adapters)].sort();
}

export function requestDigest(adapters: readonly string[]): string {
  return digestOf({ operation: operationKind, adapters: normalizedAdapters(adapters) });
}

/** Where each phase sits in the contract's fixed units: validating 0/3, installing 1/3, staging and verifying 2/3, done 3/3. */
const phaseUnits: Record<SetupPhase, number> = {
  validating_request: 0,
  installing_packages: 1,
  staging_providers: 2,
  verifying: 2,
  completed: 3,
  cancelling: 3,
};

export function initialStatus(input: {
  operationId: string;
  idempotencyDigest: string;
  workspaceId: string;
  adapters: string[];
  now: string;
}): OperationStatus {
  const adapters = normalizedAdapters(input.adapters);
  const status: OperationStatus = {
    schema_version: 1,
    operation_id: input.operationId,
    operation: operationKind,
    workspace_id: input.workspaceId,
    request_digest: requestDigest(adapters),
    request: { adapters },
    idempotency_digest: input.idempotencyDigest,
    revision: 1,
    state: "starting",
    phase: "validating_request",
    progress: [{ phase: "validating_request", completed: 0, total: 3, message: "Setup request accepted", observed_at: input.now }],
    item_outcomes: adapters.map((item) => ({ item, status: "pending", message: null, provider: null, version: null })),
    cancellation_requested: false,
    cleanup_status: "not_required",
    failure_code: null,
    failure_message: null,
    failure_details: null,
    terminal_receipt: null,
    recovery: { action: "poll", tool: null, arguments: null },
    poll_after_ms: null,
    created_at: input.now,
    updated_at: input.now,
  };
  return withDerivedFields(status);
}

/** A progress line in the given phase; the history keeps the latest entries only. */
export function addProgress(status: OperationStatus, phase: SetupPhase, message: string, now: string): void {
  status.phase = phase;
  status.progress.push({ phase, completed: phaseUnits[phase], total: 3, message, observed_at: now });
  if (status.progress.length > maxProgressEntries) status.progress.splice(0, status.progress.length - maxProgressEntries);
}

export function setItem(status: OperationStatus, item: string, outcome: Partial<Omit<ItemOutcome, "item">>): void {
  const entry = status.item_outcomes.find((candidate) => candidate.item === item);
  if (entry) Object.assign(entry, outcome);
}

export const activeStates: readonly OperationState[] = ["starting", "running"];

export function isActive(status: OperationStatus): boolean {
  return activeStates.includes(status.state);
}

/**
 * The fresh key a retry uses: derived, so a lost reply and a repeated retry land on the same new
 * operation, and different from the original, so the retry is a new operation at all.
 */
export function retryKey(status: OperationStatus): string {
  return `${status.operation_id}:retry:${status.revision + 1}`;
}

/** poll_after_ms and the recovery follow from the state; every change recomputes them. */
export function withDerivedFields(status: OperationStatus): OperationStatus {
  if (isActive(status)) {
    status.poll_after_ms = status.phase === "validating_request" ? 250 : status.phase === "verifying" ? 500 : 1000;
    status.recovery = { action: "poll", tool: "get_capability_setup", arguments: { operation_id: status.operation_id } };
    return status;
  }
  status.poll_after_ms = null;
  const onlyUnavailable =
    status.state === "failed" && status.item_outcomes.every((item) => item.status === "complete" || item.status === "unavailable");
  if (status.state === "terminal" || onlyUnavailable) {
    const adapters = status.request.adapters;
    status.recovery = {
      action: "inspect_capabilities",
      tool: "list_capabilities",
      arguments: adapters.length === 1 ? { adapter: adapters[0] } : {},
    };
    return status;
  }
  status.recovery = {
    action: "retry_new_operation",
    tool: "start_capability_setup",
    arguments: { adapters: status.request.adapters, idempotency_key: retryKey(status) },
  };
  return status;
}

/** The next revision of a status: a copy changed by `change`, with its derived fields brought up to date. */
export function revise(status: OperationStatus, now: string, change: (next: OperationStatus) => void): OperationStatus {
  const next = structuredClone(status);
  change(next);
  next.revision = status.revision + 1;
  next.updated_at = now;
  return withDerivedFields(next);
}

/** The receipt of a finished operation: what was asked, installed, already there, and still unavailable. */
export function terminalReceipt(
  status: OperationStatus,
  installed: string[],
  alreadyAvailable: string[],
): OperationStatus["terminal_receipt"] {
  const available = status.item_outcomes.filter((item) => item.status === "complete").map((item) => item.item);
  const unavailable = status.item_outcomes.filter((item) => item.status !== "complete").map((item) => item.item);
  return {
    requested: status.request.adapters,
    installed,
    already_available: alreadyAvailable,
    unavailable,
    setup_verification: {
      status: unavailable.length === 0 ? "verified" : available.length > 0 ? "partial" : "none",
      checked_adapters: status.request.adapters,
      available_adapters: available,
      unavailable_adapters: unavailable,
      method: "provider_probe",
    },
    workload_executed: false,
    next_tool: "list_capabilities",
  };
}
