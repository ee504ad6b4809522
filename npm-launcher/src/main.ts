/**
 * The npm `flameox` package: a thin bootstrap. It resolves this platform's release asset for its own
 * exact version, downloads it (download.ts), checks its sha256 against checksums.json shipped in this
 * package, caches it by hash, and hands off to `<binary> setup …`. It never edits client configs.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ensureBinary, type Asset } from "./download.ts";
import { LauncherError } from "./errors.ts";
import { handOff } from "./handoff.ts";
import { resolveTarget } from "./target.ts";

type ChecksumTable = { schema_version: 1; version: string; assets?: Record<string, Asset> };

export async function main(argv: string[], { root, env = process.env }: { root: string; env?: NodeJS.ProcessEnv }): Promise<number> {
  const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { version: string };
  if (argv.length === 1 && (argv[0] === "--version" || argv[0] === "-V")) {
    process.stdout.write(`${pkg.version}\n`);
    return 0;
  }
  const [command, ...rest] = argv;
  if (command !== "setup" && command !== "upgrade") {
    process.stderr.write(
      "The flameox npm package is only the setup bootstrap. Use `npx flameox@latest setup` (connect MCP clients) or `npx flameox@latest upgrade` (update connected clients).\n",
    );
    return 2;
  }
  try {
    const target = resolveTarget();
    const table = JSON.parse(readFileSync(join(root, "checksums.json"), "utf8")) as ChecksumTable;
    const asset = table.assets?.[target];
    if (table.version !== pkg.version || !asset) {
      throw new LauncherError(`This flameox ${pkg.version} package has no checksum for ${target}; run \`npx flameox@latest setup\`.`);
    }
    const binary = await ensureBinary({ asset, version: pkg.version, env });
    const args = command === "upgrade" ? ["setup", "--refresh", "--yes", ...rest] : ["setup", ...rest];
    return await handOff(binary, args, env);
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n`);
    return error instanceof LauncherError ? error.exitCode : 1;
  }
}
