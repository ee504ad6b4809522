/**
 * Which engine a reduction runs and the identity its plan binds: native_ddmin is flameox's own code
 * (its version is flameox's); shrinkray is the verified managed provider environment, bound by its
 * receipt, interpreter and executable, so a reinstalled, removed or changed copy is refused at execution.
 */
import { managedProvider } from "../adapters/providers/provider-catalog.ts";
import { digestOf } from "../domain/canonical-json.ts";
import { capabilityUnavailable, type FlameoxError } from "../domain/errors.ts";
import { type EngineProvider, nativeEngineVersion, type ReductionIntent } from "../domain/reductions.ts";
import type { PlanReductionInput } from "../domain/requests/reductions.ts";
import { executableDigest } from "../exec/executable.ts";
import { flameoxVersion } from "../version.ts";
import { setupAction } from "./capability-report.ts";
import type { ManagedInstall, ManagedProviders } from "./managed-providers.ts";

export type EngineBinding = { version: string; provider: EngineProvider | null };

/** What the engines need from the rest of flameox: the verified providers and a fresh setup key number. */
export type EngineContext = { managed: ManagedProviders; setupNumber: () => number };

export async function bindEngine(request: PlanReductionInput, context: EngineContext): Promise<EngineBinding> {
  if (request.engine === "native_ddmin") return { version: `${flameoxVersion}/${nativeEngineVersion}`, provider: null };
  const install = context.managed.installed("shrinkray");
  if (!install) throw shrinkrayNotInstalled(context.setupNumber());
  return { version: `${flameoxVersion}/shrinkray-${install.provider.version}`, provider: await providerIdentity(install) };
}

/** Why the bound engine can no longer run the plan, or null when it still can. */
export async function engineChange(intent: ReductionIntent, context: EngineContext): Promise<string | null> {
  if (intent.request.engine === "native_ddmin")
    return intent.engine_version === `${flameoxVersion}/${nativeEngineVersion}` ? null : "the reduction engine changed";
  const install = context.managed.installed("shrinkray");
  if (!install) return "the shrinkray provider is no longer installed and verified";
  try {
    const current = await providerIdentity(install);
    if (current.identity !== intent.engine_provider?.identity) return "the shrinkray provider changed (reinstalled or modified)";
  } catch {
    return "the shrinkray provider's files cannot be read";
  }
  return intent.engine_version === `${flameoxVersion}/shrinkray-${install.provider.version}` ? null : "the reduction engine changed";
}

async function providerIdentity(install: ManagedInstall): Promise<EngineProvider> {
  const identity = digestOf({
    receipt: install.receipt,
    python: await executableDigest(install.python),
    executable: install.executable ? await executableDigest(install.executable) : null,
  });
  return { label: install.label, python: install.python, identity };
}

/** The refusal whose recovery installs the provider: start_capability_setup with exactly the arguments that do it. */
function shrinkrayNotInstalled(setupNumber: number): FlameoxError {
  const provider = managedProvider("shrinkray")!;
  const action = setupAction(provider, setupNumber);
  return capabilityUnavailable(
    `The shrinkray engine runs ShrinkRay ${provider.version} from a managed provider environment (Python >= ${provider.minimumPython!.join(".")}), which is not installed. Install it with start_capability_setup, or plan with engine 'native_ddmin', which needs nothing.`,
    {
      details: {
        engine: "shrinkray",
        next_tool: "start_capability_setup",
        requirement: action.requirement,
        alternative_engine: "native_ddmin",
      },
      remediation: [
        "Call start_capability_setup with the recovery's arguments, poll get_capability_setup until it completes, then call plan_reduction again.",
        "Or plan the same reduction with engine 'native_ddmin'.",
      ],
      next: { tool: "start_capability_setup", arguments: action.arguments },
    },
  );
}
