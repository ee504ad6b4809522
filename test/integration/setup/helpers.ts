/** Shared setup-test scaffolding: a temporary HOME, a setup environment over it, and fake runtimes. */
import { chmodSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { SetupEnvironment } from "../../../src/setup/environment.ts";

export const repositoryRoot = resolve(import.meta.dir, "../../..");
export const fakeRuntimeScript = join(import.meta.dir, "fixtures", "fake-runtime.ts");

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
