/**
 * One adapter's capability report as passive discovery sees it: the file system only (PATH and the
 * verified managed provider environments), nothing project-controlled executed. Active probes refine
 * it (capability-service.ts).
 */
import { accessSync, constants, statSync } from "node:fs";
import { delimiter, join } from "node:path";
import type { CapabilityDescriptor } from "../adapters/registry.ts";
import { type ManagedProvider, providerForAdapter } from "../adapters/providers/provider-catalog.ts";
import type { ThirdPartyAdapter } from "./adapter-approval-service.ts";
import type { ManagedInstall } from "./managed-providers.ts";

export type Provisioning = "bundled" | "host" | "managed_runtime" | "third_party_approval" | "unsupported";

/** A managed setup action: exactly what to call to install the provider an adapter lacks. */
export type CapabilitySetupAction = {
  method: "start_capability_setup";
  provider: string;
  requirement: string;
  next_tool: "start_capability_setup";
  arguments: { adapters: string[]; idempotency_key: string };
  verification_tool: "list_capabilities";
};

/** A third-party adapter's approval action (prepare_adapter). */
export type AdapterSetupAction = {
  method: "prepare_adapter";
  adapter: string;
  distribution: string;
  package_identity: string;
  next_tool: "prepare_adapter";
  arguments: { adapter: string; distribution: string };
  verification_tool: "list_capabilities";
};

export type CapabilityReport = {
  adapter: string;
  summary: string;
  status: "available" | "unavailable" | "permission_required" | "degraded" | "unknown";
  provisioning: Provisioning;
  executable: string | null;
  version: string | null;
  supported_modes: string[];
  supported_formats: string[];
  artifact_kinds: string[];
  platform: string;
  architecture: string;
  permissions: string[];
  permission_status: "not_required" | "unknown" | "granted" | "denied";
  features: string[];
  limitations: string[];
  remediation: string[];
  options: Record<string, string>;
  probe_kind: "passive" | "active";
  probed_at: string;
  /** No adapter is imported into flameox; kept for the contract's field set. */
  import_location: null;
  restrictions: string[];
  /** The verified managed provider environment this adapter uses or offers (`providers/<name>/<version>`), if any. */
  managed_provider: string | null;
  setup: CapabilitySetupAction | AdapterSetupAction | null;
  setup_verification: "not_required" | "pending" | "passive" | "active";
};

export function findOnPath(name: string, pathValue: string): string | null {
  for (const directory of pathValue.split(delimiter)) {
    if (!directory) continue;
    const candidate = join(directory, name);
    try {
      if (!statSync(candidate).isFile()) continue;
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // Not here; keep looking along PATH.
    }
  }
  return null;
}

/** Where the adapter's own executable comes from: the host's PATH first, then a verified managed environment. */
export function resolveAdapterExecutable(
  descriptor: CapabilityDescriptor,
  pathValue: string,
  managed: ManagedInstall | null,
): { executable: string | null; source: "host" | "managed" | null } {
  if (!descriptor.executable) return { executable: null, source: null };
  // A managed-only capability (a reduction engine) never takes a copy from PATH.
  const host = descriptor.provisioning === "managed_runtime" ? null : findOnPath(descriptor.executable, pathValue);
  if (host) return { executable: host, source: "host" };
  if (managed?.executable) return { executable: managed.executable, source: "managed" };
  return { executable: null, source: null };
}

/** A managed provider makes this adapter usable only when the capture runs the provider's own copy. */
export function setupMakesUsable(provider: ManagedProvider | undefined): provider is ManagedProvider {
  return provider !== undefined && provider.usage !== "workload_interpreter";
}

/** The setup action for an adapter whose usable provider is missing; `setupNumber` keeps each suggested key new. */
export function setupAction(provider: ManagedProvider, setupNumber: number): CapabilitySetupAction {
  return {
    method: "start_capability_setup",
    provider: provider.name,
    requirement: provider.requirements.join(" "),
    next_tool: "start_capability_setup",
    arguments: { adapters: [provider.name], idempotency_key: `setup-${provider.name}-${provider.version}-${setupNumber}` },
    verification_tool: "list_capabilities",
  };
}

/** Passive discovery: PATH and the managed environments only; nothing project-controlled is executed. */
export function passiveReport(
  descriptor: CapabilityDescriptor,
  pathValue: string,
  managed: ManagedInstall | null = null,
  setupNumber = 1,
): CapabilityReport {
  const provider = providerForAdapter(descriptor.name);
  const resolved = resolveAdapterExecutable(descriptor, pathValue, managed);
  const missing = descriptor.executable !== null && resolved.executable === null;
  // A managed interpreter tool (pyperf) runs from its own environment: no workload interpreter needs asking.
  const managedInterpreter = managed !== null && managed.provider.usage === "interpreter";
  const needsInterpreter =
    descriptor.executable === null && descriptor.provisioning !== "bundled" && descriptor.name !== "command" && !managedInterpreter;
  const usesManaged = resolved.source === "managed" || managedInterpreter;
  const offered = missing || needsInterpreter ? setupMakesUsable(provider) && managed === null : false;
  const report: CapabilityReport = {
    adapter: descriptor.name,
    summary: descriptor.summary,
    status: missing ? "unavailable" : descriptor.needsActivePermissionProbe || needsInterpreter ? "unknown" : "available",
    provisioning: resolved.source === "host" ? "host" : usesManaged || offered ? "managed_runtime" : descriptor.provisioning,
    executable: resolved.executable,
    version: usesManaged ? managed!.provider.version : null,
    supported_modes: descriptor.supportedModes,
    supported_formats: descriptor.supportedFormats,
    artifact_kinds: descriptor.artifactKinds,
    platform: process.platform,
    architecture: process.arch,
    permissions: descriptor.permissions,
    permission_status: descriptor.permissions.length === 0 ? "not_required" : "unknown",
    features: descriptor.features,
    limitations: [...descriptor.limitations, ...workloadInterpreterNote(provider, managed)],
    remediation: remediation(descriptor, { missing, needsInterpreter, offered, provider }),
    options: descriptor.options,
    probe_kind: "passive",
    probed_at: new Date().toISOString(),
    import_location: null,
    restrictions: [],
    managed_provider: managed?.label ?? null,
    setup: offered && provider ? setupAction(provider, setupNumber) : null,
    setup_verification: descriptor.provisioning === "bundled" ? "not_required" : offered ? "pending" : "passive",
  };
  if (usesManaged) applyManagedVerification(report, managed!);
  return report;
}

