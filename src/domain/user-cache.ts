import { join } from "node:path";

/** The facts of the host that decide where flameox's user cache is; callers pass them in, so this stays pure. */
export type CacheHost = {
  platform: NodeJS.Platform;
  environment: Readonly<Record<string, string | undefined>>;
  homeDirectory: string;
  temporaryDirectory: string;
};

/**
 * A folder of flameox's in the user's cache (never the workspace): FLAMEOX_CACHE_DIR when set, else
 * the platform's cache folder. Here because both exec (executable digests) and store (the DuckDB
 * binding) keep folders there, and domain is the one layer both may import.
 */
export function userCacheFolderOn(host: CacheHost, name: string): string {
  const override = host.environment.FLAMEOX_CACHE_DIR;
  if (override) return join(override, name);
  const home = host.homeDirectory;
  if (host.platform === "darwin") return join(home, "Library", "Caches", "flameox", name);
  if (host.platform === "win32") return join(host.environment.LOCALAPPDATA ?? join(home, "AppData", "Local"), "flameox", "cache", name);
  const base = host.environment.XDG_CACHE_HOME || (home ? join(home, ".cache") : join(host.temporaryDirectory, "flameox-cache"));
  return join(base, "flameox", name);
}
