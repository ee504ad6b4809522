import { expect, test } from "bun:test";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, resolve } from "node:path";

const source = resolve(import.meta.dir, "../../src");

/** Which layers each layer may import (DESIGN §2): dependencies point inward. */
const allowed: Record<string, string[]> = {
  domain: ["domain"],
  config: ["domain", "config"],
  store: ["domain", "config", "store"],
  exec: ["domain", "exec"],
  adapters: ["domain", "exec", "adapters"],
  analysis: ["domain", "analysis"],
  services: ["domain", "config", "store", "exec", "adapters", "analysis", "services"],
  setup: ["domain", "config", "store", "exec", "setup"],
  mcp: ["domain", "services", "mcp"],
  cli: ["domain", "services", "setup", "cli", "mcp"],
};

const transportOnlyPackages = ["citty", "consola", "@clack/prompts", "@modelcontextprotocol/sdk"];

function files(folder: string): string[] {
  return readdirSync(folder).flatMap((name) => {
    const path = join(folder, name);
    return statSync(path).isDirectory() ? files(path) : path.endsWith(".ts") ? [path] : [];
  });
}

test("imports point inward and services never import transport libraries", () => {
  const violations: string[] = [];
  for (const file of files(source)) {
    const layer = relative(source, file).split("/")[0]!;
    if (!(layer in allowed)) continue;
    const text = readFileSync(file, "utf8");
    for (const match of text.matchAll(/(?:from|import)\s*\(?\s*["']([^"']+)["']/g)) {
      const specifier = match[1]!;
      if (specifier.startsWith(".")) {
        const target = relative(source, resolve(file, "..", specifier)).split("/")[0]!;
        if (target in allowed && !allowed[layer]!.includes(target)) violations.push(`${relative(source, file)} → ${specifier}`);
      } else if (["domain", "config", "store", "exec", "adapters", "analysis", "services"].includes(layer)) {
        if (transportOnlyPackages.some((name) => specifier === name || specifier.startsWith(`${name}/`))) {
          violations.push(`${relative(source, file)} → ${specifier}`);
        }
      }
    }
  }
  expect(violations).toEqual([]);
});
