/**
 * Release assets, all from one run:
 *   bun scripts/release.ts                 build every target (scripts/build.ts --all), then write
 *                                          dist/release/v<version>/: flameox-<target>[.exe], flameox-<target>.mcpb,
 *                                          SHA256SUMS; npm-launcher/checksums.json; server.json
 *   bun scripts/release.ts --skip-build    reuse dist/<target>/ from an earlier build
 *   bun scripts/release.ts --check         only check that every version source agrees (exit 1 if not)
 * package.json's version is the one version: npm-launcher/package.json and server.json are rewritten
 * to it, and the host binary must answer `--version` with it.
 *
 * Publish order (not done here): GitHub release with these assets first, then `npm publish` of
 * npm-launcher/ (its checksums.json points at those assets), then the MCP registry (server.json).
 */
import { createHash } from "node:crypto";
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { assetName, targets, type Target } from "../dist-targets/targets.ts";
import { writeFileAtomically } from "../src/store/atomic-file.ts";

export const serverName = "io.github.morluto/flameox";
export const serverSchema = "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json";
export const releaseBase = "https://github.com/morluto/flameox/releases/download";
const repositoryUrl = "https://github.com/morluto/flameox";

const root = resolve(import.meta.dir, "..");

function readJson<T>(path: string): T {
  return JSON.parse(readFileSync(path, "utf8")) as T;
}

function writeJson(path: string, value: unknown): void {
  writeFileAtomically(path, `${JSON.stringify(value, null, 2)}\n`);
}

function sha256(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}

export { assetName };

/** A store-only (no compression) zip: enough for an MCPB bundle, and byte-for-byte reproducible. */
export function storeZip(entries: Array<{ name: string; data: Uint8Array; mode?: number }>): Uint8Array {
  const chunks: Uint8Array[] = [];
  const central: Uint8Array[] = [];
  let offset = 0;
  const dosTime = 0;
  const dosDate = (1 << 5) | 1; // 1980-01-01: fixed, so the bundle's sha256 depends only on content
  for (const entry of entries) {
    const name = new TextEncoder().encode(entry.name);
    const crc = Bun.hash.crc32(entry.data) >>> 0;
    const local = new DataView(new ArrayBuffer(30));
    local.setUint32(0, 0x04034b50, true);
    local.setUint16(4, 20, true);
    local.setUint16(6, 0x0800, true); // UTF-8 names
    local.setUint16(8, 0, true); // stored
    local.setUint16(10, dosTime, true);
    local.setUint16(12, dosDate, true);
    local.setUint32(14, crc, true);
    local.setUint32(18, entry.data.byteLength, true);
    local.setUint32(22, entry.data.byteLength, true);
    local.setUint16(26, name.byteLength, true);
    local.setUint16(28, 0, true);
    chunks.push(new Uint8Array(local.buffer), name, entry.data);
    const header = new DataView(new ArrayBuffer(46));
    header.setUint32(0, 0x02014b50, true);
    header.setUint16(4, (3 << 8) | 20, true); // made by Unix, so the mode below is honoured
    header.setUint16(6, 20, true);
    header.setUint16(8, 0x0800, true);
    header.setUint16(10, 0, true);
    header.setUint16(12, dosTime, true);
    header.setUint16(14, dosDate, true);
    header.setUint32(16, crc, true);
    header.setUint32(20, entry.data.byteLength, true);
    header.setUint32(24, entry.data.byteLength, true);
    header.setUint16(28, name.byteLength, true);
    header.setUint32(38, (((entry.mode ?? 0o644) | 0o100000) << 16) >>> 0, true);
    header.setUint32(42, offset, true);
    central.push(new Uint8Array(header.buffer), name);
    offset += 30 + name.byteLength + entry.data.byteLength;
  }
  const centralSize = central.reduce((sum, chunk) => sum + chunk.byteLength, 0);
  const end = new DataView(new ArrayBuffer(22));
  end.setUint32(0, 0x06054b50, true);
  end.setUint16(8, entries.length, true);
  end.setUint16(10, entries.length, true);
  end.setUint32(12, centralSize, true);
  end.setUint32(16, offset, true);
  const all = [...chunks, ...central, new Uint8Array(end.buffer)];
  const out = new Uint8Array(all.reduce((sum, chunk) => sum + chunk.byteLength, 0));
  let cursor = 0;
  for (const chunk of all) {
    out.set(chunk, cursor);
    cursor += chunk.byteLength;
  }
  return out;
}

export function mcpbManifest(version: string, target: Pick<Target, "platform" | "executable">): Record<string, unknown> {
  const entry = `server/${target.executable}`;
  return {
    manifest_version: "0.2",
    name: "flameox",
    display_name: "flameox",
    version,
    description: "Runtime evidence for coding agents: profilers and test tools run, kept, normalized and queried.",
    author: { name: "morluto" },
    repository: { type: "git", url: repositoryUrl },
    server: {
      type: "binary",
      entry_point: entry,
      mcp_config: { command: `\${__dirname}/${entry}`, args: ["mcp", "serve", "--project-root", "."] },
    },
    compatibility: { platforms: [target.platform] },
  };
}

