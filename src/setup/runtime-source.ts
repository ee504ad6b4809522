/**
 * Where a runtime to install comes from (this very binary, or FLAMEOX_SETUP_RUNTIME_SOURCE), its
 * version rules, and the integrity the user asked for (--expect-sha256, --checksums SHA256SUMS).
 */
import { readFileSync } from "node:fs";
import { basename } from "node:path";
import { assetName, targetId } from "../../dist-targets/targets.ts";
import { type FlameoxError, artifactIntegrityFailed, invalidRequest, processFailed } from "../domain/errors.ts";
import { flameoxVersion } from "../version.ts";
import { nonEmpty, type SetupEnvironment } from "./environment.ts";

/** Where a runtime to install comes from: this very binary, or a file named for tests and mirrors. */
export type RuntimeSource = { path: string; version: string; kind: "self" | "file" };

export type IntegrityExpectation = { expectedSha256?: string | undefined; checksumsFile?: string | undefined };

const versionPattern = /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?$/;

export function isCanonicalVersion(version: string): boolean {
  return versionPattern.test(version);
}

export function compareVersions(left: string, right: string): number {
  const a = versionPattern.exec(left);
  const b = versionPattern.exec(right);
  if (!a || !b) return left.localeCompare(right);
  for (let index = 1; index <= 3; index += 1) {
    const difference = Number(a[index]) - Number(b[index]);
    if (difference !== 0) return Math.sign(difference);
  }
  if (a[4] === b[4]) return 0;
  if (a[4] === undefined) return 1;
  if (b[4] === undefined) return -1;
  return a[4].localeCompare(b[4], "en", { numeric: true });
}

export function hostTargetId(platform: string = process.platform, arch: string = process.arch): string {
  return targetId(platform, arch);
}

export function invalidVersion(version: string): FlameoxError {
  return invalidRequest(`Not a canonical flameox version: ${JSON.stringify(version)}`, {
    remediation: ["Use MAJOR.MINOR.PATCH exactly as `flameox setup --rollback` lists it."],
    details: { fields: [{ field: "version", message: "not canonical", type: "version" }] },
  });
}

export function integrityFailure(message: string, remediation: string[], details: Record<string, unknown> = {}): FlameoxError {
  return artifactIntegrityFailed(message, { remediation, details });
}

/** Is this process a `bun build --compile` executable (as opposed to bun running sources)? */
export function runningCompiled(): boolean {
  return !/^bun(\.exe)?$/i.test(basename(process.execPath)) && !/[\\/]bun[\\/]bin[\\/]bun(\.exe)?$/i.test(process.execPath);
}

/**
 * What `setup` installs: FLAMEOX_SETUP_RUNTIME_SOURCE (a flameox executable, for tests and mirrors;
 * its version is what it prints for --version) or, in a compiled binary, the binary itself.
 */
export async function resolveRuntimeSource(environment: SetupEnvironment): Promise<RuntimeSource | null> {
  const override = nonEmpty(environment.env.FLAMEOX_SETUP_RUNTIME_SOURCE);
  if (override) {
    const child = Bun.spawn([override, "--version"], { stdout: "pipe", stderr: "ignore", stdin: "ignore", timeout: 30_000 });
    const [stdout, exitCode] = await Promise.all([new Response(child.stdout).text(), child.exited]);
    const version = stdout.trim().replace(/^flameox\s+/, "");
    if (exitCode !== 0 || !isCanonicalVersion(version)) {
      throw processFailed(`FLAMEOX_SETUP_RUNTIME_SOURCE=${override} did not print a flameox version.`, {
        remediation: ["Point FLAMEOX_SETUP_RUNTIME_SOURCE at a flameox executable, or unset it."],
      });
    }
    return { path: override, version, kind: "file" };
  }
  if (runningCompiled()) return { path: process.execPath, version: flameoxVersion, kind: "self" };
  return null;
}

/** Parses SHA256SUMS (`<hex>  <name>` or `<hex> *<name>`) into name → digest. */
export function parseChecksums(text: string): Map<string, string> {
  const table = new Map<string, string>();
  for (const line of text.split(/\r?\n/)) {
    const match = /^([0-9a-fA-F]{64})\s+\*?(.+?)\s*$/.exec(line);
    if (match) table.set(basename(match[2]!), match[1]!.toLowerCase());
  }
  return table;
}

/** The sha256 the user asked for (--expect-sha256, or this asset's line in --checksums), if any. */
export function expectedDigest(source: RuntimeSource, integrity: IntegrityExpectation): string | undefined {
  if (integrity.expectedSha256) {
    if (!/^[0-9a-fA-F]{64}$/.test(integrity.expectedSha256)) {
      throw invalidRequest("--expect-sha256 needs 64 hexadecimal digits.", {
        details: { fields: [{ field: "expect-sha256", message: "not a sha256", type: "sha256" }] },
      });
    }
    return integrity.expectedSha256.toLowerCase();
  }
  if (integrity.checksumsFile) {
    let text: string;
    try {
      text = readFileSync(integrity.checksumsFile, "utf8");
    } catch (cause) {
      throw invalidRequest(`Cannot read --checksums ${integrity.checksumsFile}.`, { cause });
    }
    const table = parseChecksums(text);
    const names = [assetName(hostTargetId()), basename(source.path)];
    for (const name of names) {
      const digest = table.get(name);
      if (digest) return digest;
    }
    throw integrityFailure(`${integrity.checksumsFile} has no line for ${names.join(" or ")}.`, [
      "Copy the SHA256SUMS of the same release as this binary.",
    ]);
  }
  return undefined;
}

/** Checks `digest` (of the source binary) against --expect-sha256/--checksums, installed or not. */
export function checkExpected(source: RuntimeSource, digest: string, integrity: IntegrityExpectation): void {
  const expected = expectedDigest(source, integrity);
  if (expected !== undefined && expected !== digest) {
    throw integrityFailure(
      `The flameox executable ${source.path} has sha256 ${digest}, not the expected ${expected}.`,
      ["Copy the binary again (it may be damaged or from another release) and rerun flameox setup."],
      { expected, actual: digest },
    );
  }
}
