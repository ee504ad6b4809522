import { homedir } from "node:os";
import { join } from "node:path";

/** The flameox data folder, as `flameox setup` computes it (downloads are cached under it). */
export function dataRoot(env: NodeJS.ProcessEnv = process.env, platform: string = process.platform, home = env.HOME || homedir()): string {
  if (env.FLAMEOX_SETUP_DATA_ROOT) return env.FLAMEOX_SETUP_DATA_ROOT;
  if (platform === "darwin") return join(home, "Library", "Application Support", "flameox");
  if (platform === "win32") return join(env.LOCALAPPDATA || join(home, "AppData", "Local"), "flameox");
  return join(env.XDG_DATA_HOME || join(home, ".local", "share"), "flameox");
}
