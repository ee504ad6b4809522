import { probeRunner } from "../adapters/command-runner.ts";
import {
  type AdapterEntryPoint,
  adapterEntryPointGroup,
  discoverAdapterEntryPoints,
  normalizedDistribution,
  readPackageFiles,
  verifiable,
} from "../adapters/providers/third-party-adapters.ts";
import { digestOf } from "../domain/canonical-json.ts";
import { artifactIntegrityFailed, capabilityUnavailable, processFailed, toFlameoxError } from "../domain/errors.ts";
import type { AdapterPreparationResult } from "../domain/results/providers.ts";
import { resolveExecutable } from "../exec/executable.ts";
import { type AdapterApproval, readAdapterApprovals, writeAdapterApprovals } from "../store/adapter-approvals.ts";
import type { WorkspaceHandle } from "../store/workspace-handle.ts";
import { withWorkspaceLock } from "../store/workspace-lock.ts";

/** A discovered third-party adapter with its approval as it stands now. */
export type ThirdPartyAdapter = AdapterEntryPoint & {
  package_identity: string | null;
  approval: "approved" | "not_approved" | "invalidated" | "unverifiable";
};

const runsNothing =
  "This flameox release discovers and approves third-party adapters but runs only its built-in adapters; an approved one cannot be planned yet.";

/**
 * prepare_adapter: approval of an installed third-party adapter, bound to the exact identity of its
 * distribution (name, version, every recorded file's bytes on disk). It never installs the package,
 * imports its code or runs a workload. Discovery asks python3 on the server's PATH, reading metadata only.
 */
export class AdapterApprovalService {
  constructor(private readonly workspace: WorkspaceHandle) {}

  async prepare(request: { adapter: string; distribution: string }): Promise<AdapterPreparationResult> {
    const workspace = this.workspace.open();
    const python = discoveryPython();
    const entryPoints = await this.discover(python);
    const wanted = normalizedDistribution(request.distribution);
    const entry = entryPoints.find(
      (candidate) => candidate.name === request.adapter && normalizedDistribution(candidate.distribution) === wanted,
    );
    if (!entry) {
      throw capabilityUnavailable(
        `No installed distribution '${request.distribution}' provides adapter '${request.adapter}' (${adapterEntryPointGroup}).`,
        {
          details: {
            adapter: request.adapter,
            distribution: request.distribution,
            discovered: entryPoints.slice(0, 20),
            next_tool: "list_capabilities",
          },
          remediation: ["Call list_capabilities(mode='active_refresh') and pass an adapter/distribution pair it reports."],
          next: { tool: "list_capabilities", arguments: { mode: "active_refresh" } },
        },
      );
    }
    const identity = await this.identity(python, entry.distribution);
    if (identity === null) {
      throw artifactIntegrityFailed(
        `The files of '${entry.distribution}' cannot all be read, so its identity cannot be fixed for an approval.`,
        {
          details: { distribution: entry.distribution, next_tool: "list_capabilities" },
          remediation: ["Reinstall the distribution so every file its RECORD lists is readable, then call prepare_adapter again."],
          next: { tool: "list_capabilities", arguments: { mode: "active_refresh" } },
        },
      );
    }
    const key = normalizedDistribution(entry.distribution);
    const action = await withWorkspaceLock(workspace, async () => {
      const approvals = readAdapterApprovals(workspace);
      const previous = approvals.approvals[key];
      const unchanged = previous?.package_identity === identity && previous.version === entry.version;
      const adapters = [...new Set([...(unchanged ? previous.adapters : []), entry.name])].sort();
      approvals.approvals[key] = {
        schema_version: 1,
        distribution: entry.distribution,
        version: entry.version,
        package_identity: identity,
        adapters,
        provenance: "agent",
        approved_at: unchanged ? previous.approved_at : new Date().toISOString(),
      };
      writeAdapterApprovals(workspace, approvals);
      return unchanged && previous.adapters.includes(entry.name) ? "unchanged" : previous ? "replaced" : "approved";
    });
    return {
      schema_version: 1,
      adapter: entry.name,
      distribution: entry.distribution,
      version: entry.version,
      package_identity: identity,
      action,
      provenance: "agent",
      approvals_path: ".diagnostics/adapter-approvals.json",
      interpreter: python.split("/").pop() ?? "python3",
      limitations: [runsNothing, "The approval lapses when the distribution's version or any of its files change."],
      workload_executed: false,
      next_tool: "list_capabilities",
    };
  }

  /** Every discovered third-party adapter with its approval checked against the package as installed now. */
  async discovered(): Promise<ThirdPartyAdapter[]> {
    const python = discoveryPython();
    const entryPoints = await this.discover(python);
    const approvals = this.workspace.exists() ? readAdapterApprovals(this.workspace.open()).approvals : {};
    const identities = new Map<string, string | null>();
    const adapters: ThirdPartyAdapter[] = [];
    for (const entry of entryPoints) {
      const key = normalizedDistribution(entry.distribution);
      if (!identities.has(key)) identities.set(key, await this.identity(python, entry.distribution));
      const identity = identities.get(key) ?? null;
      const approval: AdapterApproval | undefined = approvals[key];
      adapters.push({
        ...entry,
        package_identity: identity,
        approval:
          identity === null
            ? "unverifiable"
            : !approval
              ? "not_approved"
              : approval.package_identity === identity && approval.version === entry.version && approval.adapters.includes(entry.name)
                ? "approved"
                : "invalidated",
      });
    }
    return adapters;
  }

  private async discover(python: string): Promise<AdapterEntryPoint[]> {
    try {
      return await discoverAdapterEntryPoints(python, probeRunner());
    } catch (error) {
      throw processFailed(`Third-party adapter discovery failed: ${toFlameoxError(error).message}`, {
        details: { next_tool: "list_capabilities" },
        remediation: ["Check that python3 on PATH starts, then call list_capabilities again."],
        next: { tool: "list_capabilities" },
      });
    }
  }

  /** `sha256:` over name, version and every recorded file as it is on disk; null when that cannot be known. */
  private async identity(python: string, distribution: string): Promise<string | null> {
    // A distribution removed or broken between discovery and hashing cannot be vouched for: unverifiable.
    const files = await readPackageFiles(python, distribution, probeRunner()).catch(() => null);
    if (!files || !verifiable(files)) return null;
    return digestOf({
      distribution: normalizedDistribution(files.distribution),
      version: files.version,
      files: [...files.files].sort((left, right) => (left.path < right.path ? -1 : left.path > right.path ? 1 : 0)),
    });
  }
}

export const thirdPartyLimitation = runsNothing;

function discoveryPython(): string {
  for (const name of ["python3", "python"]) {
    try {
      return resolveExecutable(name, process.env.PATH ?? "");
    } catch {
      // Try the next name.
    }
  }
  throw capabilityUnavailable("No python3 on PATH to discover third-party adapters with.", {
    remediation: ["Put the Python 3 that has the adapter's distribution installed first on PATH, then call list_capabilities again."],
  });
}
