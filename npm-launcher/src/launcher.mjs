// Entry of the npm `flameox` bin; bundled with launcher-lib.mjs into dist/launcher.mjs.
import { realpathSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { dirname } from "node:path";
import { main } from "./launcher-lib.mjs";

const root = dirname(dirname(realpathSync(fileURLToPath(import.meta.url))));
process.exitCode = await main(process.argv.slice(2), { root });