export function serverJson(version: string, bundles: Array<{ target: string; sha256: string }>): Record<string, unknown> {
  return {
    $schema: serverSchema,
    name: serverName,
    title: "flameox",
    description: "Runtime evidence for coding agents: profiles, traces, benchmarks and tests, kept and queried.",
    repository: { url: repositoryUrl, source: "github" },
    version,
    packages: bundles.map((bundle) => ({
      registryType: "mcpb",
      identifier: `${releaseBase}/v${version}/flameox-${bundle.target}.mcpb`,
      version,
      fileSha256: bundle.sha256,
      transport: { type: "stdio" },
    })),
  };
}

/** Every place the version lives; returns the disagreements (empty when in sync). */
export function versionProblems(repositoryRoot: string = root): string[] {
  const version = readJson<{ version: string }>(join(repositoryRoot, "package.json")).version;
  const problems: string[] = [];
  const launcher = readJson<{ version: string }>(join(repositoryRoot, "npm-launcher", "package.json")).version;
  if (launcher !== version) problems.push(`npm-launcher/package.json has ${launcher}, package.json has ${version}`);
  const checksums = readJson<{ version: string }>(join(repositoryRoot, "npm-launcher", "checksums.json")).version;
  if (checksums !== version) problems.push(`npm-launcher/checksums.json has ${checksums}, package.json has ${version}`);
  const server = readJson<{ version: string; packages?: Array<{ version?: string; identifier?: string }> }>(
    join(repositoryRoot, "server.json"),
  );
  if (server.version !== version) problems.push(`server.json has ${server.version}, package.json has ${version}`);
  for (const item of server.packages ?? []) {
    if (item.version !== version) problems.push(`server.json package ${item.identifier} has ${item.version}`);
    if (!item.identifier?.includes(`/v${version}/`)) problems.push(`server.json package ${item.identifier} does not point at v${version}`);
  }
  return problems;
}

async function release(): Promise<void> {
  const packageJson = readJson<{ version: string }>(join(root, "package.json"));
  const version = packageJson.version;
  if (process.argv.includes("--check")) {
    const problems = versionProblems();
    for (const problem of problems) console.error(problem);
    process.exit(problems.length ? 1 : 0);
  }
  const launcherPackagePath = join(root, "npm-launcher", "package.json");
  const launcherPackage = readJson<Record<string, unknown>>(launcherPackagePath);
  launcherPackage.version = version;
  writeJson(launcherPackagePath, launcherPackage);

  if (!process.argv.includes("--skip-build")) {
    const build = Bun.spawnSync([process.execPath, join(root, "scripts", "build.ts"), "--all"], {
      cwd: root,
      stdout: "inherit",
      stderr: "inherit",
    });
    if (build.exitCode !== 0) throw new Error("scripts/build.ts --all failed.");
  }
  const launcherBuild = Bun.spawnSync([process.execPath, join(root, "npm-launcher", "build.ts")], {
    cwd: root,
    stdout: "inherit",
    stderr: "inherit",
  });
  if (launcherBuild.exitCode !== 0) throw new Error("npm-launcher/build.ts failed.");

  const out = join(root, "dist", "release", `v${version}`);
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  const sums: string[] = [];
  const assets: Record<string, { name: string; sha256: string; size: number }> = {};
  const bundles: Array<{ target: string; sha256: string }> = [];
  for (const target of targets) {
    const built = join(root, "dist", target.id, target.executable);
    if (!existsSync(built)) throw new Error(`Missing ${built}; run without --skip-build.`);
    const name = assetName(target.id);
    copyFileSync(built, join(out, name));
    const bytes = new Uint8Array(readFileSync(built));
    const digest = sha256(bytes);
    assets[target.id] = { name, sha256: digest, size: statSync(built).size };
    sums.push(`${digest}  ${name}`);
    if (target.platform === process.platform && target.arch === process.arch) {
      const printed = Bun.spawnSync([built, "--version"]).stdout.toString().trim();
      if (printed !== version) throw new Error(`${built} --version printed ${JSON.stringify(printed)}, expected ${version}.`);
    }
    const bundle = storeZip([
      { name: "manifest.json", data: new TextEncoder().encode(`${JSON.stringify(mcpbManifest(version, target), null, 2)}\n`) },
      { name: `server/${target.executable}`, data: bytes, mode: 0o755 },
    ]);
    const bundleName = `flameox-${target.id}.mcpb`;
    writeFileSync(join(out, bundleName), bundle);
    const bundleDigest = sha256(bundle);
    sums.push(`${bundleDigest}  ${bundleName}`);
    bundles.push({ target: target.id, sha256: bundleDigest });
    console.error(`${name} ${digest}\n${bundleName} ${bundleDigest}`);
  }
  writeFileAtomically(join(out, "SHA256SUMS"), `${sums.join("\n")}\n`);
  writeJson(join(root, "npm-launcher", "checksums.json"), { schema_version: 1, version, assets });
  writeJson(join(root, "server.json"), serverJson(version, bundles));
  const problems = versionProblems();
  if (problems.length) throw new Error(`Versions disagree after release: ${problems.join("; ")}`);
  console.error(`release v${version} written to ${out}`);
}

if (import.meta.main) await release();
