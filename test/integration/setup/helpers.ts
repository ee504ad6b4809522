/** Shared setup-test scaffolding: a temporary HOME, a setup environment over it, fake runtimes, the CLI. */
import { afterEach } from "bun:test";
import { chmodSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { SetupEnvironment } from "../../../src/setup/environment.ts";

export const repositoryRoot = resolve(import.meta.dir, "../../..");
export const fakeRuntimeScript = join(import.meta.dir, "fixtures", "fake-runtime.ts");
/** `flameox setup` run the way the main CLI runs it, from sources. */
export const setupCli = join(import.meta.dir, "fixtures", "setup-cli.ts");

export type TempHome = { home: string; environment: SetupEnvironment; env: Record<string, string>; cleanup(): void };

export function makeTempHome(extraEnv: Record<string, string> = {}): TempHome {
  const home = realpathSync(mkdtempSync(join(tmpdir(), "flameox-setup-home-")));
  const env: Record<string, string> = {
    HOME: home,
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    XDG_CONFIG_HOME: join(home, ".config"),
    XDG_DATA_HOME: join(home, ".local", "share"),
    ...extraEnv,
  };
  return {
    home,
    env,
    environment: { env, home, platform: "linux" },
    cleanup: () => rmSync(home, { recursive: true, force: true }),
  };
}

/** Writes an executable stand-in runtime for `version` into `directory`. */
export function makeFakeRuntime(directory: string, version: string): string {
  mkdirSync(directory, { recursive: true });
  const path = join(directory, `flameox-${version}`);
  writeFileSync(
    path,
    `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(fakeRuntimeScript)} ${JSON.stringify(version)} "$@"\n`,
  );
  chmodSync(path, 0o755);
  return path;
}

export function writeFile(path: string, text: string | Uint8Array): void {
  mkdirSync(resolve(path, ".."), { recursive: true });
  writeFileSync(path, text);
}

/** A maker of temporary HOMEs, each removed after the test of the calling file that made it. */
export function temporaryHomes(): (extraEnv?: Record<string, string>) => TempHome {
  const homes: TempHome[] = [];
  afterEach(() => {
    for (const home of homes.splice(0)) home.cleanup();
  });
  return (extraEnv = {}) => {
    const home = makeTempHome(extraEnv);
    homes.push(home);
    return home;
  };
}

/** The environment for `flameox setup` in `home`, installing a fake runtime of `version`. */
export function setupEnvironmentFor(home: TempHome, version = "0.2.0"): Record<string, string> {
  return { ...home.env, FLAMEOX_SETUP_RUNTIME_SOURCE: makeFakeRuntime(join(home.home, "downloads"), version) };
}

export function runSetupCli(env: Record<string, string>, args: string[], prefix: string[] = []) {
  const child = Bun.spawnSync([...prefix, process.execPath, setupCli, ...args], { env, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  return { code: child.exitCode, stdout: child.stdout.toString(), stderr: child.stderr.toString() };
}
