import type { CommandResult, CommandRunner, ProbeResult } from "../capture-adapter.ts";

const versionScript = [
  "import json, importlib.metadata as m",
  "out = {}",
  "for name in ('pytest', 'pytest-xdist'):",
  "    try: out[name] = m.version(name)",
  "    except m.PackageNotFoundError: out[name] = None",
  "print(json.dumps(out))",
].join("\n");

/** Asks the workload's interpreter (not flameox's) which pytest it has, since that is the one that will run. */
export async function probePytest(python: string, run: CommandRunner): Promise<ProbeResult> {
  const install = `${python} -m pip install pytest==9.2.0 pytest-xdist==3.8.0`;
  let result: CommandResult;
  try {
    result = await run([python, "-I", "-c", versionScript], { timeoutMs: 15_000 });
  } catch (error) {
    return {
      status: "unavailable",
      version: null,
      remediation: [`The interpreter ${python} could not be started (${String(error)}); fix the workload's python, then: ${install}`],
      limitations: [],
      details: { python },
    };
  }
  let versions: Record<string, string | null> = {};
  try {
    versions = JSON.parse(result.stdout.trim().split("\n").pop() ?? "{}") as Record<string, string | null>;
  } catch {
    versions = {};
  }
  const pytestVersion = versions.pytest ?? null;
  if (result.exitCode !== 0 || !pytestVersion) {
    return {
      status: "unavailable",
      version: null,
      remediation: [`Install pytest into the workload's interpreter: ${install}`],
      limitations: [],
      details: { python, stderr: result.stderr.slice(-500) },
    };
  }
  const xdist = versions["pytest-xdist"] ?? null;
  return {
    status: "available",
    version: `pytest ${pytestVersion}`,
    remediation: xdist ? [] : [`For -n/xdist runs: ${python} -m pip install pytest-xdist==3.8.0`],
    limitations: xdist ? [] : ["pytest-xdist is not installed; only serial runs can be captured."],
    details: { python, pytest: pytestVersion, xdist },
  };
}
