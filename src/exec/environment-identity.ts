import { realpathSync, statSync } from "node:fs";
import { cpus, release, totalmem } from "node:os";
import { basename } from "node:path";
import { digestOf } from "../domain/canonical-json.ts";
import { describeFailure, fileSha256, runCaptured, succeeded } from "./captured-command.ts";
import { executableDigest, resolveExecutable } from "./executable.ts";
import { readBootId } from "./proc.ts";

/** Environment identity: the machine and the workload's interpreter (never flameox's own runtime). */

export type MachineIdentity = {
  os: string;
  os_release: string;
  arch: string;
  cpu_model: string | null;
  cpu_count: number;
  total_memory_bytes: number;
  /** Descriptive: changes on every reboot, so it is kept out of `environment_id`. */
  boot_id: string | null;
};

export type PythonIdentity = {
  implementation: string;
  version: string;
  full_version: string;
  cache_tag: string | null;
  in_virtual_environment: boolean;
  /** The interpreter binary that actually ran (behind shims and venv links). */
  executable_real_path: string | null;
  executable_sha256: string | null;
};

export type InterpreterIdentity = {
  requested: string;
  path: string;
  real_path: string;
  sha256: string;
  size_bytes: number;
  kind: "python" | "other";
  python: PythonIdentity | null;
  missing_fields: string[];
  limitations: string[];
};

export type EnvironmentIdentity = {
  /** digestOf machine (without boot id) and interpreter contents (without paths). */
  environment_id: string;
  quality: "complete" | "partial";
  machine: MachineIdentity;
  interpreter: InterpreterIdentity | null;
  missing_fields: string[];
};

export function machineIdentity(): MachineIdentity {
  const processors = cpus();
  return {
    os: process.platform,
    os_release: release(),
    arch: process.arch,
    cpu_model: processors[0]?.model?.trim() || null,
    cpu_count: processors.length,
    total_memory_bytes: totalmem(),
    boot_id: readBootId(),
  };
}

const pythonProbe = [
  "import sys, platform, json",
  "print(json.dumps({'implementation': sys.implementation.name, 'version': platform.python_version(),",
  " 'full_version': sys.version, 'cache_tag': sys.implementation.cache_tag, 'executable': sys.executable,",
  " 'venv': sys.prefix != getattr(sys, 'base_prefix', sys.prefix)}))",
].join("\n");

function looksLikePython(...names: string[]): boolean {
  return names.some((name) => /^(python|pypy)[0-9.]*(\.exe)?$/i.test(basename(name)));
}

export type InterpreterIdentityOptions = {
  /** Where a relative interpreter path is taken from, and the probe's cwd. */
  cwd?: string;
  deadline?: number;
  parentEnvironment?: Record<string, string | undefined>;
  signal?: AbortSignal;
};

/** The workload's interpreter: resolved path, real path, sha256; for Python also its version as it reports it. */
export async function interpreterIdentity(executable: string, options: InterpreterIdentityOptions = {}): Promise<InterpreterIdentity> {
  const cwd = options.cwd ?? process.cwd();
  const parent = options.parentEnvironment ?? process.env;
  const path = resolveExecutable(executable, parent.PATH, cwd);
  const realPath = realpathSync(path);
  const identity: InterpreterIdentity = {
    requested: executable,
    path,
    real_path: realPath,
    sha256: (await executableDigest(realPath)).slice("sha256:".length),
    size_bytes: statSync(realPath).size,
    kind: looksLikePython(executable, path, realPath) ? "python" : "other",
    python: null,
    missing_fields: [],
    limitations: [],
  };
  if (identity.kind !== "python") return identity;
  try {
    const probe = await runCaptured([path, "-I", "-c", pythonProbe], {
      cwd,
      deadline: options.deadline ?? Date.now() + 30_000,
      outputBudgetBytes: 64 * 1024,
      parentEnvironment: options.parentEnvironment,
      signal: options.signal,
    });
    if (!succeeded(probe)) {
      identity.missing_fields.push("python");
      identity.limitations.push(describeFailure("the Python version probe", probe));
      return identity;
    }
    const reported = JSON.parse(probe.stdout.toString("utf8")) as Record<string, unknown>;
    let executableRealPath: string | null = null;
    let executableSha256: string | null = null;
    if (typeof reported.executable === "string" && reported.executable.length > 0) {
      try {
        executableRealPath = realpathSync(reported.executable);
        executableSha256 = await fileSha256(executableRealPath);
      } catch {
        identity.missing_fields.push("python.executable_sha256");
      }
    }
    identity.python = {
      implementation: String(reported.implementation ?? ""),
      version: String(reported.version ?? ""),
      full_version: String(reported.full_version ?? ""),
      cache_tag: typeof reported.cache_tag === "string" ? reported.cache_tag : null,
      in_virtual_environment: reported.venv === true,
      executable_real_path: executableRealPath,
      executable_sha256: executableSha256,
    };
  } catch (error) {
    identity.missing_fields.push("python");
    identity.limitations.push(`the Python version probe failed: ${error instanceof Error ? error.message : String(error)}`);
  }
  return identity;
}

/**
 * Environment identity of a run: the machine plus the workload's interpreter. Paths and the boot
 * id are recorded but kept out of the id, so the same interpreter reached through another venv
 * or after a reboot is the same environment.
 */
export async function environmentIdentity(
  options: InterpreterIdentityOptions & { interpreter?: string | null } = {},
): Promise<EnvironmentIdentity> {
  const machine = machineIdentity();
  const missing: string[] = [];
  if (machine.boot_id === null) missing.push("machine.boot_id");
  if (machine.cpu_model === null) missing.push("machine.cpu_model");
  const interpreter = options.interpreter ? await interpreterIdentity(options.interpreter, options) : null;
  if (interpreter) missing.push(...interpreter.missing_fields.map((field) => `interpreter.${field}`));
  const quality = missing.filter((field) => field !== "machine.boot_id").length === 0 ? "complete" : "partial";
  const { boot_id: _bootId, ...machineFields } = machine;
  const environment_id = digestOf({
    quality,
    machine: machineFields,
    interpreter: interpreter
      ? {
          sha256: interpreter.sha256,
          kind: interpreter.kind,
          python: interpreter.python
            ? {
                implementation: interpreter.python.implementation,
                version: interpreter.python.version,
                full_version: interpreter.python.full_version,
                cache_tag: interpreter.python.cache_tag,
                in_virtual_environment: interpreter.python.in_virtual_environment,
                executable_sha256: interpreter.python.executable_sha256,
              }
            : null,
          missing_fields: interpreter.missing_fields,
        }
      : null,
  });
  return { environment_id, quality, machine, interpreter, missing_fields: missing };
}
