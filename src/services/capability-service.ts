import { existsSync, readFileSync, statSync } from "node:fs";
import { basename } from "node:path";
import { bootId } from "../exec/identity.ts";
import { writeFileAtomically } from "../store/atomic-file.ts";
import { adapterDescriptors, capabilityDescriptor, capabilityDescriptors, type CapabilityDescriptor } from "../adapters/registry.ts";
import { managedProviders } from "../adapters/providers/provider-catalog.ts";
import type { OperationStatus } from "../domain/results/providers.ts";
import { type AdapterApprovalService, type ThirdPartyAdapter, thirdPartyLimitation } from "./adapter-approval-service.ts";
import { type CapabilityReport, findOnPath, passiveReport, resolveAdapterExecutable, thirdPartyReport } from "./capability-report.ts";
import type { ManagedProviders } from "./managed-providers.ts";
import { capabilityUnavailable, type FlameoxError } from "../domain/errors.ts";
import { captureAdapters } from "../adapters/capture-adapters.ts";
import { hasProbe } from "../adapters/capture-adapter.ts";
import { probeRunner } from "../adapters/command-runner.ts";
import type { WorkspaceHandle } from "../store/workspace-handle.ts";

export type CapabilityMode = "passive" | "active_cached" | "active_refresh";

export type { CapabilityReport } from "./capability-report.ts";

/** The newest setup operation of this workspace, short: poll it with get_capability_setup. */
export type LatestSetup = {
  operation_id: string;
  state: string;
  phase: string;
  adapters: string[];
  outcomes: Record<string, string>;
  updated_at: string;
  next_tool: "get_capability_setup";
};

/**
 * One adapter in the all-adapters listing: what decides whether to plan with it. The full report (options,
 * formats, limitations, setup) comes with list_capabilities(adapter=…), which keeps the default answer short.
 */
export type CapabilitySummary = Pick<
  CapabilityReport,
  "adapter" | "status" | "provisioning" | "executable" | "version" | "permission_status" | "features" | "probe_kind" | "probed_at"
> & { remedy: string | null };

export type CapabilityList<Row = CapabilityReport | CapabilitySummary> = {
  schema_version: 1;
  mode: CapabilityMode;
  /** "summary" rows when no adapter was named, the full report for a named one. */
  detail: "summary" | "full";
  capabilities: Row[];
  available_count: number;
  total: number;
  recommendation_scope: string | null;
  /** Scoped only: the managed providers start_capability_setup would install to make the adapter usable. */
  setup_adapters: string[];
  setup_third_party_adapters: { adapter: string; distribution: string }[];
  /** Every managed provider flameox can install here that is not installed yet. */
  available_setup_adapters: string[];
  available_setup_third_party_adapters: { adapter: string; distribution: string }[];
  latest_setup: LatestSetup | null;
  next_tool: "start_capability_setup" | "prepare_adapter" | null;
};

/** What list_capabilities reads of setup operations. */
export type SetupHistory = { latest(): OperationStatus | null; recordedCount(): number };

/** Active probe results live for the process; `active_refresh` reruns them. */
const activeCache = new Map<string, CapabilityReport>();

export class CapabilityService {
  constructor(
    private readonly workspace: WorkspaceHandle,
    private readonly managed: ManagedProviders,
    private readonly setups: SetupHistory,
    private readonly approvals: AdapterApprovalService,
  ) {}

