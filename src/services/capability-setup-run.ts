/**
 * One capability setup operation from validation to its terminal state. Environments are built in
 * staging, promoted by one rename, then verified where they will be used from; a cancellation or
 * failure removes what this operation staged or promoted but did not verify, so nothing half-made is
 * ever used or reported available.
 */
import { type ManagedProvider, managedProvider, unavailableProvider } from "../adapters/providers/provider-catalog.ts";
import {
  type BasePython,
  buildEnvironment,
  checkVersions,
  findBasePython,
  type InstallerContext,
  probeProvider,
} from "../adapters/providers/provider-installer.ts";
import { artifactIntegrityFailed, type FlameoxError, toFlameoxError } from "../domain/errors.ts";
import type { OperationStatus } from "../domain/results/providers.ts";
import type { ProviderEnvironments, StagingArea, StagingOwner } from "../store/provider-environments.ts";
import { flameoxVersion } from "../version.ts";
import { findOnPath } from "./capability-report.ts";
import type { ManagedProviders } from "./managed-providers.ts";
import { addProgress, setItem, terminalReceipt } from "./operation-status.ts";

/** How the runner changes the durable status; every call is one persisted revision. */
export type StatusRecorder = {
  current(): OperationStatus;
  record(change: (next: OperationStatus) => void): void;
};

export type SetupRunContext = {
  environments: ProviderEnvironments;
  managed: ManagedProviders;
  recorder: StatusRecorder;
  signal: AbortSignal;
  owner: StagingOwner;
  pathValue: string;
  /** The whole operation's deadline, ms since the epoch. */
  deadline: number;
};

type Work = {
  item: string;
  provider: ManagedProvider;
  /** "install" builds a new environment; "verify" only probes one that a crashed setup left unverified. */
  action: "install" | "verify";
  staging: StagingArea | null;
  /** This operation put the environment at its final path and has not verified it yet. */
  promoted: boolean;
  versions: Record<string, string>;
  failure: FlameoxError | null;
};

const now = () => new Date().toISOString();

export async function runCapabilitySetup(context: SetupRunContext): Promise<void> {
  const { recorder } = context;
  const work: Work[] = [];
  const alreadyAvailable: string[] = [];
  let operationArea: StagingArea | null = null;
  try {
    recorder.record((next) => {
      next.state = "running";
      addProgress(next, "validating_request", "Validating the requested providers", now());
    });
    planItems(context, work, alreadyAvailable);
    if (work.length > 0) {
      operationArea = context.environments.createStaging("setup", context.owner.operation_id.slice(3, 15), context.owner);
      await install(context, work, operationArea);
      stage(context, work);
      await verify(context, work, operationArea);
    }
    finish(context, work, alreadyAvailable);
  } catch (error) {
    await abandon(context, work, toFlameoxError(error));
  } finally {
    if (operationArea) context.environments.discard(operationArea);
  }
}

/** Splits the request into what is already there, what cannot be provided, and the work to do. */
function planItems(context: SetupRunContext, work: Work[], alreadyAvailable: string[]): void {
  for (const item of context.recorder.current().request.adapters) {
    const unavailable = unavailableProvider(item);
    const provider = managedProvider(item);
    if (unavailable || !provider) {
      const reason = unavailable?.reason ?? `No managed provider exists for ${item}.`;
      context.recorder.record((next) => setItem(next, item, { status: "unavailable", message: reason }));
      continue;
    }
    const label = context.environments.label(provider.name, provider.version);
    const installed = context.managed.installed(provider.name);
    // Only an `executable` provider's copy on PATH serves as is; a reduction engine is always the managed one.
    const onHost = provider.usage === "executable" && provider.executable ? findOnPath(provider.executable, context.pathValue) : null;
    if (installed || onHost) {
      alreadyAvailable.push(item);
      const message = installed
        ? `Already installed and verified (${label}).`
        : `${provider.executable} is already on PATH (host); nothing to install.`;
      context.recorder.record((next) =>
        setItem(next, item, { status: "complete", message, provider: installed ? label : null, version: provider.version }),
      );
      continue;
    }
    const action = context.managed.unverified(provider) ? "verify" : "install";
    work.push({ item, provider, action, staging: null, promoted: false, versions: {}, failure: null });
  }
}

function installerContext(context: SetupRunContext, scratch: string): InstallerContext {
  return { signal: context.signal, deadline: context.deadline, scratch, marker: context.owner.operation_id };
}

