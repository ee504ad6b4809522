import { homedir, tmpdir } from "node:os";
import { join } from "node:path";

/**
 * A folder of flameox's in the user's cache (never the workspace): FLAMEOX_CACHE_DIR when set, else
 * the platform's cache folder. The same places as store's DuckDB cache (duckdbCacheRoot), which the
 * layers keep from importing this.
 */
export function userCacheFolder(name: string): string {
  const override = process.env.FLAMEOX_CACHE_DIR;
  if (override) return join(override, name);
  if (process.platform === "darwin") return join(homedir(), "Library", "Caches", "flameox", name);
  if (process.platform === "win32") return join(process.env.LOCALAPPDATA ?? join(homedir(), "AppData", "Local"), "flameox", "cache", name);
  const base = process.env.XDG_CACHE_HOME || (homedir() ? join(homedir(), ".cache") : join(tmpdir(), "flameox-cache"));
  return join(base, "flameox", name);
}