  /** Executables are shown by name (never a host path); without `adapter`, each adapter is one summary row. */
  async list(request: { mode: CapabilityMode; adapter: string }): Promise<CapabilityList<CapabilityReport>>;
  async list(request: { mode: CapabilityMode; adapter: string | null }): Promise<CapabilityList>;
  async list(request: { mode: CapabilityMode; adapter: string | null }): Promise<CapabilityList> {
    let descriptors = capabilityDescriptors;
    if (request.adapter !== null) {
      const descriptor = capabilityDescriptor(request.adapter);
      descriptors = descriptor ? [descriptor] : [];
    }
    const capabilities: CapabilityReport[] = [];
    for (const descriptor of descriptors) {
      if (request.mode === "passive") capabilities.push(this.knownReport(descriptor));
      else capabilities.push(await this.activeReport(descriptor, request.mode === "active_refresh"));
    }
    const thirdParty = await this.thirdParty(request);
    capabilities.push(...thirdParty.map((adapter) => thirdPartyReport(adapter, thirdPartyLimitation)));
    const available = capabilities.filter((capability) => capability.status === "available").length;
    // Setup is recommended only for one chosen adapter; an inventory never tells an agent to install everything.
    const scoped = request.adapter === null ? [] : capabilities;
    const setupAdapters = scoped.flatMap((capability) =>
      capability.setup?.method === "start_capability_setup" ? [capability.setup.provider] : [],
    );
    const approvals = (reports: CapabilityReport[]) =>
      reports.flatMap((capability) =>
        capability.setup?.method === "prepare_adapter"
          ? [{ adapter: capability.setup.adapter, distribution: capability.setup.distribution }]
          : [],
      );
    const setupThirdParty = approvals(scoped);
    const shown = capabilities.map((capability) => ({
      ...capability,
      executable: capability.executable === null ? null : basename(capability.executable),
    }));
    return {
      schema_version: 1,
      mode: request.mode,
      detail: request.adapter === null ? "summary" : "full",
      capabilities: request.adapter === null ? shown.map(summaryOf) : shown,
      available_count: available,
      total: capabilities.length,
      recommendation_scope: request.adapter,
      setup_adapters: setupAdapters,
      setup_third_party_adapters: setupThirdParty,
      available_setup_adapters: managedProviders
        .filter((provider) => !this.managed.installed(provider.name))
        .map((provider) => provider.name),
      available_setup_third_party_adapters: approvals(capabilities),
      latest_setup: latestSetup(this.setups.latest()),
      next_tool: setupAdapters.length > 0 ? "start_capability_setup" : setupThirdParty.length > 0 ? "prepare_adapter" : null,
    };
  }

  /**
   * What is known without running anything: a recent active probe of the same executable (the one
   * plan_capture's preflight or an active list ran, kept in this process or the workspace), else the
   * passive file-system answer. Reading a cached probe is passive; nothing is executed.
   */
  knownReport(descriptor: CapabilityDescriptor): CapabilityReport {
    const current = this.adapterExecutable(descriptor).executable;
    const cached = activeCache.get(descriptor.name);
    if (cached && cached.executable === current) return cached;
    return this.persistedProbe(descriptor.name, current) ?? this.passive(descriptor);
  }

  /**
   * Third-party adapters: discovery runs an interpreter, so it happens in the active modes (and for a
   * name that is not built in); a passive inventory lists none. An unknown name is refused.
   */
  private async thirdParty(request: { mode: CapabilityMode; adapter: string | null }): Promise<ThirdPartyAdapter[]> {
    const builtIn = request.adapter !== null && capabilityDescriptor(request.adapter) !== undefined;
    if (builtIn || (request.adapter === null && request.mode === "passive")) return [];
    const found = (await this.approvals.discovered()).filter((adapter) => request.adapter === null || adapter.name === request.adapter);
    if (request.adapter !== null && found.length === 0) throw unknownAdapter(request.adapter);
    return found;
  }

  /** The passive report, with the verified managed environment of this adapter's provider when there is one. */
  passive(descriptor: CapabilityDescriptor): CapabilityReport {
    return passiveReport(descriptor, process.env.PATH ?? "", this.managed.forAdapter(descriptor.name), this.setups.recordedCount() + 1);
  }

  /** The interpreter of a verified managed provider that runs this adapter's tool standalone (pyperf), or null. */
  managedInterpreter(adapter: string): string | null {
    const managed = this.managed.forAdapter(adapter);
    return managed?.provider.usage === "interpreter" ? managed.python : null;
  }

  /** The adapter's own executable as a capture would run it: the host's first, else the managed copy. */
  adapterExecutable(descriptor: CapabilityDescriptor): { executable: string | null; source: "host" | "managed" | null } {
    return resolveAdapterExecutable(descriptor, process.env.PATH ?? "", this.managed.forAdapter(descriptor.name));
  }

