import { randomHex } from "../domain/random.ts";
import { capabilityUnavailable, notFound, staleInput } from "../domain/errors.ts";
import type { OperationStatus } from "../domain/results/providers.ts";
import { processesWithEnvironment, runMarkerVariable } from "../exec/environment-scan.ts";
import { bootId, processLiveness, processStartTime } from "../exec/identity.ts";
import type { CapabilitySetupStore, OperationOwner, StoredOperation } from "../store/capability-setup-store.ts";
import type { ProviderEnvironments, StagingOwner } from "../store/provider-environments.ts";
import type { WorkspaceHandle } from "../store/workspace-handle.ts";
import { runCapabilitySetup } from "./capability-setup-run.ts";
import type { ManagedProviders } from "./managed-providers.ts";
import { initialStatus, isActive, operationIdentity, requestDigest, revise } from "./operation-status.ts";

type Owned = { controller: AbortController; done: Promise<void>; current: () => OperationStatus };

/** Setup operations this process runs; they outlive the request that started them, not the process. */
const owned = new Map<string, Owned>();

/** A whole setup may take this long (a large provider such as torch, over a slow index). */
const operationDeadlineMs = 30 * 60 * 1000;

/** How old an ownerless staging folder must be before a sweep removes it (an owner writes its marker at once). */
const ownerlessGraceMs = 10 * 60 * 1000;

/**
 * start_capability_setup, get_capability_setup, cancel_capability_setup and prepare_capabilities.
 * Operations are durable (SQLite) and keyed by the caller's idempotency key: the same key and request
 * reconnect, the same key with another request is a conflict. The process that runs one is recorded
 * with it, so after a restart an orphan reads as unmanaged_after_restart, never as running.
 */
export class CapabilitySetupService {
  constructor(
    private readonly workspace: WorkspaceHandle,
    private readonly operations: CapabilitySetupStore,
    private readonly environments: ProviderEnvironments,
    private readonly managed: ManagedProviders,
  ) {}

  async start(request: { adapters: string[]; idempotency_key: string }): Promise<OperationStatus> {
    const workspaceId = this.workspace.open().id;
    const { operationId, idempotencyDigest } = operationIdentity(workspaceId, request.idempotency_key);
    const existing = this.operations.find(operationId);
    if (existing) return this.reconnect(existing, request.adapters);
    const status = initialStatus({
      operationId,
      idempotencyDigest,
      workspaceId,
      adapters: request.adapters,
      now: new Date().toISOString(),
    });
    const stored = this.operations.insert(status, currentOwner());
    // Another process inserted the same key first: that one is the operation.
    if (stored.status !== status) return this.reconnect(stored, request.adapters);
    this.launch(status);
    return this.status(operationId);
  }

  /** The compatibility entry point: the same durable operation under a key of its own. */
  prepare(request: { adapters: string[] }): Promise<OperationStatus> {
    return this.start({ adapters: request.adapters, idempotency_key: `prepare_capabilities:${randomHex(12)}` });
  }

  status(operationId: string): OperationStatus {
    const stored = this.operations.find(operationId);
    if (!stored) throw unknownOperation(operationId);
    const mine = owned.get(operationId);
    if (mine) return mine.current();
    // Active, yet no live process runs it: its owner died (or, in this process, its runner is gone).
    if (isActive(stored.status) && (isThisProcess(stored.owner) || processGone(stored.owner))) return this.markOrphan(stored);
    return stored.status;
  }

  /** The newest operation of this workspace, for list_capabilities; null without a workspace or any operation. */
  latest(): OperationStatus | null {
    if (!this.workspace.exists()) return null;
    const stored = this.operations.latest();
    return stored ? this.status(stored.status.operation_id) : null;
  }

  /** The number of setups recorded, which makes each suggested idempotency key new. */
  recordedCount(): number {
    return this.workspace.exists() ? this.operations.count() : 0;
  }

  /** Stops the installer's process tree, removes what it staged, and returns the recorded outcome. */
  async cancel(operationId: string): Promise<OperationStatus> {
    const current = this.status(operationId);
    if (!isActive(current)) return current;
    const mine = owned.get(operationId);
    if (!mine) {
      throw capabilityUnavailable(`Capability setup ${operationId} is run by another flameox process.`, {
        details: { operation_id: operationId, state: current.state },
        remediation: ["Only the server that started a setup can cancel it; poll get_capability_setup until it ends."],
      });
    }
    mine.controller.abort();
    await mine.done;
    return this.status(operationId);
  }

  private reconnect(existing: StoredOperation, adapters: string[]): OperationStatus {
    if (existing.status.request_digest !== requestDigest(adapters)) {
      throw staleInput("This idempotency key already started a capability setup with a different request.", {
        details: { operation_id: existing.status.operation_id, request: existing.status.request },
        remediation: ["Use a new idempotency key for a different set of adapters, or poll the existing operation."],
        fresh: { tool: "get_capability_setup", arguments: { operation_id: existing.status.operation_id } },
      });
    }
    return this.status(existing.status.operation_id);
  }