/** Setup's real probe is the verification of a managed copy: its outcome (ptrace granted or refused) is reported as such. */
function applyManagedVerification(report: CapabilityReport, managed: ManagedInstall): void {
  const verification = managed.receipt.verification!;
  report.setup_verification = "active";
  report.probed_at = verification.verified_at;
  if (verification.permission_status === "denied") {
    report.status = "permission_required";
    report.permission_status = "denied";
    report.remediation = ["py-spy may not ptrace here: run as root, grant CAP_SYS_PTRACE, or set /proc/sys/kernel/yama/ptrace_scope to 0."];
    return;
  }
  report.status = "available";
  if (verification.permission_status === "granted") report.permission_status = "granted";
  report.remediation = [];
  report.limitations.push(`Uses the managed provider ${managed.label}, verified by ${verification.probe}.`);
}

function workloadInterpreterNote(provider: ManagedProvider | undefined, managed: ManagedInstall | null): string[] {
  if (provider?.usage !== "workload_interpreter") return [];
  const needs = `Runs inside the workload's own interpreter, which must have ${provider.requirements.join(" ")} importable; flameox never changes that environment or its import path.`;
  return managed ? [`${needs} The managed copy ${managed.label} is verified but is not used by captures.`] : [needs];
}

/** Nothing here needs a separate probe before planning: plan_capture's default preflight runs it. */
function remediation(
  descriptor: CapabilityDescriptor,
  facts: { missing: boolean; needsInterpreter: boolean; offered: boolean; provider: ManagedProvider | undefined },
): string[] {
  const setup =
    facts.offered && facts.provider
      ? ` Call start_capability_setup with this report's setup.arguments to install a verified managed copy, or: `
      : " ";
  if (facts.missing && descriptor.provisioning === "managed_runtime")
    return [`${descriptor.name} is not installed as a managed provider.${setup}${descriptor.installRemedy}`];
  if (facts.missing) return [`${descriptor.executable} was not found on PATH.${setup}${descriptor.installRemedy}`];
  if (descriptor.needsActivePermissionProbe)
    return [
      `Plan it directly: plan_capture (preflight_mode='auto', the default) checks the ${descriptor.permissions.join(", ")} permission before anything runs. list_capabilities(mode='active_refresh', adapter='${descriptor.name}') checks it without planning.`,
    ];
  if (facts.needsInterpreter)
    return [
      `Plan it directly: plan_capture asks the workload's own interpreter for the module before anything runs. If it is missing:${setup}${descriptor.installRemedy}`,
    ];
  return [];
}

/** A third-party adapter as discovery found it: approved, or with the exact prepare_adapter call that approves it. */
export function thirdPartyReport(adapter: ThirdPartyAdapter, limitation: string): CapabilityReport {
  const pending = adapter.approval === "not_approved" || adapter.approval === "invalidated";
  const remediation =
    adapter.approval === "unverifiable"
      ? [`The files of ${adapter.distribution} cannot all be read, so it cannot be approved; reinstall it.`]
      : pending
        ? [
            `${adapter.approval === "invalidated" ? "Its approval lapsed (version or files changed). " : ""}Call prepare_adapter with this report's setup.arguments to approve ${adapter.distribution} ${adapter.version}.`,
          ]
        : [];
  return {
    adapter: adapter.name,
    summary: `Third-party adapter ${adapter.value} from ${adapter.distribution} ${adapter.version}.`,
    status: "unavailable",
    provisioning: "third_party_approval",
    executable: null,
    version: adapter.version,
    supported_modes: [],
    supported_formats: [],
    artifact_kinds: [],
    platform: process.platform,
    architecture: process.arch,
    permissions: [],
    permission_status: "not_required",
    features: [],
    limitations: [limitation],
    remediation,
    options: {},
    probe_kind: "active",
    probed_at: new Date().toISOString(),
    import_location: null,
    restrictions: [],
    managed_provider: null,
    setup:
      pending && adapter.package_identity
        ? {
            method: "prepare_adapter",
            adapter: adapter.name,
            distribution: adapter.distribution,
            package_identity: adapter.package_identity,
            next_tool: "prepare_adapter",
            arguments: { adapter: adapter.name, distribution: adapter.distribution },
            verification_tool: "list_capabilities",
          }
        : null,
    setup_verification: adapter.approval === "approved" ? "active" : "pending",
  };
}