  /** Runs the tool's version command and, where one is needed, a real permission check. */
  async activeReport(descriptor: CapabilityDescriptor, refresh: boolean): Promise<CapabilityReport> {
    const cached = activeCache.get(descriptor.name);
    // A cached answer is only good for the executable it probed; PATH may have changed since.
    const current = this.adapterExecutable(descriptor).executable;
    if (cached && !refresh && cached.executable === current) return cached;
    const persisted = refresh ? null : this.persistedProbe(descriptor.name, current);
    if (persisted) {
      activeCache.set(descriptor.name, persisted);
      return persisted;
    }
    const report = this.passive(descriptor);
    report.probe_kind = "active";
    report.setup_verification = "active";
    const adapter = captureAdapters.get(descriptor.name);
    if (
      this.managedInterpreter(descriptor.name) !== null ||
      this.managed.forAdapter(descriptor.name)?.provider.usage === "reduction_engine"
    ) {
      // A standalone managed tool (pyperf, shrinkray) was verified by setup's real probe; the workload's interpreter is not involved.
    } else if (adapter && hasProbe(adapter) && (report.executable || !descriptor.executable)) {
      // The adapter's own probe runs the tool for real (an interpreter with its module, a permission).
      const probe = await adapter.probe({
        workloadArgv: [],
        adapterExecutable: report.executable,
        pathValue: process.env.PATH ?? "",
        run: probeRunner(),
      });
      report.version = probe.version;
      report.status = probe.status;
      report.remediation = probe.remediation;
      report.limitations = [...descriptor.limitations, ...probe.limitations];
      if (descriptor.permissions.length > 0)
        report.permission_status = probe.status === "permission_required" ? "denied" : probe.status === "available" ? "granted" : "unknown";
    } else if (report.executable) {
      const version = await probeVersion(report.executable, descriptor.versionArguments);
      report.version = version.version;
      if (!version.ok) {
        report.status = "unavailable";
        report.remediation = [`${descriptor.executable} did not run: ${version.error}`, descriptor.installRemedy];
      } else if (descriptor.needsActivePermissionProbe) {
        const permission = await probePermission(descriptor, report.executable);
        report.permission_status = permission.granted ? "granted" : "denied";
        report.status = permission.granted ? "available" : "permission_required";
        report.remediation = permission.remediation;
      } else {
        report.status = "available";
      }
    }
    activeCache.set(descriptor.name, report);
    this.persistProbe(descriptor.name, report);
    return report;
  }

  /**
   * Active probes (a real py-spy or perf run) cost up to a second, so each CLI invocation reuses a
   * recent one from the workspace: same executable file, same boot, at most probeTtlMs old.
   */
  private persistedProbe(adapter: string, executable: string | null): CapabilityReport | null {
    const path = this.probeCachePath();
    if (!path || !existsSync(path)) return null;
    try {
      const entries = JSON.parse(readFileSync(path, "utf8")) as Record<string, PersistedProbe>;
      const entry = entries[adapter];
      if (!entry || entry.boot_id !== bootId() || entry.executable_identity !== executableIdentity(executable)) return null;
      if (Date.now() - Date.parse(entry.report.probed_at) > probeTtlMs) return null;
      return entry.report;
    } catch {
      return null;
    }
  }

  private persistProbe(adapter: string, report: CapabilityReport): void {
    const path = this.probeCachePath();
    if (!path) return;
    try {
      const entries = existsSync(path) ? (JSON.parse(readFileSync(path, "utf8")) as Record<string, PersistedProbe>) : {};
      entries[adapter] = { boot_id: bootId(), executable_identity: executableIdentity(report.executable), report };
      writeFileAtomically(path, `${JSON.stringify(entries, null, 2)}\n`);
    } catch {
      // The cache is an optimization; failing to write it never fails a probe.
    }
  }

  private probeCachePath(): string | null {
    return this.workspace.exists() ? this.workspace.open().path("tools", "capability-probes.json") : null;
  }
}

type PersistedProbe = { boot_id: string | null; executable_identity: string | null; report: CapabilityReport };

