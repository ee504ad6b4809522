import { basename, join } from "node:path";
import { sha256Hex } from "../../domain/canonical-json.ts";
import { planRefused } from "../../domain/errors.ts";
import launcherSource from "./flameox_pytest_launcher.py" with { type: "text" };
import pluginSource from "./flameox_pytest_plugin.py" with { type: "text" };
import type { PythonWorkloadInvocation, CaptureCommand } from "../capture-adapter.ts";
import { writeCollectorFiles } from "../adapter-support.ts";

export const pytestEventsFileName = "pytest-events.jsonl";
export const pytestRequirements = ["pytest==9.2.0", "pytest-xdist==3.8.0"];

export type PytestCollectorFiles = { directory: string; launcher: string; plugin: string };

const collectorFiles = {
  "flameox_pytest_launcher.py": launcherSource,
  "flameox_pytest_plugin.py": pluginSource,
} as const;

/** Content-addressed, so two flameox versions never overwrite each other's collectors mid-capture. */
export function pytestCollectorVersion(): string {
  return sha256Hex(
    Object.entries(collectorFiles)
      .map(([name, text]) => `${name}\u0000${text}`)
      .join("\u0000"),
  ).slice(0, 16);
}

export function writePytestCollectors(baseDirectory: string): PytestCollectorFiles {
  const directory = join(baseDirectory, `pytest-${pytestCollectorVersion()}`);
  writeCollectorFiles(directory, collectorFiles);
  return {
    directory,
    launcher: join(directory, "flameox_pytest_launcher.py"),
    plugin: join(directory, "flameox_pytest_plugin.py"),
  };
}

/** `pytest …`, `py.test …` or `python -m pytest …`; anything else is not a pytest run. */
export function isPytestCommand(argv: string[]): boolean {
  const head = basename(argv[0] ?? "");
  if (head.startsWith("pytest") || head === "py.test") return true;
  return head.startsWith("python") && argv[1] === "-m" && argv[2] === "pytest";
}

export function pytestCaptureCommand(input: {
  workload: PythonWorkloadInvocation;
  artifactDirectory: string;
  collectors: PytestCollectorFiles;
}): CaptureCommand {
  const { workload } = input;
  if (!isPytestCommand(workload.argv)) {
    throw planRefused(
      "capture",
      `The pytest adapter wraps 'pytest …' or 'python -m pytest …', not '${basename(workload.argv[0] ?? "")}'.`,
      {
        remediation: ["Declare the workload as `python -m pytest <args>` (or `pytest <args>`) and plan again."],
      },
    );
  }
  const events = join(input.artifactDirectory, pytestEventsFileName);
  return {
    argv: [workload.python, input.collectors.launcher, "--output", events, "--", ...workload.argv],
    cwd: workload.cwd,
    environment: { FLAMEOX_PYTEST_EVENTS_PATH: events },
    artifacts: [{ name: pytestEventsFileName, path: events, role: "primary", mediaType: "application/x-ndjson" }],
  };
}