async function install(context: SetupRunContext, work: Work[], operationArea: StagingArea): Promise<void> {
  const installs = work.filter((entry) => entry.action === "install");
  if (installs.length === 0) return;
  context.recorder.record((next) => addProgress(next, "installing_packages", "Finding the interpreter to build environments with", now()));
  // One lookup per minimum Python; a provider whose Python is missing fails alone, with what it needs.
  const bases = new Map<string, Promise<BasePython>>();
  const baseFor = (provider: ManagedProvider) => {
    const key = provider.minimumPython?.join(".") ?? "any";
    if (!bases.has(key))
      bases.set(
        key,
        findBasePython(
          context.pathValue,
          installerContext(context, operationArea.scratch),
          provider.minimumPython,
          `The ${provider.name} provider`,
        ),
      );
    return bases.get(key)!;
  };
  for (const [index, entry] of installs.entries()) {
    const requirements = entry.provider.requirements.join(" ");
    context.recorder.record((next) => {
      addProgress(next, "installing_packages", `Installing ${requirements} (${index + 1} of ${installs.length})`, now());
      setItem(next, entry.item, { status: "running", message: `Installing ${requirements} from the package index` });
    });
    try {
      const base = await baseFor(entry.provider);
      entry.staging = context.environments.createStaging(entry.provider.name, entry.provider.version, context.owner);
      const installer = installerContext(context, entry.staging.scratch);
      await buildEnvironment(base, entry.staging.environment, entry.provider.requirements, installer);
      entry.versions = await checkVersions(entry.provider, entry.staging.environment, installer);
      context.environments.writeReceipt(entry.staging.environment, {
        schema_version: 1,
        provider: entry.provider.name,
        version: entry.provider.version,
        requirements: entry.provider.requirements,
        distributions: entry.versions,
        usage: entry.provider.usage,
        base_python: { executable: base.executable, version: base.version },
        installed_at: now(),
        operation_id: context.owner.operation_id,
        flameox_version: flameoxVersion,
        verification: null,
      });
    } catch (error) {
      failItem(context, entry, toFlameoxError(error));
    }
  }
}

/** Each complete environment appears at its final path in one rename; a concurrent setup's copy is kept instead of ours. */
function stage(context: SetupRunContext, work: Work[]): void {
  const ready = work.filter((entry) => entry.failure === null && entry.staging !== null);
  for (const entry of ready) {
    const label = context.environments.label(entry.provider.name, entry.provider.version);
    const outcome = context.environments.promote(entry.staging!, entry.provider.name, entry.provider.version);
    entry.promoted = outcome === "promoted";
    context.recorder.record((next) =>
      addProgress(
        next,
        "staging_providers",
        outcome === "promoted" ? `Staged ${label}` : `Another setup staged ${label} first; verifying that copy`,
        now(),
      ),
    );
  }
}

async function verify(context: SetupRunContext, work: Work[], operationArea: StagingArea): Promise<void> {
  for (const entry of work.filter((candidate) => candidate.failure === null)) {
    const { provider } = entry;
    const label = context.environments.label(provider.name, provider.version);
    context.recorder.record((next) => {
      addProgress(next, "verifying", `Verifying ${label}: ${provider.probe.what}`, now());
      setItem(next, entry.item, { status: "running", message: `Verifying: ${provider.probe.what}` });
    });
    const environment = context.environments.environmentPath(provider.name, provider.version);
    const scratch = entry.staging?.scratch ?? operationArea.scratch;
    try {
      const receipt = context.environments.receipt(provider.name, provider.version);
      if (!receipt) throw artifactIntegrityFailed(`${label} has no readable receipt.`, { details: { failure_category: "verification" } });
      const probe = await probeProvider(provider, environment, installerContext(context, scratch));
      context.environments.writeReceipt(environment, {
        ...receipt,
        verification: {
          verified_at: now(),
          version_output: probe.versionOutput,
          probe: probe.probe,
          permission_status: probe.permissionStatus,
        },
      });
      entry.promoted = false;
      const permission = probe.permissionStatus === "denied" ? " ptrace is refused here, so captures need that permission." : "";
      const usage =
        provider.usage === "workload_interpreter"
          ? ` Captures run it inside the workload's own interpreter, which must have ${provider.requirements.join(" ")} importable; this copy is not put on its path.`
          : "";
      context.recorder.record((next) =>
        setItem(next, entry.item, {
          status: "complete",
          message: `${entry.action === "install" ? "Installed and verified" : "Verified"} (${probe.probe}).${permission}${usage}`,
          provider: label,
          version: provider.version,
        }),
      );
    } catch (error) {
      const failure = toFlameoxError(error);
      if (failure.code === "PROCESS_CANCELLED") throw failure;
      // A copy that failed its probe must not be mistaken for a working one later.
      context.environments.withdraw(provider.name, provider.version);
      entry.promoted = false;
      failItem(context, entry, failure);
    }
  }
}

