import { join } from "node:path";
import { planRefused } from "../../domain/errors.ts";
import type { PythonWorkloadInvocation, CaptureCommand, CommandRunner, ProbeResult } from "../capture-adapter.ts";
import { probePythonPackage } from "../adapter-support.ts";

export { extractPyperf, maxPyperfTextBytes, type PyperfSummary } from "./pyperf-extract.ts";

export const pyperfRequirement = "pyperf==2.11.0";
export const pyperfOutputFileName = "benchmark.json";
export const pyperfExtractorVersion = "flameox.pyperf@1";

export type PyperfOptions = { processes?: number; values?: number; warmups?: number; loops?: number | null; name?: string };

/**
 * `pyperf command` times the whole workload command as a subprocess, so any workload works;
 * pyperf itself runs in the workload's interpreter (or the tools venv when the workload is not Python).
 */
export function pyperfCaptureCommand(input: {
  workload: PythonWorkloadInvocation;
  artifactDirectory: string;
  options?: PyperfOptions;
}): CaptureCommand {
  const options = { processes: 3, values: 3, warmups: 1, loops: null, name: "workload", ...input.options };
  for (const [key, value] of Object.entries({ processes: options.processes, values: options.values, warmups: options.warmups })) {
    if (!Number.isInteger(value) || value < (key === "warmups" ? 0 : 1) || value > 10_000) {
      throw planRefused("capture", `pyperf ${key} must be an integer in range, got ${value}.`, {
        remediation: ["Use small positive integers."],
      });
    }
  }
  if (!/^[A-Za-z0-9][A-Za-z0-9._:/-]{0,199}$/.test(options.name)) {
    throw planRefused("capture", `Benchmark name '${options.name}' is not allowed.`, { remediation: ["Use letters, digits and ._:/-."] });
  }
  const output = join(input.artifactDirectory, pyperfOutputFileName);
  const argv = [
    input.workload.python,
    "-m",
    "pyperf",
    "command",
    "--quiet",
    "--output",
    output,
    "--processes",
    String(options.processes),
    "--values",
    String(options.values),
    "--warmups",
    String(options.warmups),
    "--name",
    options.name,
  ];
  if (options.loops !== null && options.loops !== undefined) argv.push("--loops", String(options.loops));
  return {
    argv: [...argv, "--", ...input.workload.argv],
    cwd: input.workload.cwd,
    environment: {},
    artifacts: [{ name: pyperfOutputFileName, path: output, role: "primary", mediaType: "application/json" }],
  };
}

export async function probePyperf(python: string, run: CommandRunner): Promise<ProbeResult> {
  return probePythonPackage(python, run, {
    script: "import pyperf, importlib.metadata as m; print(m.version('pyperf'))",
    timeoutMs: 15_000,
    requirement: pyperfRequirement,
    installAdvice: "Install pyperf into the interpreter that runs it",
    recognize: (version) => (version ? { version: `pyperf ${version}` } : null),
  });
}
