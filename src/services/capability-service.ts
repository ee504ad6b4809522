import { accessSync, constants, existsSync, readFileSync, statSync } from "node:fs";
import { bootId } from "../exec/identity.ts";
import { writeFileAtomically } from "../store/atomic-file.ts";
import { delimiter, join } from "node:path";
import { adapterDescriptor, adapterDescriptors, type AdapterDescriptor } from "../adapters/registry.ts";
import { capabilityUnavailable, type FlameoxError } from "../domain/errors.ts";
import { captureAdapters } from "../adapters/capture-adapters.ts";
import { hasProbe } from "../adapters/capture-adapter.ts";
import { probeRunner } from "../adapters/adapter-support.ts";
import type { WorkspaceHandle } from "../store/workspace-handle.ts";

export type CapabilityMode = "passive" | "active_cached" | "active_refresh";

export type CapabilityReport = {
  adapter: string;
  summary: string;
  status: "available" | "unavailable" | "permission_required" | "degraded" | "unknown";
  provisioning: string;
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
  /** flameox never installs providers: the remedy names the exact install command instead. */
  setup: null;
  setup_verification: "not_required" | "passive" | "active";
};

export type CapabilityList = {
  schema_version: 1;
  mode: CapabilityMode;
  capabilities: CapabilityReport[];
  available_count: number;
  total: number;
  recommendation_scope: string | null;
  setup_adapters: string[];
  setup_third_party_adapters: string[];
  available_setup_adapters: string[];
  available_setup_third_party_adapters: string[];
  latest_setup: null;
  next_tool: string | null;
};

/** Active probe results live for the process; `active_refresh` reruns them. */
const activeCache = new Map<string, CapabilityReport>();

export class CapabilityService {
  constructor(private readonly workspace: WorkspaceHandle) {}

  async list(request: { mode: CapabilityMode; adapter: string | null }): Promise<CapabilityList> {
    let descriptors = adapterDescriptors;
    if (request.adapter !== null) {
      const descriptor = adapterDescriptor(request.adapter);
      if (!descriptor) throw unknownAdapter(request.adapter);
      descriptors = [descriptor];
    }
    const capabilities: CapabilityReport[] = [];
    for (const descriptor of descriptors) {
      if (request.mode === "passive") capabilities.push(this.knownReport(descriptor));
      else capabilities.push(await this.activeReport(descriptor, request.mode === "active_refresh"));
    }
    const available = capabilities.filter((capability) => capability.status === "available").length;
    return {
      schema_version: 1,
      mode: request.mode,
      capabilities,
      available_count: available,
      total: capabilities.length,
      recommendation_scope: request.adapter,
      // flameox installs no providers itself: a missing tool is installed by the person, per its remedy.
      setup_adapters: [],
      setup_third_party_adapters: [],
      available_setup_adapters: [],
      available_setup_third_party_adapters: [],
      latest_setup: null,
      next_tool: null,
    };
  }

  /**
   * What is known without running anything: a recent active probe of the same executable (the one
   * plan_capture's preflight or an active list ran, kept in this process or the workspace), else the
   * passive file-system answer. Reading a cached probe is passive; nothing is executed.
   */
  knownReport(descriptor: AdapterDescriptor): CapabilityReport {
    const current = descriptor.executable ? findOnPath(descriptor.executable, process.env.PATH ?? "") : null;
    const cached = activeCache.get(descriptor.name);
    if (cached && cached.executable === current) return cached;
    return this.persistedProbe(descriptor.name, current) ?? passiveReport(descriptor, process.env.PATH ?? "");
  }

  /** Runs the tool's version command and, where one is needed, a real permission check. */
  async activeReport(descriptor: AdapterDescriptor, refresh: boolean): Promise<CapabilityReport> {
    const cached = activeCache.get(descriptor.name);
    // A cached answer is only good for the executable it probed; PATH may have changed since.
    const current = descriptor.executable ? findOnPath(descriptor.executable, process.env.PATH ?? "") : null;
    if (cached && !refresh && cached.executable === current) return cached;
    const persisted = refresh ? null : this.persistedProbe(descriptor.name, current);
    if (persisted) {
      activeCache.set(descriptor.name, persisted);
      return persisted;
    }
    const report = passiveReport(descriptor, process.env.PATH ?? "");
    report.probe_kind = "active";
    report.setup_verification = "active";
    const adapter = captureAdapters.get(descriptor.name);
    if (adapter && hasProbe(adapter) && (report.executable || !descriptor.executable)) {
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
    remediation: [`Choose one of: ${adapterDescriptors.map((descriptor) => descriptor.name).join(", ")}.`],
  });
}

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

/** Passive discovery looks at the file system only: nothing project-controlled is executed. */
export function passiveReport(descriptor: AdapterDescriptor, pathValue: string): CapabilityReport {
  const executable = descriptor.executable ? findOnPath(descriptor.executable, pathValue) : null;
  const missing = descriptor.executable !== null && executable === null;
  // A Python-module tool is only known by asking the interpreter; passive discovery cannot say.
  const needsInterpreter = descriptor.executable === null && descriptor.provisioning !== "bundled" && descriptor.name !== "command";
  return {
    adapter: descriptor.name,
    summary: descriptor.summary,
    status: missing ? "unavailable" : descriptor.needsActivePermissionProbe || needsInterpreter ? "unknown" : "available",
    provisioning: descriptor.provisioning,
    executable,
    version: null,
    supported_modes: descriptor.supportedModes,
    supported_formats: descriptor.supportedFormats,
    artifact_kinds: descriptor.artifactKinds,
    platform: process.platform,
    architecture: process.arch,
    permissions: descriptor.permissions,
    permission_status: descriptor.permissions.length === 0 ? "not_required" : "unknown",
    features: descriptor.features,
    limitations: descriptor.limitations,
    // Nothing here needs a separate probe before planning: plan_capture's default preflight runs it.
    remediation: missing
      ? [`${descriptor.executable} was not found on PATH. ${descriptor.installRemedy}`]
      : descriptor.needsActivePermissionProbe
        ? [
            `Plan it directly: plan_capture (preflight_mode='auto', the default) checks the ${descriptor.permissions.join(", ")} permission before anything runs. list_capabilities(mode='active_refresh', adapter='${descriptor.name}') checks it without planning.`,
          ]
        : needsInterpreter
          ? [
              `Plan it directly: plan_capture asks the workload's own interpreter for the module before anything runs. If it is missing: ${descriptor.installRemedy}`,
            ]
          : [],
    options: descriptor.options,
    probe_kind: "passive",
    probed_at: new Date().toISOString(),
    import_location: null,
    restrictions: [],
    setup: null,
    setup_verification: "passive",
  };
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
async function probePermission(descriptor: AdapterDescriptor, executable: string): Promise<{ granted: boolean; remediation: string[] }> {
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
