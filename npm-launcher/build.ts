/**
 * Bundles src/launcher.ts into one dependency-free dist/launcher.mjs for Node >= 18: ofetch (an exact,
 * pinned dev dependency) and the target table are inlined, and the result may import only Node's own
 * modules (checked here, so a stray runtime dependency fails the build).
 */
import { chmodSync, readFileSync } from "node:fs";
import { join } from "node:path";

const root = import.meta.dir;
const outfile = join(root, "dist", "launcher.mjs");
const result = await Bun.build({
  entrypoints: [join(root, "src", "launcher.ts")],
  target: "node",
  format: "esm",
  minify: false,
  outdir: join(root, "dist"),
  naming: "launcher.mjs",
  banner: "#!/usr/bin/env node",
  // ofetch's "node" build pulls in a fetch polyfill; we hand it our own fetch, so take the plain build.
  conditions: ["worker"],
});
if (!result.success) {
  for (const log of result.logs) console.error(log);
  process.exit(1);
}
const text = readFileSync(outfile, "utf8");
const foreign = [...text.matchAll(/(?:^|\n)\s*import\s[^;]*?from\s*["']([^"']+)["']/g)]
  .map((match) => match[1]!)
  .filter((specifier) => !specifier.startsWith("node:"));
if (foreign.length > 0) {
  console.error(`dist/launcher.mjs imports non-Node modules: ${[...new Set(foreign)].join(", ")}`);
  process.exit(1);
}
chmodSync(outfile, 0o755);
console.error(`built ${outfile}`);
