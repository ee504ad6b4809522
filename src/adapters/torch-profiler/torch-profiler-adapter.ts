import { readFileSync } from "node:fs";
import { basename, join } from "node:path";
import { sha256Hex } from "../../domain/canonical-json.ts";
import { artifactParseFailed, type FlameoxError, planRefused } from "../../domain/errors.ts";
import launcherSource from "./flameox_torch_launcher.py" with { type: "text" };
import sdkSource from "./flameox_torch.py" with { type: "text" };
import type { PythonWorkloadInvocation, CaptureCommand, CommandRunner, ProbeResult } from "../capture-adapter.ts";
import { probePythonPackage, writeCollectorFiles } from "../adapter-support.ts";

export const torchRequirement = "torch==2.13.0";
export const torchTraceFileName = "torch-trace.json";
export const torchDiagnosticsFileName = "torch-profiler-diagnostics.json";
export const torchCycleManifestFileName = "torch-profiler-cycles.json";

export type TorchSchedule = { wait: number; warmup: number; active: number; repeat: number; skip_first: number };
export type TorchProfilerOptions = {
  activities?: ("cpu" | "cuda" | "cuda_if_available")[];
  record_shapes?: boolean;
  profile_memory?: boolean;
  with_stack?: boolean;
  with_flops?: boolean;
  with_modules?: boolean;
};

export type TorchCollectorFiles = { directory: string; launcher: string; sdk: string };

export function writeTorchCollectors(baseDirectory: string): TorchCollectorFiles {
  const files = { "flameox_torch_launcher.py": launcherSource, "flameox_torch.py": sdkSource };
  const directory = join(baseDirectory, `torch-profiler-${sha256Hex(`${launcherSource}\u0000${sdkSource}`).slice(0, 16)}`);
  writeCollectorFiles(directory, files);
  return { directory, launcher: join(directory, "flameox_torch_launcher.py"), sdk: join(directory, "flameox_torch.py") };
}

function invalid(message: string, remediation: string): FlameoxError {
  return planRefused("capture", message, { remediation: [remediation] });
}

function profilerConfig(options: TorchProfilerOptions | undefined, schedule: TorchSchedule | null): string {
  const activities = options?.activities ?? ["cpu", "cuda_if_available"];
  if (
    activities.length === 0 ||
    new Set(activities).size !== activities.length ||
    (activities.includes("cuda") && activities.includes("cuda_if_available"))
  ) {
    throw invalid(
      `Bad activity list ${JSON.stringify(activities)}.`,
      "Use a unique subset of cpu, cuda, cuda_if_available (not both cuda variants).",
    );
  }
  const config: Record<string, unknown> = {
    activities,
    record_shapes: options?.record_shapes ?? true,
    profile_memory: options?.profile_memory ?? true,
    with_stack: options?.with_stack ?? true,
    with_flops: options?.with_flops ?? false,
    with_modules: options?.with_modules ?? false,
    expected_cycles: schedule?.repeat ?? 1,
  };
  if (schedule) config.schedule = schedule;
  // Sorted top-level keys for a stable plan digest (a replacer array would also drop nested schedule keys).
  return JSON.stringify(
    Object.fromEntries(
      Object.keys(config)
        .sort()
        .map((key) => [key, config[key]]),
    ),
  );
}

/** `python <script> …` or `python -m <module> …` as the launcher's target arguments. */
function launcherTarget(workload: PythonWorkloadInvocation): { target: string[]; rest: string[] } {
  const argv = workload.argv;
  if (!basename(argv[0] ?? "").startsWith("python") || argv.length < 2 || argv[1] === "-c") {
    throw invalid("torch.profiler's launcher runs `python <script> …` or `python -m <module> …`.", "Declare a script or module workload.");
  }
  const target = argv[1] === "-m" ? ["--module", argv[2] ?? ""] : ["--script", argv[1]!];
  if (target[1] === "") throw invalid("`-m` without a module name.", "Name the module after -m.");
  return { target, rest: argv[1] === "-m" ? argv.slice(3) : argv.slice(2) };
}

/** Whole-entrypoint mode: the launcher profiles the entire script or module and exports one trace. */
export function torchWholeEntrypointCommand(input: {
  workload: PythonWorkloadInvocation;
  artifactDirectory: string;
  collectors: TorchCollectorFiles;
  options?: TorchProfilerOptions;
}): CaptureCommand {
  const { target, rest } = launcherTarget(input.workload);
  const output = join(input.artifactDirectory, torchTraceFileName);
  return {
    argv: [
      input.workload.python,
      input.collectors.launcher,
      "--output",
      output,
      "--config",
      profilerConfig(input.options, null),
      ...target,
      "--",
      ...rest,
    ],
    cwd: input.workload.cwd,
    environment: {},
    artifacts: [
      { name: torchTraceFileName, path: output, role: "primary", mediaType: "application/json" },
      {
        name: torchDiagnosticsFileName,
        path: join(input.artifactDirectory, torchDiagnosticsFileName),
        role: "torch_profiler_diagnostics",
        mediaType: "application/json",
      },
    ],
  };
}

