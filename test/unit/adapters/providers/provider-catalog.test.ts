import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { managedProviders, unavailableProviders } from "../../../../src/adapters/providers/provider-catalog.ts";
import { capabilityDescriptors } from "../../../../src/adapters/registry.ts";
import { setupAdapterNames } from "../../../../src/domain/requests/providers.ts";

const repository = resolve(import.meta.dir, "../../../..");

test("every managed provider is pinned exactly as tools/python-requirements.txt pins the tools the adapters are tested with", () => {
  const pins = new Map(
    readFileSync(join(repository, "tools", "python-requirements.txt"), "utf8")
      .split("\n")
      .map((line) => line.trim())
      .filter((line) => line !== "" && !line.startsWith("#"))
      .map((line) => line.split("==") as [string, string]),
  );
  // ShrinkRay needs Python >= 3.12, newer than the tools venv's, so its pin lives in the catalog alone.
  for (const provider of managedProviders.filter((entry) => entry.usage !== "reduction_engine")) {
    for (const [name, version] of Object.entries(provider.distributions))
      expect({ name, version }).toEqual({ name, version: pins.get(name)! });
    expect(provider.version).toBe(provider.distributions[provider.requirements[0]!.split("==")[0]!]!);
  }
});

test("start_capability_setup accepts exactly the managed providers and the named unavailable ones, and each serves a real adapter", () => {
  expect<string[]>([...setupAdapterNames].sort()).toEqual([...managedProviders, ...unavailableProviders].map((entry) => entry.name).sort());
  const adapters = new Set(capabilityDescriptors.map((descriptor) => descriptor.name));
  for (const provider of managedProviders) for (const adapter of provider.adapters) expect(adapters.has(adapter)).toBe(true);
  // A standalone provider names what a capture runs from it; an in-interpreter one runs in the workload's own interpreter.
  for (const provider of managedProviders) {
    if (provider.usage === "executable" || provider.usage === "reduction_engine") expect(provider.executable).not.toBeNull();
    else expect(provider.module).not.toBeNull();
  }
});
