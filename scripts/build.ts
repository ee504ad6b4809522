/**
 * Builds the self-contained flameox executable.
 *   bun scripts/build.ts            → dist/flameox for this machine
 *   bun scripts/build.ts --all      → dist/<target>/flameox[.exe] for every target in dist-targets/
 * DuckDB's platform binding is embedded as files and loaded from a verified user cache at run time
 * (src/store/duckdb-embedded.ts); the bindings package, which requires every platform's addon, is
 * replaced by a generated module that names exactly one.
 */
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, rmSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import type { BunPlugin } from "bun";
import { targets, type Target } from "../dist-targets/targets.ts";

const root = resolve(import.meta.dir, "..");
const packageJson = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as {
  version: string;
  dependencies: Record<string, string>;
};

function sha256(path: string): string {
  return createHash("sha256").update(readFileSync(path)).digest("hex");
}

function hostTarget(): Target {
  const platform = process.platform;
  const arch = process.arch;
  const target = targets.find((candidate) => candidate.platform === platform && candidate.arch === arch);
  if (!target) throw new Error(`No build target for ${platform}-${arch} in dist-targets/targets.json.`);
  return target;
}

/** Other platforms' bindings are not installed by npm here; fetch their package tarballs on demand. */
async function bindingDirectory(target: Target): Promise<string> {
  const installed = join(root, "node_modules", target.duckdb_package);
  if (existsSync(join(installed, "duckdb.node"))) return installed;
  const version = packageJson.dependencies["@duckdb/node-api"];
  const cache = join(root, ".tools", "duckdb-bindings", `${target.id}-${version}`);
  if (existsSync(join(cache, "package", "duckdb.node"))) return join(cache, "package");
  mkdirSync(cache, { recursive: true });
  const pack = Bun.spawnSync(["npm", "pack", `${target.duckdb_package}@${version}`, "--silent"], { cwd: cache, stderr: "inherit" });
  if (pack.exitCode !== 0) throw new Error(`npm pack ${target.duckdb_package} failed.`);
  const tarball = pack.stdout.toString().trim().split("\n").pop()!;
  const untar = Bun.spawnSync(["tar", "-xzf", tarball], { cwd: cache, stderr: "inherit" });
  if (untar.exitCode !== 0) throw new Error(`Unpacking ${tarball} failed.`);
  rmSync(join(cache, tarball));
  return join(cache, "package");
}

/** The engine's own version string (e.g. v1.5.6), read once from the installed package at build time. */
async function duckdbEngineVersion(): Promise<string> {
  const duckdb = await import("@duckdb/node-api");
  return duckdb.version();
}

/**
 * Two generated modules: `flameox-embedded-duckdb` names the embedded files, their digests and the engine
 * version (status checks them without loading the 70 MB library), and `@duckdb/node-bindings` loads them.
 */
function duckdbBindingPlugin(directory: string, target: Target, duckdbVersion: string, engineVersion: string): BunPlugin {
  const addon = join(directory, "duckdb.node");
  const library = join(directory, target.duckdb_library);
  const loader = join(root, "src/store/duckdb-embedded.ts");
  const assets = `
import addonPath from ${JSON.stringify(addon)} with { type: "file" };
import libraryPath from ${JSON.stringify(library)} with { type: "file" };
export const embeddedDuckdb = {
  version: ${JSON.stringify(duckdbVersion)},
  engineVersion: ${JSON.stringify(engineVersion)},
  addon: { embeddedPath: addonPath, sha256: ${JSON.stringify(sha256(addon))} },
  library: { embeddedPath: libraryPath, fileName: ${JSON.stringify(target.duckdb_library)}, sha256: ${JSON.stringify(sha256(library))} },
};
`;
  const binding = `
import { embeddedDuckdb } from "flameox-embedded-duckdb";
import { loadEmbeddedDuckdbBinding } from ${JSON.stringify(loader)};
module.exports = loadEmbeddedDuckdbBinding(embeddedDuckdb);
`;
  return {
    name: "flameox-duckdb-binding",
    setup(build) {
      build.onResolve({ filter: /^@duckdb\/node-bindings$/ }, () => ({ path: "binding", namespace: "flameox" }));
      build.onResolve({ filter: /^flameox-embedded-duckdb$/ }, () => ({ path: "assets", namespace: "flameox" }));
      build.onLoad({ filter: /.*/, namespace: "flameox" }, (arguments_) => ({
        contents: arguments_.path === "assets" ? assets : binding,
        loader: "ts",
      }));
    },
  };
}

async function buildTarget(target: Target, outfile: string): Promise<void> {
  const directory = await bindingDirectory(target);
  const version = packageJson.version;
  mkdirSync(dirname(outfile), { recursive: true });
  const started = performance.now();
  const result = await Bun.build({
    entrypoints: [join(root, "src/main.ts")],
    compile: {
      target: target.bun_target as Bun.Build.CompileTarget,
      outfile,
      autoloadDotenv: false,
      autoloadBunfig: false,
    },
    minify: true,
    bytecode: true,
    sourcemap: "linked",
    define: { FLAMEOX_VERSION: JSON.stringify(version) },
    plugins: [duckdbBindingPlugin(directory, target, packageJson.dependencies["@duckdb/node-api"]!, await duckdbEngineVersion())],
  });
  if (!result.success) {
    for (const log of result.logs) console.error(log);
    throw new Error(`Build for ${target.id} failed.`);
  }
  console.error(`built ${outfile} (${target.id}) in ${Math.round(performance.now() - started)} ms`);
}

const all = process.argv.includes("--all");
if (all) {
  for (const target of targets) await buildTarget(target, join(root, "dist", target.id, target.executable));
} else {
  const target = hostTarget();
  await buildTarget(target, join(root, "dist", target.executable));
}