function failItem(context: SetupRunContext, entry: Work, failure: FlameoxError): void {
  if (failure.code === "PROCESS_CANCELLED") throw failure;
  entry.failure = failure;
  if (entry.staging) context.environments.discard(entry.staging);
  context.recorder.record((next) => setItem(next, entry.item, { status: "failed", message: failure.message.slice(0, 500) }));
}

function finish(context: SetupRunContext, work: Work[], alreadyAvailable: string[]): void {
  for (const entry of work) if (entry.staging) context.environments.discard(entry.staging);
  const firstFailure = work.find((entry) => entry.failure !== null);
  context.recorder.record((next) => {
    const incomplete = next.item_outcomes.filter((item) => item.status !== "complete");
    const installed = work.filter((entry) => entry.failure === null).map((entry) => entry.item);
    next.terminal_receipt = terminalReceipt(next, installed, alreadyAvailable);
    if (incomplete.length === 0) {
      next.state = "terminal";
      addProgress(next, "completed", "Setup complete; call list_capabilities", now());
      return;
    }
    next.state = "failed";
    const failure = firstFailure?.failure ?? null;
    next.failure_code = failure?.code ?? "CAPABILITY_UNAVAILABLE";
    next.failure_message = failure?.message ?? `Not available through managed setup: ${incomplete.map((item) => item.item).join(", ")}.`;
    next.failure_details = {
      phase: next.phase,
      failure_category: failureCategory(failure),
      adapter: firstFailure?.item ?? incomplete[0]?.item ?? null,
      next_tool: failure ? "start_capability_setup" : "list_capabilities",
      failure_detail: scrub(String(failure?.details.failure_detail ?? incomplete[0]?.message ?? "")).slice(0, 500),
    };
  });
}

/** Cancellation or an operation-wide failure: remove everything staged or promoted-but-unverified, and say whether that worked. */
async function abandon(context: SetupRunContext, work: Work[], failure: FlameoxError): Promise<void> {
  let clean = true;
  for (const entry of work) {
    if (entry.staging && !context.environments.discard(entry.staging)) clean = false;
    if (entry.promoted && !context.environments.withdraw(entry.provider.name, entry.provider.version)) clean = false;
  }
  const cancelled = failure.code === "PROCESS_CANCELLED";
  context.recorder.record((next) => {
    for (const item of next.item_outcomes)
      if (item.status === "pending" || item.status === "running")
        setItem(next, item.item, {
          status: cancelled ? "retryable" : "failed",
          message: cancelled ? "Cancelled before it finished." : failure.message.slice(0, 500),
        });
    next.state = cancelled ? "cancelled" : "failed";
    next.cleanup_status = clean ? "complete" : "incomplete";
    next.failure_code = failure.code;
    next.failure_message = failure.message;
    next.failure_details = {
      phase: next.phase,
      failure_category: failureCategory(failure),
      adapter: work.find((entry) => entry.failure === null && entry.staging !== null)?.item ?? null,
      next_tool: "start_capability_setup",
      failure_detail: scrub(String(failure.details.failure_detail ?? failure.message)).slice(0, 500),
    };
    addProgress(
      next,
      cancelled ? "cancelling" : next.phase,
      cancelled ? `Cancelled; cleanup ${clean ? "complete" : "incomplete"}` : `Failed: ${failure.message.slice(0, 200)}`,
      now(),
    );
  });
}

type Category = NonNullable<OperationStatus["failure_details"]>["failure_category"];

function failureCategory(failure: FlameoxError | null): Category {
  const category = failure?.details.failure_category;
  const known: Category[] = ["network", "filesystem", "verification", "cancelled", "timeout", "unsupported_platform", "process"];
  if (typeof category === "string" && (known as string[]).includes(category)) return category as Category;
  return failure ? "process" : "unsupported_platform";
}

/** Failure text reaches agents: the user's home and temp folders are named, not shown. */
function scrub(text: string): string {
  let out = text;
  for (const [root, name] of [
    [process.env.HOME, "~"],
    [process.env.TMPDIR ?? "/tmp", "$TMPDIR"],
  ] as const) {
    if (root && root.length > 1) out = out.replaceAll(root, name);
  }
  return out;
}