  private launch(initial: OperationStatus): void {
    let current = initial;
    const controller = new AbortController();
    const persist = (next: OperationStatus) => {
      if (!this.operations.update(next, current.revision)) throw new Error(`Operation ${next.operation_id} changed under its owner.`);
      current = next;
    };
    const owner: StagingOwner = { ...currentOwner(), operation_id: initial.operation_id };
    const entry: Owned = { controller, done: Promise.resolve(), current: () => current };
    owned.set(initial.operation_id, entry);
    controller.signal.addEventListener("abort", () => {
      if (!isActive(current)) return;
      persist(
        revise(current, new Date().toISOString(), (next) => {
          next.cancellation_requested = true;
          next.cleanup_status = "pending";
          next.progress.push({
            phase: "cancelling",
            completed: 3,
            total: 3,
            message: "Cancellation requested",
            observed_at: new Date().toISOString(),
          });
          next.phase = "cancelling";
        }),
      );
    });
    this.sweepLeftovers();
    entry.done = runCapabilitySetup({
      environments: this.environments,
      managed: this.managed,
      signal: controller.signal,
      owner,
      pathValue: process.env.PATH ?? "",
      deadline: Date.now() + operationDeadlineMs,
      recorder: { current: () => current, record: (change) => persist(revise(current, new Date().toISOString(), change)) },
    })
      // stdout is the protocol's: a defect that stops the recording is told on stderr.
      .catch((error: unknown) => {
        process.stderr.write(`flameox: capability setup ${initial.operation_id} could not record its outcome: ${String(error)}\n`);
      })
      .finally(() => owned.delete(initial.operation_id));
  }

  /** The owner died mid-setup: its staging is removed and the operation says so, with a fresh key to retry under. */
  private markOrphan(stored: StoredOperation): OperationStatus {
    // Its installer processes may outlive it (pip in its own session): they carry the operation's marker.
    for (const leftover of processesWithEnvironment(runMarkerVariable, stored.status.operation_id)) {
      if (processLiveness(leftover.pid, leftover.startTime) !== "alive") continue;
      try {
        process.kill(leftover.pid, "SIGKILL");
      } catch {
        // Gone in the meantime.
      }
    }
    const clean = this.environments.sweep((area) => area.owner?.operation_id === stored.status.operation_id);
    const now = new Date().toISOString();
    const next = revise(stored.status, now, (status) => {
      status.state = "unmanaged_after_restart";
      status.cleanup_status = clean ? "complete" : "incomplete";
      status.failure_code = "PROCESS_CANCELLED";
      status.failure_message = "The flameox process running this setup ended before it finished.";
      status.failure_details = {
        phase: status.phase,
        failure_category: "cancelled",
        adapter: status.item_outcomes.find((item) => item.status === "running")?.item ?? null,
        next_tool: "start_capability_setup",
        failure_detail: "owner process is gone",
      };
      for (const item of status.item_outcomes)
        if (item.status === "pending" || item.status === "running")
          Object.assign(item, { status: "retryable", message: "Its setup process ended." });
    });
    if (this.operations.update(next, stored.status.revision)) return next;
    return this.operations.find(stored.status.operation_id)?.status ?? next;
  }

  /** Staging folders whose owner is gone (a crashed setup) are removed before a new setup starts. */
  private sweepLeftovers(): void {
    this.environments.sweep((area) => {
      if (!area.owner) return area.ageMs > ownerlessGraceMs;
      return isThisProcess(area.owner) ? !owned.has(area.owner.operation_id) : processGone(area.owner);
    });
  }
}

function currentOwner(): OperationOwner {
  return { pid: process.pid, start_time: processStartTime(process.pid), boot_id: bootId() };
}

function isThisProcess(owner: OperationOwner): boolean {
  return owner.pid === process.pid && owner.start_time === processStartTime(process.pid);
}

/** Another process that no longer runs: a different boot, or (pid, start time) names no live process. */
function processGone(owner: OperationOwner): boolean {
  if (isThisProcess(owner)) return false;
  if (owner.boot_id !== null && owner.boot_id !== bootId()) return true;
  return processLiveness(owner.pid, owner.start_time) === "dead";
}

function unknownOperation(operationId: string) {
  return notFound("operation", operationId, {
    field: "operation_id",
    message: `No capability setup operation ${operationId} exists in this workspace.`,
    list: { tool: "list_capabilities" },
    remediation: ["Pass operation_id exactly as start_capability_setup returned it, or start a setup from list_capabilities."],
  });
}

/** Server shutdown: cancel the setups this process runs and wait until their cleanup is recorded. */
export async function cancelAllCapabilitySetups(): Promise<void> {
  const pending = [...owned.values()];
  for (const entry of pending) entry.controller.abort();
  await Promise.all(pending.map((entry) => entry.done.catch(() => undefined)));
}
