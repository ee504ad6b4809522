// Entry of the npm `flameox` bin; build.ts bundles it (ofetch and the target table included) into one
// dependency-free dist/launcher.mjs for Node >= 18.
import { realpathSync } from "node:fs";
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { main } from "./main.ts";

const root = dirname(dirname(realpathSync(fileURLToPath(import.meta.url))));
process.exitCode = await main(process.argv.slice(2), { root });