const probeTtlMs = 10 * 60 * 1000;

function executableIdentity(path: string | null): string | null {
  if (!path) return null;
  try {
    const stat = statSync(path);
    return `${path}:${stat.size}:${stat.mtimeMs}:${stat.ino}`;
  } catch {
    return null;
  }
}

export function unknownAdapter(name: string): FlameoxError {
  return capabilityUnavailable(`Unknown adapter '${name}'.`, {
    details: { adapter: name, allowed_adapters: adapterDescriptors.map((descriptor) => descriptor.name) },
    remediation: [
      `Choose one of: ${adapterDescriptors.map((descriptor) => descriptor.name).join(", ")}; third-party adapters are listed by list_capabilities(mode='active_refresh').`,
    ],
  });
}

async function probeVersion(
  executable: string,
  versionArguments: string[],
): Promise<{ ok: boolean; version: string | null; error: string }> {
  try {
    // Through the broker, so a probe gets the same scrubbed environment as a workload.
    const { stdout, stderr, exitCode } = await probeRunner()([executable, ...versionArguments], { timeoutMs: 10_000 });
    const text = `${stdout}\n${stderr}`;
    const version = /(\d+\.\d+(?:\.\d+)?(?:[-.+][0-9A-Za-z.]+)?)/.exec(text)?.[1] ?? null;
    return { ok: exitCode === 0, version, error: exitCode === 0 ? "" : `exit ${exitCode}` };
  } catch (error) {
    return { ok: false, version: null, error: error instanceof Error ? error.message : String(error) };
  }
}

/** py-spy needs ptrace of a child: try a real, tiny `py-spy record` of `sleep`. */
async function probePermission(descriptor: CapabilityDescriptor, executable: string): Promise<{ granted: boolean; remediation: string[] }> {
  if (descriptor.name === "py-spy") {
    const python = findOnPath("python3", process.env.PATH ?? "") ?? findOnPath("python", process.env.PATH ?? "");
    if (!python) return { granted: false, remediation: ["No python3 on PATH to check py-spy's ptrace permission against."] };
    const output = `${process.env.TMPDIR ?? "/tmp"}/flameox-probe-${process.pid}-${Date.now()}.json`;
    try {
      const { stderr, exitCode } = await probeRunner()(
        [
          executable,
          "record",
          "--nonblocking",
          "--duration",
          "1",
          "--rate",
          "50",
          "--format",
          "speedscope",
          "--output",
          output,
          "--",
          python,
          "-c",
          "import time; time.sleep(0.3)",
        ],
        { timeoutMs: 20_000 },
      );
      if (exitCode === 0) return { granted: true, remediation: [] };
      const denied = /permission|ptrace|Operation not permitted/i.test(stderr);
      return {
        granted: false,
        remediation: denied
          ? ["py-spy may not ptrace here: run as root, grant CAP_SYS_PTRACE, or set /proc/sys/kernel/yama/ptrace_scope to 0."]
          : [`py-spy failed its probe (exit ${exitCode}): ${stderr.trim().split("\n").slice(-1)[0] ?? ""}`],
      };
    } finally {
      await Bun.file(output)
        .delete()
        .catch(() => undefined);
    }
  }
  return { granted: true, remediation: [] };
}

function latestSetup(status: OperationStatus | null): LatestSetup | null {
  if (!status) return null;
  return {
    operation_id: status.operation_id,
    state: status.state,
    phase: status.phase,
    adapters: status.request.adapters,
    outcomes: Object.fromEntries(status.item_outcomes.map((item) => [item.item, item.status])),
    updated_at: status.updated_at,
    next_tool: "get_capability_setup",
  };
}

function summaryOf(report: CapabilityReport): CapabilitySummary {
  return {
    adapter: report.adapter,
    status: report.status,
    provisioning: report.provisioning,
    executable: report.executable,
    version: report.version,
    permission_status: report.permission_status,
    features: report.features,
    probe_kind: report.probe_kind,
    probed_at: report.probed_at,
    remedy: report.status === "available" ? null : (report.remediation[0] ?? null),
  };
}
