/**
 * Everything setup learns about the machine comes through one value, so tests can point HOME, the
 * platform and the variables at a temporary folder without touching the real user's files.
 */
import { homedir } from "node:os";
import { join, win32 } from "node:path";

export type SetupPlatform = "linux" | "darwin" | "win32";

export type SetupEnvironment = {
  env: Record<string, string | undefined>;
  home: string;
  platform: SetupPlatform;
};

export function currentSetupEnvironment(env: Record<string, string | undefined> = process.env): SetupEnvironment {
  const platform: SetupPlatform = process.platform === "darwin" ? "darwin" : process.platform === "win32" ? "win32" : "linux";
  const home = nonEmpty(env.FLAMEOX_SETUP_HOME) ?? nonEmpty(env.HOME) ?? homedir();
  return { env, home, platform };
}

export function nonEmpty(value: string | undefined): string | undefined {
  return value !== undefined && value.trim() !== "" ? value : undefined;
}

/** Joins with the separator of the target platform (Windows paths stay Windows paths in tests on Linux). */
export function joinFor(platform: SetupPlatform, ...parts: string[]): string {
  return platform === "win32" ? win32.join(...parts) : join(...parts);
}

/** Per-user configuration folder: XDG_CONFIG_HOME on Linux, Application Support on macOS, APPDATA on Windows. */
export function userConfigDirectory(environment: SetupEnvironment): string {
  const { env, home, platform } = environment;
  if (platform === "darwin") return joinFor(platform, home, "Library", "Application Support");
  if (platform === "win32") return nonEmpty(env.APPDATA) ?? joinFor(platform, home, "AppData", "Roaming");
  return nonEmpty(env.XDG_CONFIG_HOME) ?? joinFor(platform, home, ".config");
}

/** XDG-style config folder used by tools that follow XDG on every platform (OpenCode). */
export function xdgConfigDirectory(environment: SetupEnvironment): string {
  return nonEmpty(environment.env.XDG_CONFIG_HOME) ?? joinFor(environment.platform, environment.home, ".config");
}

/** Where runtimes, the lock, the journal and the active pointer live. */
export function dataRoot(environment: SetupEnvironment): string {
  const { env, home, platform } = environment;
  const override = nonEmpty(env.FLAMEOX_SETUP_DATA_ROOT);
  if (override) return override;
  if (platform === "darwin") return joinFor(platform, home, "Library", "Application Support", "flameox");
  if (platform === "win32") {
    return joinFor(platform, nonEmpty(env.LOCALAPPDATA) ?? joinFor(platform, home, "AppData", "Local"), "flameox");
  }
  return joinFor(platform, nonEmpty(env.XDG_DATA_HOME) ?? joinFor(platform, home, ".local", "share"), "flameox");
}
