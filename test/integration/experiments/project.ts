import { cpSync, realpathSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { Services } from "../../../src/services/services.ts";
import { temporaryFolder } from "../../support/temporary-folders.ts";

export const repositoryRoot = resolve(import.meta.dir, "../../..");
/** The pinned interpreter: the same one for every run, so environment identity is stable. */
export const python = realpathSync(join(repositoryRoot, ".tools", "venv", "bin", "python3"));

/** A temporary project with the experiment fixtures, the given flameox.toml and an initialized workspace. */
// Adapters (py-spy) are found on PATH, as in a real project; the pinned tools come first.
process.env.PATH = [join(repositoryRoot, ".tools", "venv", "bin"), process.env.PATH ?? ""].join(":");

export async function experimentProject(prefix: string, toml: string): Promise<{ root: string; services: Services }> {
  const root = temporaryFolder(prefix);
  cpSync(join(repositoryRoot, "test", "fixtures", "experiments"), root, { recursive: true });
  writeFileSync(join(root, "flameox.toml"), toml.replaceAll("$PYTHON", python));
  const services = new Services({ projectRoot: root });
  await services.workspaces.initialize();
  return { root, services };
}
