/**
 * What the tool adapters share: finding the workload's interpreter, running probes through the
 * broker, turning a probe into a typed refusal, and writing embedded collector files once.
 */
import { closeSync, existsSync, mkdirSync, openSync, readSync, renameSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { capabilityUnavailable } from "../domain/errors.ts";
import { resolveExecutable } from "../exec/executable.ts";
import type {
  CaptureCommand,
  CollectorContext,
  CollectorOutput,
  CollectorPlan,
  CommandRunner,
  ProbeContext,
  ProbeResult,
  PythonWorkloadInvocation,
} from "./capture-adapter.ts";
import { probeRunner } from "./command-runner.ts";

export function isPythonExecutable(path: string): boolean {
  return /^python(\d+(\.\d+)?)?$/.test(basename(path));
}

/** The interpreter named by a script's `#!` line (pytest, pyperf entry points), or null. */
function shebangPython(path: string): string | null {
  let descriptor: number | null = null;
  try {
    descriptor = openSync(path, "r");
    const buffer = Buffer.alloc(256);
    const read = readSync(descriptor, buffer, 0, buffer.length, 0);
    const first = buffer.subarray(0, read).toString("utf8").split("\n")[0] ?? "";
    if (!first.startsWith("#!")) return null;
    const parts = first.slice(2).trim().split(/\s+/);
    const interpreter = parts[0] === "/usr/bin/env" ? parts[1] : parts[0];
    return interpreter && isPythonExecutable(interpreter) ? interpreter : null;
  } catch {
    return null;
  } finally {
    if (descriptor !== null) closeSync(descriptor);
  }
}

/**
 * Collectors run in the workload's own interpreter: argv[0] when it is a python, the interpreter
 * of a Python entry-point script (`pytest`), else python3 on the workload's PATH.
 */
export function workloadPython(argv: readonly string[], pathValue: string): string | null {
  const head = argv[0];
  if (head && isPythonExecutable(head)) return head;
  if (head) {
    const fromShebang = shebangPython(head);
    if (fromShebang) {
      try {
        return resolveExecutable(fromShebang, pathValue);
      } catch {
        return null;
      }
    }
  }
  for (const name of ["python3", "python"]) {
    try {
      return resolveExecutable(name, pathValue);
    } catch {
      // Try the next name.
    }
  }
  return null;
}

/** A probe that says no becomes CAPABILITY_UNAVAILABLE naming the exact remedy and how to re-check. */
export function requireAvailable(adapter: string, result: ProbeResult): void {
  if (result.status === "available") return;
  throw capabilityUnavailable(
    `${adapter} is ${result.status.replaceAll("_", " ")} for this workload${result.details.python ? ` (interpreter ${String(result.details.python)})` : ""}.`,
    {
      details: { adapter, status: result.status, next_tool: "list_capabilities", ...result.details },
      remediation:
        result.remediation.length > 0 ? result.remediation : [`Install ${adapter} for the workload's interpreter, then plan again.`],
      next: { tool: "list_capabilities", arguments: { mode: "active_refresh", adapter } },
    },
  );
}

/**
 * Asks the workload's interpreter (not flameox's) whether a Python package is installed, since that
 * interpreter is the one that will run it. `recognize` reads the script's last output line and
 * returns what is available, or null; every failure names the exact pip command for that interpreter.
 */
export async function probePythonPackage(
  python: string,
  run: CommandRunner,
  probe: {
    script: string;
    timeoutMs: number;
    requirement: string;
    /** The remedy's first words, e.g. "Install memray into the workload's interpreter". */
    installAdvice: string;
    recognize: (lastLine: string) => { version: string; limitations?: string[]; details?: Record<string, unknown> } | null;
  },
): Promise<ProbeResult> {
  const install = `${python} -m pip install ${probe.requirement}`;
  try {
    const result = await run([python, "-I", "-c", probe.script], { timeoutMs: probe.timeoutMs });
    const last = result.stdout.trim().split("\n").pop() ?? "";
    const found = result.exitCode === 0 ? probe.recognize(last) : null;
    if (found)
      return {
        status: "available",
        version: found.version,
        remediation: [],
        limitations: found.limitations ?? [],
        details: found.details ?? { python },
      };
    return {
      status: "unavailable",
      version: null,
      remediation: [`${probe.installAdvice}: ${install}`],
      limitations: [],
      details: { python, stderr: result.stderr.slice(-500) },
    };
  } catch (error) {
    return {
      status: "unavailable",
      version: null,
      remediation: [`The interpreter ${python} could not be started (${String(error)}); then: ${install}`],
      limitations: [],
      details: { python },
    };
  }
}

export function noPython(_adapter: string, requirement: string): ProbeResult {
  return {
    status: "unavailable",
    version: null,
    remediation: [
      `No Python interpreter was found for the workload; declare the workload as \`python …\` and install ${requirement} into that interpreter.`,
    ],
    limitations: [],
    details: {},
  };
}

/**
 * A Python tool can only be probed inside the workload's interpreter; with none found the answer
 * is the same typed "unavailable" for every such adapter.
 */
export async function probeWorkloadPython(
  context: ProbeContext,
  adapter: string,
  requirement: string,
  probe: (python: string, run: CommandRunner) => Promise<ProbeResult>,
): Promise<ProbeResult> {
  const python = workloadPython(context.workloadArgv, context.pathValue);
  return python ? probe(python, context.run) : noPython(adapter, requirement);
}

/**
 * Planning a Python-tool capture re-runs the adapter's own probe against the PATH the workload will
 * see, so a plan is refused before anything is written; what comes back is the workload as the
 * per-tool command builders take it.
 */
export async function availablePythonWorkload(
  adapter: string,
  context: CollectorContext,
  probe: (context: ProbeContext) => Promise<ProbeResult>,
): Promise<PythonWorkloadInvocation> {
  const pathValue = context.environment.PATH ?? process.env.PATH ?? "";
  const python = workloadPython(context.workloadArgv, pathValue);
  requireAvailable(adapter, await probe({ workloadArgv: context.workloadArgv, adapterExecutable: null, pathValue, run: probeRunner() }));
  return { argv: context.workloadArgv, cwd: context.cwd, env: context.environment, python: python! };
}

/** Writes embedded files into `<collectorDirectory>/<name>` once; a version-addressed folder never changes. */
export function writeCollectorFiles(directory: string, files: Record<string, string>): void {
  mkdirSync(directory, { recursive: true });
  for (const [name, text] of Object.entries(files)) {
    const target = join(directory, name);
    if (existsSync(target)) continue;
    const temporary = join(directory, `.${name}.${process.pid}.${crypto.randomUUID()}.tmp`);
    writeFileSync(temporary, text, { mode: 0o644 });
    renameSync(temporary, target);
  }
}

export type OutputDescription = Omit<CollectorOutput, "file" | "mediaType"> & { extract: boolean };

/** Turns a per-tool CaptureCommand into the plan the capture service runs. */
export function collectorPlan(
  command: CaptureCommand,
  describe: (artifact: CaptureCommand["artifacts"][number]) => OutputDescription,
  expectedOverhead: string,
): CollectorPlan {
  return {
    argv: command.argv,
    trustedEnvironment: command.environment,
    outputs: command.artifacts.map((artifact) => ({ file: artifact.name, mediaType: artifact.mediaType, ...describe(artifact) })),
    expectedOverhead,
  };
}
