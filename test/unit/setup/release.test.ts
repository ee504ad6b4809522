/** Release metadata: one version everywhere, server.json in the registry's shape, MCPB zips that unzip. */
import { describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { mcpbManifest, serverJson, serverName, storeZip, versionProblems } from "../../../scripts/release.ts";

const root = resolve(import.meta.dir, "../../..");
const readJson = (path: string) => JSON.parse(readFileSync(join(root, path), "utf8"));

/** The checks of the registry's server.schema.json (2025-12-11) and official-registry rules we rely on. */
function registryShapeProblems(server: Record<string, any>): string[] {
  const problems: string[] = [];
  if (!/^https:\/\/static\.modelcontextprotocol\.io\/schemas\/\d{4}-\d{2}-\d{2}\/server\.schema\.json$/.test(server.$schema ?? ""))
    problems.push("$schema");
  if (typeof server.name !== "string" || !/^[a-zA-Z0-9.-]+\/[a-zA-Z0-9._-]+$/.test(server.name) || server.name.length > 200)
    problems.push("name");
  if (typeof server.description !== "string" || server.description.length < 1 || server.description.length > 100)
    problems.push("description");
  if (server.title !== undefined && (typeof server.title !== "string" || server.title.length > 100)) problems.push("title");
  if (typeof server.version !== "string" || !/^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/.test(server.version) || server.version.length > 255)
    problems.push("version");
  if (server.repository && (typeof server.repository.url !== "string" || typeof server.repository.source !== "string"))
    problems.push("repository");
  const allowed = new Set([
    "$schema",
    "name",
    "title",
    "description",
    "repository",
    "version",
    "websiteUrl",
    "icons",
    "packages",
    "remotes",
    "_meta",
  ]);
  for (const key of Object.keys(server)) if (!allowed.has(key)) problems.push(`unknown key ${key}`);
  for (const item of server.packages ?? []) {
    if (!["npm", "pypi", "oci", "nuget", "mcpb"].includes(item.registryType)) problems.push("registryType");
    if (typeof item.identifier !== "string" || item.identifier.length === 0) problems.push("identifier");
    if (item.transport?.type !== "stdio") problems.push("transport");
    if (item.registryType === "mcpb") {
      if (!/^[a-f0-9]{64}$/.test(item.fileSha256 ?? "")) problems.push("fileSha256");
      if (!/^https:\/\//.test(item.identifier) || !item.identifier.includes("mcp"))
        problems.push("mcpb identifier must be an https URL containing 'mcp'");
    }
    if (item.version !== undefined && (typeof item.version !== "string" || /^(latest|[~^<>=*])/.test(item.version)))
      problems.push("package version must be exact");
  }
  return problems;
}

describe("release metadata", () => {
  test("package.json, npm-launcher/package.json, its checksums.json and server.json carry one version", () => {
    expect(versionProblems(root)).toEqual([]);
  });

  test("the compiled binary's --version is package.json's version", () => {
    const version = readJson("package.json").version;
    expect(readFileSync(join(root, "scripts", "build.ts"), "utf8")).toContain("define: { FLAMEOX_VERSION: JSON.stringify(version) }");
    const binary = process.env.FLAMEOX_BINARY;
    if (binary) expect(Bun.spawnSync([binary, "--version"]).stdout.toString().trim()).toBe(version);
  });

  test("server.json (checked in, and as the release script writes it) has the registry's shape", () => {
    const checkedIn = readJson("server.json");
    expect(checkedIn.name).toBe(serverName);
    expect(registryShapeProblems(checkedIn)).toEqual([]);
    const generated = serverJson("1.2.3", [{ target: "linux-x64", sha256: "a".repeat(64) }]);
    expect(registryShapeProblems(generated)).toEqual([]);
    expect((generated.packages as Array<{ identifier: string }>)[0]!.identifier).toBe(
      "https://github.com/morluto/flameox/releases/download/v1.2.3/flameox-linux-x64.mcpb",
    );
    expect(registryShapeProblems({ ...generated, description: "x".repeat(101) })).toEqual(["description"]);
  });

  test("npm-launcher/package.json: bin flameox, Node >= 18, ships its checksum table", () => {
    const launcher = readJson("npm-launcher/package.json");
    expect(launcher.name).toBe("flameox");
    expect(launcher.bin).toEqual({ flameox: "dist/launcher.mjs" });
    expect(launcher.engines.node).toBe(">=18");
    expect(launcher.files).toContain("checksums.json");
    expect(launcher.dependencies).toBeUndefined();
  });

  test("an MCPB bundle is a valid zip holding the manifest and the executable", () => {
    const directory = mkdtempSync(join(tmpdir(), "flameox-mcpb-"));
    try {
      const target = { id: "linux-x64", platform: "linux", arch: "x64", executable: "flameox" };
      const manifest = mcpbManifest("1.2.3", target);
      const zip = storeZip([
        { name: "manifest.json", data: new TextEncoder().encode(JSON.stringify(manifest)) },
        { name: "server/flameox", data: new TextEncoder().encode("#!/bin/sh\necho hi\n"), mode: 0o755 },
      ]);
      writeFileSync(join(directory, "b.mcpb"), zip);
      const unzip = Bun.spawnSync([
        "python3",
        "-c",
        "import sys, zipfile; z = zipfile.ZipFile(sys.argv[1]); assert z.testzip() is None; z.extractall(sys.argv[2]); print(' '.join(z.namelist())); print(oct(z.getinfo('server/flameox').external_attr >> 16))",
        join(directory, "b.mcpb"),
        join(directory, "x"),
      ]);
      expect(unzip.exitCode, unzip.stderr.toString()).toBe(0);
      expect(unzip.stdout.toString()).toBe("manifest.json server/flameox\n0o100755\n");
      expect(JSON.parse(readFileSync(join(directory, "x", "manifest.json"), "utf8")).server.mcp_config.args).toEqual([
        "mcp",
        "serve",
        "--project-root",
        ".",
      ]);
      expect(statSync(join(directory, "x", "server", "flameox")).size).toBe(18);
      expect(storeZip([{ name: "a", data: new Uint8Array([1]) }])).toEqual(storeZip([{ name: "a", data: new Uint8Array([1]) }]));
    } finally {
      rmSync(directory, { recursive: true, force: true });
    }
  });
});
