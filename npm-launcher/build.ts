/** Bundles src/launcher.mjs (plain ESM, no dependencies) into dist/launcher.mjs for Node ≥ 18. */
import { chmodSync } from "node:fs";
import { join } from "node:path";

const root = import.meta.dir;
const outfile = join(root, "dist", "launcher.mjs");
const result = await Bun.build({
  entrypoints: [join(root, "src", "launcher.mjs")],
  target: "node",
  format: "esm",
  minify: false,
  outdir: join(root, "dist"),
  naming: "launcher.mjs",
  banner: "#!/usr/bin/env node",
});
if (!result.success) {
  for (const log of result.logs) console.error(log);
  process.exit(1);
}
chmodSync(outfile, 0o755);
console.error(`built ${outfile}`);