export const torchScheduleBounds: readonly [keyof TorchSchedule, number, number][] = [
  ["wait", 0, 10_000],
  ["warmup", 0, 10_000],
  ["active", 1, 10_000],
  ["repeat", 1, 100],
  ["skip_first", 0, 10_000],
];

export function torchCycleFileName(index: number): string {
  return `torch-trace-cycle-${String(index).padStart(4, "0")}.json`;
}

/**
 * SDK mode: the workload opens `flameox_torch.profile()` itself and marks steps and phases; flameox passes
 * the plan by environment. The launcher runs the target unprofiled and only puts the SDK folder on
 * sys.path, because the child environment refuses PYTHONPATH.
 */
export function torchSdkCommand(input: {
  workload: PythonWorkloadInvocation;
  artifactDirectory: string;
  collectors: TorchCollectorFiles;
  schedule: TorchSchedule;
  options?: TorchProfilerOptions;
}): CaptureCommand {
  const { schedule } = input;
  for (const [key, low, high] of torchScheduleBounds) {
    if (!Number.isInteger(schedule[key]) || schedule[key] < low || schedule[key] > high)
      throw invalid(`schedule.${key} must be ${low}..${high}.`, "Fix the schedule.");
  }
  const { target, rest } = launcherTarget(input.workload);
  const cycles = Array.from({ length: schedule.repeat }, (_, index) => torchCycleFileName(index));
  return {
    argv: [
      input.workload.python,
      input.collectors.launcher,
      "--mode",
      "sdk",
      "--output-root",
      input.artifactDirectory,
      ...target,
      "--",
      ...rest,
    ],
    cwd: input.workload.cwd,
    environment: {
      FLAMEOX_TORCH_PROFILER_CONFIG: profilerConfig(input.options, schedule),
      FLAMEOX_TORCH_PROFILER_OUTPUT_ROOT: input.artifactDirectory,
    },
    artifacts: [
      ...cycles.map((name, index) => ({
        name,
        path: join(input.artifactDirectory, name),
        role: `cycle_${String(index).padStart(4, "0")}`,
        mediaType: "application/json",
      })),
      {
        name: torchCycleManifestFileName,
        path: join(input.artifactDirectory, torchCycleManifestFileName),
        role: "torch_profiler_cycle_manifest",
        mediaType: "application/json",
      },
      {
        name: torchDiagnosticsFileName,
        path: join(input.artifactDirectory, torchDiagnosticsFileName),
        role: "torch_profiler_diagnostics",
        mediaType: "application/json",
      },
    ],
  };
}

export async function probeTorch(python: string, run: CommandRunner): Promise<ProbeResult> {
  return probePythonPackage(python, run, {
    script: "import json, torch; print(json.dumps({'version': torch.__version__, 'cuda': torch.cuda.is_available()}))",
    // Importing torch (and initialising CUDA) takes far longer than a plain package.
    timeoutMs: 60_000,
    requirement: torchRequirement,
    installAdvice: "Install torch into the workload's interpreter",
    recognize: (last) => {
      if (!last.startsWith("{")) return null;
      const parsed = JSON.parse(last) as { version: string; cuda: boolean };
      return {
        version: `torch ${parsed.version}`,
        limitations: parsed.cuda ? [] : ["CUDA is not available: traces hold CPU operators only."],
        details: { python, cuda: parsed.cuda },
      };
    },
  });
}

export type TorchDiagnostics = { phase: string; status: string; detail: string };

export function readTorchDiagnostics(path: string): TorchDiagnostics {
  try {
    const value = JSON.parse(readFileSync(path, "utf8")) as Record<string, unknown>;
    if (
      value.schema_version !== "flameox.torch-profiler-diagnostics.v1" ||
      typeof value.phase !== "string" ||
      typeof value.status !== "string"
    )
      throw new Error("shape");
    return { phase: value.phase, status: value.status, detail: typeof value.detail === "string" ? value.detail : "" };
  } catch (error) {
    throw artifactParseFailed(`torch profiler diagnostics unreadable: ${String(error).slice(0, 200)}`, {
      remediation: ["Capture again with the torch.profiler adapter."],
    });
  }
}
