import { existsSync } from "node:fs";
import { type ManagedProvider, managedProvider, providerForAdapter } from "../adapters/providers/provider-catalog.ts";
import { environmentProgram, environmentPython } from "../adapters/providers/provider-installer.ts";
import type { ProviderEnvironments, ProviderReceipt } from "../store/provider-environments.ts";

/** A verified managed provider environment, as capture planning and capability discovery use it. */
export type ManagedInstall = {
  provider: ManagedProvider;
  /** `providers/<name>/<version>`: how agents see it. */
  label: string;
  environment: string;
  python: string;
  /** The standalone executable, for `executable` providers. */
  executable: string | null;
  receipt: ProviderReceipt;
};

/**
 * Reads what setup installed. Only the pinned version counts, and only once its receipt records a
 * passed verification with the pinned distribution versions: a folder without one is never used.
 */
export class ManagedProviders {
  constructor(readonly environments: ProviderEnvironments) {}

  installed(name: string): ManagedInstall | null {
    const provider = managedProvider(name);
    return provider ? this.verified(provider) : null;
  }

  forAdapter(adapter: string): ManagedInstall | null {
    const provider = providerForAdapter(adapter);
    return provider ? this.verified(provider) : null;
  }

  /** A complete environment at the pinned version that no probe has passed yet (its setup ended early). */
  unverified(provider: ManagedProvider): boolean {
    const receipt = this.environments.receipt(provider.name, provider.version);
    return receipt !== null && receipt.verification === null;
  }

  private verified(provider: ManagedProvider): ManagedInstall | null {
    const receipt = this.environments.receipt(provider.name, provider.version);
    if (!receipt?.verification) return null;
    const pinsHold = Object.entries(provider.distributions).every(([name, version]) => receipt.distributions[name] === version);
    if (!pinsHold) return null;
    const environment = this.environments.environmentPath(provider.name, provider.version);
    const executable = provider.executable ? environmentProgram(environment, provider.executable) : null;
    const python = environmentPython(environment);
    if ((executable && !existsSync(executable)) || !existsSync(python)) return null;
    return { provider, label: this.environments.label(provider.name, provider.version), environment, python, executable, receipt };
  }
}
